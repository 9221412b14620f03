"""Profile, labels, threads, auth errors, quota, latency and the request log
(gmail-api.md §2.1, §2.10, §2.11, §3, §4)."""
import http.client
import json
import threading
import time

import unittest

from fgtestlib import API, DISCOVERY, ServerTestCase, assert_no_empty, check_schema, discovery

INVALID_CREDENTIALS = {"error": {
    "code": 401, "message": "Request had invalid authentication credentials.",
    "errors": [{"message": "Invalid Credentials", "domain": "global", "reason": "authError",
                "location": "Authorization", "locationType": "header"}],
    "status": "UNAUTHENTICATED"}}
SYSTEM = ["INBOX", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "SENT", "DRAFT", "CHAT",
          "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
          "CATEGORY_FORUMS"]


class DiscoveryTests(unittest.TestCase):
    def test_discovery_document_is_used(self):
        doc = discovery()
        self.assertIn("Message", doc["schemas"], DISCOVERY)
        self.assertEqual(doc["schemas"]["Message"]["properties"]["historyId"]["format"],
                         "uint64")


class ProfileAndAuthTests(ServerTestCase):
    def test_profile(self):
        p = self.srv.get("profile")
        check_schema(self, p, "Profile")
        self.assertEqual(p["emailAddress"], "demo@hudson.test")
        self.assertEqual(p["messagesTotal"], 300)
        self.assertGreater(p["threadsTotal"], 50)
        self.assertGreaterEqual(int(p["historyId"]), 100000)
        auth = {"Authorization": "Bearer " + self.srv.token()}
        status, _, body = self.srv.request("GET", "/gmail/v1/users/demo@hudson.test/profile",
                                           headers=auth)
        self.assertEqual(json.loads(body), p)
        status, _, body = self.srv.request("GET", "/gmail/v1/users/other@example.org/profile",
                                           headers=auth)
        self.assertEqual(status, 403)

    def test_unauthenticated(self):
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic eDp5"}):
            status, hdrs, body = self.srv.request("GET", API + "profile", headers=headers)
            self.assertEqual(status, 401)
            self.assertEqual(json.loads(body), INVALID_CREDENTIALS)
            self.assertIn("www-authenticate", hdrs)

    def test_expired_token(self):
        token = self.srv.token(fresh=True)
        self.assertEqual(self.srv.api("GET", "profile", token=token)[0], 200)
        self.srv.admin("POST", "expire-access-tokens")
        status, body = self.srv.api("GET", "profile", token=token)
        self.assertEqual((status, body), (401, INVALID_CREDENTIALS))
        self.assertEqual(self.srv.api("GET", "profile", token=self.srv.token(fresh=True))[0], 200)

    def test_unknown_method(self):
        status, body = self.srv.api("GET", "nothing/here")
        self.assertEqual(status, 404)
        self.assertEqual(body["error"]["status"], "NOT_FOUND")


class LabelTests(ServerTestCase):
    def test_list(self):
        labels = self.srv.get("labels")["labels"]
        for entry in labels:
            check_schema(self, entry, "Label")
        by_id = {e["id"]: e for e in labels}
        for sid in SYSTEM:
            self.assertEqual(by_id[sid]["type"], "system")
            self.assertEqual(by_id[sid]["name"], sid)
        users = {e["name"]: e for e in labels if e["type"] == "user"}
        self.assertEqual({n: e["id"] for n, e in users.items()},
                         {"Work": "Label_1", "Receipts": "Label_2", "Travel/2026": "Label_3",
                          "Family": "Label_4", "Newsletters": "Label_5"})
        self.assertEqual(users["Work"]["messageListVisibility"], "show")
        self.assertEqual(users["Work"]["labelListVisibility"], "labelShow")
        self.assertNotIn("messagesTotal", users["Work"])

    def test_get_counts(self):
        state = self.srv.admin("GET", "state")["messages"]
        for lid in ("INBOX", "Label_1", "UNREAD"):
            label = self.srv.get("labels/" + lid)
            check_schema(self, label, "Label")
            having = [m for m in state if lid in m["labelIds"]]
            self.assertEqual(label["messagesTotal"], len(having))
            self.assertEqual(label["messagesUnread"],
                             len([m for m in having if "UNREAD" in m["labelIds"]]))
            self.assertEqual(label["threadsTotal"], len({m["threadId"] for m in having}))
        self.assertEqual(self.srv.api("GET", "labels/Label_404")[0], 404)

    def test_create_patch_delete(self):
        status, made = self.srv.api("POST", "labels", body={
            "name": "Projects/Hudson", "color": {"textColor": "#000000",
                                                 "backgroundColor": "#16a766"}})
        self.assertEqual(status, 200)
        check_schema(self, made, "Label")
        self.assertEqual(made["type"], "user")
        self.assertTrue(made["id"].startswith("Label_"))
        status, err = self.srv.api("POST", "labels", body={"name": "projects/hudson"})
        self.assertEqual(status, 409)
        self.assertEqual(err["error"]["status"], "ALREADY_EXISTS")
        self.assertEqual(self.srv.api("POST", "labels", body={})[0], 400)
        _, patched = self.srv.api("PATCH", "labels/" + made["id"], body={
            "name": "Projects/Hudson 2", "labelListVisibility": "labelHide"}, expect=200)
        self.assertEqual(patched["name"], "Projects/Hudson 2")
        self.assertEqual(patched["color"]["backgroundColor"], "#16a766")
        self.assertEqual(self.srv.api("PATCH", "labels/INBOX", body={"name": "x"})[0], 400)
        listed = [e for e in self.srv.get("labels")["labels"] if e["id"] == made["id"]]
        self.assertEqual(listed[0]["color"], patched["color"])
        # put it on a message, then delete it: labelRemoved history
        mid = self.srv.get("messages", {"maxResults": 1})["messages"][0]["id"]
        self.srv.api("POST", "messages/%s/modify" % mid, body={"addLabelIds": [made["id"]]},
                     expect=200)
        start = self.srv.get("profile")["historyId"]
        status, _, body = self.srv.request("DELETE", API + "labels/" + made["id"],
                                           headers={"Authorization": "Bearer " + self.srv.token()})
        self.assertEqual((status, body), (204, b""))
        history = self.srv.get("history", {"startHistoryId": start})["history"]
        self.assertEqual(history[0]["labelsRemoved"][0]["labelIds"], [made["id"]])
        self.assertNotIn(made["id"], self.srv.get("messages/" + mid).get("labelIds", []))
        self.assertEqual(self.srv.api("DELETE", "labels/INBOX")[0], 400)
        self.assertEqual(self.srv.api("DELETE", "labels/" + made["id"])[0], 404)


class ThreadTests(ServerTestCase):
    def test_get_thread(self):
        state = self.srv.admin("GET", "state")["messages"]
        sizes = {}
        for m in state:
            sizes.setdefault(m["threadId"], []).append(m)
        tid = max(sizes, key=lambda t: len(sizes[t]))
        thread = self.srv.get("threads/" + tid)
        check_schema(self, thread, "Thread")
        assert_no_empty(self, thread)
        self.assertEqual(set(thread), {"id", "historyId", "messages"})
        dates = [int(m["internalDate"]) for m in thread["messages"]]
        self.assertEqual(dates, sorted(dates))
        self.assertEqual(len(thread["messages"]), len(sizes[tid]))
        self.assertGreaterEqual(len(thread["messages"]), 3)
        self.assertEqual(thread["historyId"], max(m["historyId"] for m in thread["messages"]))
        subjects = [next(h["value"] for h in m["payload"]["headers"] if h["name"] == "Subject")
                    for m in thread["messages"]]
        self.assertTrue(all(s.startswith("Re: ") for s in subjects[1:]), subjects)
        minimal = self.srv.get("threads/" + tid, {"format": "minimal"})
        self.assertNotIn("payload", minimal["messages"][0])
        self.assertEqual(self.srv.api("GET", "threads/ffff0000ffff0000")[0], 404)
        self.assertEqual(self.srv.api("GET", "threads/" + tid, {"format": "raw"})[0], 400)

    def test_list_threads(self):
        page = self.srv.get("threads", {"maxResults": 10, "labelIds": "INBOX"})
        check_schema(self, page, "ListThreadsResponse")
        nxt = self.srv.get("threads", {"maxResults": 10, "labelIds": "INBOX",
                                       "pageToken": page["nextPageToken"]})
        ids = [t["id"] for t in page["threads"] + nxt["threads"]]
        self.assertEqual(len(ids), len(set(ids)))


class QuotaAndLogTests(ServerTestCase):
    def tearDown(self):
        self.srv.admin("POST", "set", {"quota_per_minute": 0, "latency_ms": 0, "latency_ms_max": 0})
        self.srv.admin("DELETE", "faults")

    def test_units_and_log(self):
        self.srv.token()
        self.srv.admin("DELETE", "requests")
        self.srv.get("profile")
        self.srv.get("messages", {"maxResults": 2})
        self.srv.get("labels")
        self.srv.get("history", {"startHistoryId": "100000"})
        log = self.srv.admin("GET", "requests")
        self.assertEqual([e["units"] for e in log], [1, 5, 1, 2])
        for e in log:
            self.assertEqual(set(e) - {"api"}, {"method", "path", "query", "status", "units",
                                                "batch", "time"})
            self.assertFalse(e["batch"])
        self.assertEqual(log[1]["query"], "maxResults=2")
        self.assertGreaterEqual(self.srv.admin("GET", "quota")["units"], 9)

    def test_quota_exceeded(self):
        self.srv.token()
        used = self.srv.admin("GET", "quota")["units"]
        self.srv.admin("POST", "set", {"quota_per_minute": used + 12})
        self.assertEqual(self.srv.api("GET", "messages", {"maxResults": 1})[0], 200)
        self.assertEqual(self.srv.api("GET", "messages", {"maxResults": 1})[0], 200)
        status, hdrs, body = self.srv.request("GET", API + "messages?maxResults=1", headers={
            "Authorization": "Bearer " + self.srv.token()})
        self.assertEqual(status, 429)
        self.assertGreaterEqual(int(hdrs["retry-after"]), 1)
        err = json.loads(body)["error"]
        self.assertEqual(err["errors"][0]["reason"], "rateLimitExceeded")
        self.assertEqual(err["status"], "RESOURCE_EXHAUSTED")
        self.assertEqual(self.srv.api("GET", "profile")[0], 200)      # 1 unit still fits
        self.assertEqual(self.srv.admin("GET", "requests")[-2]["units"], 0)

    def test_latency(self):
        self.srv.token()
        self.srv.admin("POST", "set", {"latency_ms": 150})
        t0 = time.monotonic()
        self.srv.get("profile")
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)

    def test_latency_range(self):
        self.srv.token()
        settings = self.srv.admin("POST", "set", {"latency_ms": 20, "latency_ms_max": 120})
        self.assertEqual((settings["latency_ms"], settings["latency_ms_max"]), (20, 120))
        draws = [self.srv.app.latency() for _ in range(400)]
        self.assertTrue(all(0.02 <= d <= 0.12 for d in draws))
        self.assertLess(min(draws), 0.04)
        self.assertGreater(max(draws), 0.10)
        t0 = time.monotonic()
        self.srv.get("profile")
        self.assertGreaterEqual(time.monotonic() - t0, 0.02)
        self.srv.admin("POST", "set", {"latency_ms_max": 0})
        self.assertEqual({self.srv.app.latency() for _ in range(20)}, {0.02})
        status, _, _ = self.srv.request("POST", "/_admin/set", {"latency_ms_max": -1})
        self.assertEqual(status, 400)

    def test_totals_survive_clearing_the_log(self):
        self.srv.token()
        before = self.srv.admin("GET", "quota")["total"]
        self.srv.get("profile")
        self.srv.get("messages", {"maxResults": 2})
        self.srv.admin("DELETE", "requests")
        self.srv.admin("POST", "faults", {"rules": [{"path": "/labels$", "status": 503}]})
        self.assertEqual(self.srv.api("GET", "labels")[0], 503)
        after = self.srv.admin("GET", "quota")["total"]
        self.assertEqual(after["units"] - before["units"], 6)
        self.assertEqual(after["requests"] - before["requests"], 3)
        self.assertEqual(after["status"].get("503", 0) - before["status"].get("503", 0), 1)
        self.assertEqual(after["api"]["messages.list"] - before["api"].get("messages.list", 0), 1)


class ConnectionTests(ServerTestCase):
    def test_keep_alive_and_content_length(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=5)
        auth = {"Authorization": "Bearer " + self.srv.token()}
        mid = self.srv.get("messages", {"maxResults": 1})["messages"][0]["id"]
        calls = [("GET", API + "profile", None, auth, 200),
                 ("GET", API + "profile", None, {}, 401),
                 ("POST", API + "messages/batchModify",
                  json.dumps({"ids": [mid], "addLabelIds": ["STARRED"]}),
                  dict(auth, **{"Content-Type": "application/json"}), 204),
                 ("GET", API + "messages/" + mid, None, auth, 200),
                 ("GET", "/nowhere", None, auth, 404)]
        sock = None
        for method, path, body, headers, want in calls:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.assertEqual(resp.status, want, path)
            self.assertEqual(int(resp.getheader("Content-Length")), len(data))
            if sock is not None:
                self.assertIs(conn.sock, sock)          # same connection throughout
            sock = conn.sock
        conn.close()

    def test_parallel_clients(self):
        token = self.srv.token()
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 40})["messages"]]
        errors = []

        def worker(chunk):
            try:
                for mid in chunk:
                    status, body = self.srv.api("GET", "messages/" + mid, token=token)
                    assert status == 200 and body["id"] == mid, status
                    self.srv.api("POST", "messages/%s/modify" % mid, token=token,
                                 body={"addLabelIds": ["Label_1"]}, expect=200)
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
        threads = [threading.Thread(target=worker, args=(ids[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(errors, [])
        history = self.srv.get("history", {"startHistoryId": "100000", "maxResults": 500})
        ids_seen = [int(r["id"]) for r in history["history"]]
        self.assertEqual(len(ids_seen), len(set(ids_seen)))
