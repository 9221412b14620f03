"""Fault injection: every mode, times/every/delay, /token faults (gmail-api.md §4, §10)."""
import base64
import http.client
import json
import socket
import time

from fgtestlib import API, ServerTestCase


class FaultTests(ServerTestCase):
    def faults(self, *rules):
        return self.srv.admin("POST", "faults", {"rules": list(rules)})

    def auth(self):
        return {"Authorization": "Bearer " + self.srv.token()}

    def test_status_with_retry_after_and_times(self):
        self.srv.token()
        self.faults({"method": "GET", "path": "/profile$", "status": 503, "times": 2,
                     "retry_after": 7})
        for _ in range(2):
            status, headers, body = self.srv.request("GET", API + "profile", headers=self.auth())
            self.assertEqual(status, 503)
            self.assertEqual(headers["retry-after"], "7")
            err = json.loads(body)["error"]
            self.assertEqual((err["code"], err["errors"][0]["reason"], err["status"]),
                             (503, "backendError", "UNAVAILABLE"))
        self.assertEqual(self.srv.api("GET", "profile")[0], 200)
        rule = self.srv.admin("GET", "faults")["rules"][0]
        self.assertEqual((rule["fired"], rule["remaining"]), (2, 0))

    def test_reasons_every_and_forever(self):
        self.srv.token()
        self.faults({"path": "/labels$", "status": 403, "reason": "userRateLimitExceeded",
                     "every": 2, "times": -1})
        statuses = [self.srv.api("GET", "labels")[0] for _ in range(6)]
        self.assertEqual(statuses, [200, 403, 200, 403, 200, 403])
        status, err = self.srv.api("GET", "labels", {"x": "1"})
        self.assertEqual(status, 200)
        _, err = self.srv.api("GET", "labels")
        self.assertEqual(err["error"]["errors"][0]["domain"], "usageLimits")
        self.faults({"path": "/labels$", "status": 403, "reason": "insufficientPermissions"})
        _, err = self.srv.api("GET", "labels")
        self.assertEqual(err["error"]["status"], "PERMISSION_DENIED")
        self.assertEqual(err["error"]["message"],
                         "Request had insufficient authentication scopes.")

    def test_drop(self):
        self.srv.token()
        self.faults({"path": "/profile$", "mode": "drop"})
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.srv.request("GET", API + "profile", headers=self.auth())
        self.assertEqual(self.srv.api("GET", "profile")[0], 200)
        entry = [e for e in self.srv.admin("GET", "requests") if e.get("fault")][-1]
        self.assertEqual((entry["fault"], entry["status"]), ("drop", 0))

    def test_hang(self):
        self.srv.token()
        self.faults({"path": "/profile$", "mode": "hang"})
        t0 = time.monotonic()
        with self.assertRaises((socket.timeout, TimeoutError)):
            self.srv.request("GET", API + "profile", headers=self.auth(), timeout=0.4)
        self.assertGreaterEqual(time.monotonic() - t0, 0.35)
        self.assertEqual(self.srv.api("GET", "profile")[0], 200)

    def test_truncate(self):
        self.srv.token()
        self.faults({"path": "/labels$", "mode": "truncate"})
        with self.assertRaises(http.client.IncompleteRead):
            self.srv.request("GET", API + "labels", headers=self.auth())

    def test_invalid_json_and_wrong_shape(self):
        self.srv.token()
        self.faults({"path": "/messages$", "mode": "invalid_json"},
                    {"path": "/messages$", "mode": "wrong_shape"})
        status, _, body = self.srv.request("GET", API + "messages", headers=self.auth())
        self.assertEqual(status, 200)
        with self.assertRaises(ValueError):
            json.loads(body)
        status, _, body = self.srv.request("GET", API + "messages", headers=self.auth())
        self.assertEqual(status, 200)
        self.assertIsInstance(json.loads(body), list)

    def test_wrong_type_and_oversized(self):
        self.srv.token()
        self.faults({"path": "/messages$", "mode": "wrong_type"},
                    {"path": "^/token$", "mode": "wrong_type"},
                    {"path": "/messages$", "mode": "oversized", "size": 1000},
                    {"path": "^/token$", "mode": "oversized", "size": 5000})
        status, _, body = self.srv.request("GET", API + "messages", headers=self.auth())
        self.assertEqual((status, json.loads(body)["id"]), (200, 42))
        form = (b"grant_type=refresh_token&refresh_token=demo-refresh-token"
                b"&client_id=hudson-demo-client&client_secret=hudson-demo-secret")
        ctype = {"Content-Type": "application/x-www-form-urlencoded"}
        status, _, body = self.srv.request("POST", "/token", form, ctype)
        self.assertEqual((status, json.loads(body)["access_token"]), (200, 1234567))
        status, _, body = self.srv.request("GET", API + "messages", headers=self.auth())
        self.assertEqual((status, len(json.loads(body)["filler"])), (200, 1000))
        status, _, body = self.srv.request("POST", "/token", form, ctype)
        token = json.loads(body)
        self.assertEqual((status, len(token["access_token"]), token["token_type"]), (200, 5005, "Bearer"))

    def test_body_answers_the_rules_json(self):
        self.srv.token()
        self.srv.admin("DELETE", "requests")
        page = {"historyId": "-1", "history": [{"id": "999999999999", "messagesAdded": [{"message": {"id": ".."}}]}]}
        self.faults({"path": "/history$", "mode": "body", "body": page},
                    {"path": "/labels$", "mode": "body", "body": None, "status": 503},
                    {"path": "/profile$", "mode": "body", "body": ["a", 1]})
        status, _, body = self.srv.request("GET", API + "history?startHistoryId=1", headers=self.auth())
        self.assertEqual((status, json.loads(body)), (200, page))
        status, _, body = self.srv.request("GET", API + "labels", headers=self.auth())
        self.assertEqual((status, body), (503, b"null"))
        status, _, body = self.srv.request("GET", API + "profile", headers=self.auth())
        self.assertEqual((status, json.loads(body)), (200, ["a", 1]))
        # Once the rules are spent, the real answers again; the log names the fault.
        self.assertEqual(self.srv.api("GET", "profile")[1]["emailAddress"], "demo@hudson.test")
        entry = [e for e in self.srv.admin("GET", "requests") if e.get("fault")][0]
        self.assertEqual((entry["fault"], entry["path"]), ("body", "/gmail/v1/users/me/history"))
        # A body rule without a body is refused.
        status, _, _ = self.srv.request("POST", "/_admin/faults", {"rules": [{"mode": "body"}]})
        self.assertEqual(status, 400)

    def test_body_in_a_batch_answers_only_its_own_part(self):
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 2})["messages"]]
        self.faults({"path": "/messages/%s$" % ids[0], "mode": "body", "body": {"id": "a/b", "internalDate": "-1"}})
        from test_batch import batch_body, parse_response
        calls = [("c%d" % n, "GET", "/gmail/v1/users/me/messages/%s?format=minimal" % i, None) for n, i in enumerate(ids)]
        status, headers, body = self.srv.request(
            "POST", "/batch/gmail/v1", batch_body(calls),
            {"Content-Type": "multipart/mixed; boundary=batch_test_boundary", **self.auth()})
        self.assertEqual(status, 200)
        parts = {cid: (code, answer) for cid, code, _, answer in parse_response(headers["content-type"], body)}
        self.assertEqual(parts["<response-c0>"], (200, {"id": "a/b", "internalDate": "-1"}))
        self.assertEqual((parts["<response-c1>"][0], parts["<response-c1>"][1]["id"]), (200, ids[1]))

    def test_apply_then_drop_send(self):
        self.srv.token()
        raw = (b"From: demo@hudson.test\r\nTo: x@example.org\r\nSubject: once\r\n"
               b"Message-ID: <apply-then-drop@hudson.test>\r\n\r\nhi\r\n")
        self.faults({"method": "POST", "path": "/messages/send$", "mode": "apply_then_drop"})
        body = {"raw": base64.urlsafe_b64encode(raw).decode()}
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.srv.request("POST", API + "messages/send", body, self.auth())
        found = self.srv.get("messages", {"q": "rfc822msgid:apply-then-drop@hudson.test"})
        self.assertEqual(len(found["messages"]), 1)

    def test_apply_then_drop_modify(self):
        self.srv.token()
        mid = self.srv.get("messages", {"maxResults": 1})["messages"][0]["id"]
        self.faults({"path": "/modify$", "mode": "apply_then_drop"})
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.srv.request("POST", API + "messages/%s/modify" % mid,
                             {"addLabelIds": ["Label_5"]}, self.auth())
        self.assertIn("Label_5", self.srv.get("messages/" + mid)["labelIds"])

    def test_apply_then_status_batch_modify(self):
        self.srv.token()
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 2})["messages"]]
        self.faults({"path": "/batchModify$", "mode": "apply_then_status", "status": 503})
        status, _ = self.srv.api("POST", "messages/batchModify", body={"ids": ids, "addLabelIds": ["Label_5"]})
        self.assertEqual(status, 503)
        for mid in ids:
            self.assertIn("Label_5", self.srv.get("messages/" + mid)["labelIds"])

    def test_token_fault_is_oauth_shaped(self):
        self.faults({"path": "^/token$", "status": 400, "reason": "invalid_grant",
                     "message": "Token has been expired or revoked."})
        status, _, body = self.srv.request(
            "POST", "/token", b"grant_type=refresh_token&refresh_token=demo-refresh-token"
            b"&client_id=hudson-demo-client&client_secret=hudson-demo-secret",
            {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body), {
            "error": "invalid_grant", "error_description": "Token has been expired or revoked."})
        self.faults({"path": "^/token$", "status": 503})
        status, _, body = self.srv.request("POST", "/token", b"grant_type=refresh_token")
        self.assertEqual((status, json.loads(body)["error"]), (503, "temporarily_unavailable"))

    def test_delay(self):
        self.srv.token()
        self.faults({"path": "/profile$", "delay_ms": 200})
        t0 = time.monotonic()
        self.assertEqual(self.srv.api("GET", "profile")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.2)
        self.faults({"path": "/profile$", "delay_ms": 100, "status": 500})
        t0 = time.monotonic()
        self.assertEqual(self.srv.api("GET", "profile")[0], 500)
        self.assertGreaterEqual(time.monotonic() - t0, 0.1)

    def test_bad_rules_rejected(self):
        for rules in ([{"mode": "explode"}], [{"path": "("}], [{"bogus": 1}], [{"times": "x"}],
                      "notalist"):
            status, _, _ = self.srv.request("POST", "/_admin/faults", {"rules": rules})
            self.assertEqual(status, 400, rules)
        self.srv.admin("DELETE", "faults")
        self.assertEqual(self.srv.admin("GET", "faults"), {"rules": []})


class ProbabilityTests(ServerTestCase):
    """`probability` and `seed`: occasional faults for a long run (bench.py's paced step)."""

    def tearDown(self):
        self.srv.admin("DELETE", "faults")

    def statuses(self, rule, count):
        self.srv.admin("POST", "faults", {"rules": [rule]})
        return [self.srv.api("GET", "labels")[0] for _ in range(count)]

    def test_seeded_rule_fires_at_about_its_rate_and_repeats(self):
        self.srv.token()
        rule = {"path": "/labels$", "status": 503, "times": -1, "probability": 0.25, "seed": 7}
        first = self.statuses(rule, 200)
        self.assertEqual(set(first), {200, 503})
        self.assertTrue(25 <= first.count(503) <= 75, first.count(503))
        self.assertEqual(self.statuses(rule, 200), first)   # the same seed, the same faults
        described = self.srv.admin("GET", "faults")["rules"][0]
        self.assertEqual((described["matched"], described["fired"]), (200, first.count(503)))

    def test_probability_bounds(self):
        self.srv.token()
        self.assertEqual(set(self.statuses({"path": "/labels$", "status": 429, "times": -1,
                                            "probability": 0}, 20)), {200})
        self.assertEqual(set(self.statuses({"path": "/labels$", "status": 429, "times": -1,
                                            "probability": 1}, 5)), {429})
        for bad in (-0.1, 1.5, "0.5", True, None):
            status, _, _ = self.srv.request("POST", "/_admin/faults", {"rules": [
                {"path": "/labels$", "probability": bad}]})
            self.assertEqual(status, 400, bad)
        status, _, _ = self.srv.request("POST", "/_admin/faults", {"rules": [
            {"path": "/labels$", "probability": 0.5, "seed": "x"}]})
        self.assertEqual(status, 400)
