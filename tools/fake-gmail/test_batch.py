"""The batch endpoint (gmail-api.md §1 "Batch endpoint", §3, §9.6, §9.12)."""
import email
import email.policy
import json

from fgtestlib import ServerTestCase


def batch_body(calls, boundary="batch_test_boundary"):
    """calls: (content id, method, path, JSON body or None)."""
    out = []
    for cid, method, path, body in calls:
        inner = "%s %s HTTP/1.1\r\n" % (method, path)
        if body is not None:
            data = json.dumps(body)
            inner += "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
                len(data), data)
        else:
            inner += "\r\n"
        out.append("--%s\r\nContent-Type: application/http\r\nContent-ID: <%s>\r\n\r\n%s\r\n"
                   % (boundary, cid, inner))
    return ("".join(out) + "--%s--\r\n" % boundary).encode("utf-8")


def parse_response(content_type, body):
    """[(content id, status, headers, JSON or None)] from a multipart/mixed answer."""
    msg = email.message_from_bytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body,
                                   policy=email.policy.compat32)
    out = []
    for part in msg.get_payload():
        assert part.get_content_type() == "application/http"
        http = part.get_payload(decode=True)
        head, _, payload = http.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = dict(line.split(": ", 1) for line in lines[1:])
        assert int(headers["Content-Length"]) == len(payload)
        out.append((part["Content-ID"], status, headers, json.loads(payload) if payload else None))
    return out


class BatchTests(ServerTestCase):
    def post(self, calls, token=True, boundary="batch_test_boundary", body=None):
        headers = {"Content-Type": "multipart/mixed; boundary=%s" % boundary}
        if token:
            headers["Authorization"] = "Bearer " + self.srv.token()
        return self.srv.request("POST", "/batch/gmail/v1",
                                body if body is not None else batch_body(calls, boundary), headers)

    def ids(self, n):
        return [m["id"] for m in self.srv.get("messages", {"maxResults": n})["messages"]]

    def test_mixed_results_in_order(self):
        ids = self.ids(3)
        self.srv.admin("DELETE", "requests")
        calls = [("a1", "GET", "/gmail/v1/users/me/messages/%s?format=metadata" % ids[0], None),
                 ("a2", "GET", "/gmail/v1/users/me/messages/ffffffffffffffff", None),
                 ("a3", "POST", "/gmail/v1/users/me/messages/%s/modify" % ids[1],
                  {"addLabelIds": ["STARRED"]}),
                 ("a4", "GET", "/gmail/v1/users/me/messages/%s?format=minimal" % ids[2], None)]
        status, headers, body = self.post(calls)
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("multipart/mixed; boundary=batch_"))
        parts = parse_response(headers["content-type"], body)
        self.assertEqual([p[0] for p in parts], ["<response-a1>", "<response-a2>",
                                                 "<response-a3>", "<response-a4>"])
        self.assertEqual([p[1] for p in parts], [200, 404, 200, 200])
        self.assertEqual(parts[0][3]["id"], ids[0])
        self.assertIn("payload", parts[0][3])
        self.assertEqual(parts[1][3]["error"]["errors"][0]["reason"], "notFound")
        self.assertIn("STARRED", parts[2][3]["labelIds"])
        self.assertEqual(parts[3][2]["Content-Type"], "application/json; charset=UTF-8")
        log = self.srv.admin("GET", "requests")
        subs = [e for e in log if e["batch"]]
        self.assertEqual([e["units"] for e in subs], [5, 5, 5, 5])
        self.assertEqual([e["status"] for e in subs], [200, 404, 200, 200])
        self.assertEqual(log[-1]["path"], "/batch/gmail/v1")
        self.assertFalse(log[-1]["batch"])

    def test_alias_path_and_no_content_id(self):
        body = (b"--b\r\nContent-Type: application/http\r\n\r\n"
                b"GET /gmail/v1/users/me/profile\r\n\r\n--b--\r\n")
        status, headers, data = self.srv.request(
            "POST", "/batch", body, {"Content-Type": "multipart/mixed; boundary=b",
                                     "Authorization": "Bearer " + self.srv.token()})
        self.assertEqual(status, 200)
        parts = parse_response(headers["content-type"], data)
        self.assertEqual((parts[0][0], parts[0][1]), (None, 200))
        self.assertEqual(parts[0][3]["emailAddress"], "demo@hudson.test")

    def test_limits_and_malformed(self):
        calls = [("c%d" % i, "GET", "/gmail/v1/users/me/profile", None) for i in range(101)]
        status, _, body = self.post(calls)
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], 400)
        self.assertEqual(self.post(calls[:100])[0], 200)
        status, _, _ = self.srv.request("POST", "/batch/gmail/v1", b"junk",
                                        {"Content-Type": "application/json"})
        self.assertEqual(status, 400)

    def test_outer_token_is_used(self):
        calls = [("x", "GET", "/gmail/v1/users/me/profile", None)]
        status, headers, body = self.post(calls, token=False)
        self.assertEqual(status, 200)
        parts = parse_response(headers["content-type"], body)
        self.assertEqual(parts[0][1], 401)
        self.assertEqual(parts[0][3]["error"]["errors"][0]["reason"], "authError")

    def test_sub_request_faults_and_quota(self):
        ids = self.ids(4)
        self.srv.admin("POST", "faults", {"rules": [
            {"path": "messages/%s$" % ids[1], "status": 429, "retry_after": 3}]})
        calls = [("g%d" % i, "GET", "/gmail/v1/users/me/messages/%s" % mid, None)
                 for i, mid in enumerate(ids)]
        status, headers, body = self.post(calls)
        self.assertEqual(status, 200)
        parts = parse_response(headers["content-type"], body)
        self.assertEqual([p[1] for p in parts], [200, 429, 200, 200])
        self.assertEqual(parts[1][2]["Retry-After"], "3")
        self.assertEqual(parts[1][3]["error"]["errors"][0]["reason"], "rateLimitExceeded")
        # quota: each sub-request is charged on its own
        used = self.srv.admin("GET", "quota")["units"]
        self.srv.admin("POST", "set", {"quota_per_minute": used + 10})
        try:
            status, headers, body = self.post(calls)
            self.assertEqual([p[1] for p in parse_response(headers["content-type"], body)],
                             [200, 200, 429, 429])
        finally:
            self.srv.admin("POST", "set", {"quota_per_minute": 0})

    def test_shuffled_responses_pair_by_content_id(self):
        ids = self.ids(12)
        self.srv.admin("POST", "set", {"shuffle_batch": True})
        try:
            calls = [("item-%d" % i, "GET", "/gmail/v1/users/me/messages/%s?format=minimal" % m,
                      None) for i, m in enumerate(ids)]
            orders = set()
            for _ in range(3):
                status, headers, body = self.post(calls)
                parts = parse_response(headers["content-type"], body)
                for cid, st, _, obj in parts:
                    index = int(cid[len("<response-item-"):-1])
                    self.assertEqual(obj["id"], ids[index])
                orders.add(tuple(p[0] for p in parts))
            self.assertGreater(len(orders), 1)
        finally:
            self.srv.admin("POST", "set", {"shuffle_batch": False})
