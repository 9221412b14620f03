"""users.settings.filters (gmail-api.md §2.14): list, get, create, delete with the
discovery document's shapes, the admin seed, scopes, the request log and faults."""
from fgtestlib import ServerTestCase, assert_no_empty, check_schema

SEED = [
    {"id": "f-news", "criteria": {"from": "news@example.org", "hasAttachment": False},
     "action": {"removeLabelIds": ["INBOX", "UNREAD"], "addLabelIds": ["Label_5"]}},
    {"criteria": {"query": "invoice", "size": 1000, "sizeComparison": "larger"},
     "action": {"addLabelIds": ["STARRED"], "forward": "me@example.net"}},
]


class FilterTests(ServerTestCase):
    def setUp(self):
        super().setUp()
        self.srv.admin("POST", "filters", {"filter": []})
        self.srv.admin("POST", "scope", {"refresh_token": "demo-refresh-token",
                                         "scope": "https://www.googleapis.com/auth/gmail.modify"})
        self.srv.token(fresh=True)

    def test_empty_list_has_no_key(self):
        status, body = self.srv.api("GET", "settings/filters")
        self.assertEqual((status, body), (200, {}))

    def test_seed_list_and_get(self):
        stored = self.srv.admin("POST", "filters", {"filter": SEED})["filter"]
        self.assertEqual(stored[0]["id"], "f-news")
        # Empty values are left out, as Google leaves them out (§1).
        self.assertNotIn("hasAttachment", stored[0]["criteria"])
        listed = self.srv.get("settings/filters")
        check_schema(self, listed, "ListFiltersResponse")
        assert_no_empty(self, listed)
        self.assertEqual([f["id"] for f in listed["filter"]], ["f-news", stored[1]["id"]])
        one = self.srv.get("settings/filters/f-news")
        check_schema(self, one, "Filter")
        self.assertEqual(one["action"]["removeLabelIds"], ["INBOX", "UNREAD"])
        self.assertEqual(self.srv.api("GET", "settings/filters/nope")[0], 404)

    def test_create_and_delete_need_settings_basic(self):
        body = {"criteria": {"subject": "hello"}, "action": {"addLabelIds": ["STARRED"]}}
        status, err = self.srv.api("POST", "settings/filters", body=body)
        self.assertEqual(status, 403, err)
        self.assertEqual(err["error"]["errors"][0]["reason"], "insufficientPermissions")
        self.srv.admin("POST", "scope", {"refresh_token": "demo-refresh-token",
                                         "scope": "https://www.googleapis.com/auth/gmail.settings.basic"})
        token = self.srv.token(fresh=True)
        status, made = self.srv.api("POST", "settings/filters", body=body, token=token)
        self.assertEqual(status, 200, made)
        check_schema(self, made, "Filter")
        self.assertEqual(made["criteria"], {"subject": "hello"})
        self.assertEqual(self.srv.api("DELETE", "settings/filters/" + made["id"], token=token)[0], 204)
        self.assertEqual(self.srv.api("DELETE", "settings/filters/" + made["id"], token=token)[0], 404)

    def test_bad_filters_are_refused(self):
        for bad in ([{"criteria": {}, "action": {"addLabelIds": ["STARRED"]}}],
                    [{"criteria": {"from": "a"}, "action": {}}],
                    [{"criteria": {"from": "a"}, "action": {"addLabelIds": ["Label_404"]}}],
                    [{"criteria": {"size": "big"}, "action": {"addLabelIds": ["STARRED"]}}],
                    [{"criteria": {"colour": "red"}, "action": {"addLabelIds": ["STARRED"]}}]):
            status, _, _ = self.srv.request("POST", "/_admin/filters", {"filter": bad})
            self.assertEqual(status, 400, bad)

    def test_logged_charged_and_faulted(self):
        self.srv.admin("POST", "filters", {"filter": SEED})
        self.srv.admin("DELETE", "requests")
        self.srv.admin("POST", "faults", {"rules": [
            {"method": "GET", "path": "/settings/filters$", "status": 503, "times": 1}]})
        self.assertEqual(self.srv.api("GET", "settings/filters")[0], 503)
        self.assertEqual(self.srv.api("GET", "settings/filters")[0], 200)
        log = [e for e in self.srv.admin("GET", "requests") if e["path"].endswith("/settings/filters")]
        self.assertEqual([(e["status"], e["units"]) for e in log][-1], (200, 1))
        self.assertEqual(log[-1].get("api"), "settings.filters.list")
