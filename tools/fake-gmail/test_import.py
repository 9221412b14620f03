"""users.messages.import (gmail-api.md §2.13, importing.py): the JSON and upload forms, the
query parameters, labels, threading, history, quota and the fault modes."""
import base64

from fgtestlib import API, ServerTestCase, assert_no_empty, check_schema


def raw(subject, msgid, extra="", date="Tue, 02 Jan 2018 10:00:00 +0000"):
    return ("From: alice@example.org\r\nTo: demo@hudson.test\r\nSubject: %s\r\nMessage-ID: <%s@old.example>\r\n"
            "Date: %s\r\n%s\r\nBody of %s\r\n" % (subject, msgid, date, extra, subject)).encode()


def b64(data):
    return base64.urlsafe_b64encode(data).decode()


class ImportTests(ServerTestCase):
    def faults(self, *rules):
        return self.srv.admin("POST", "faults", {"rules": list(rules)})

    def upload(self, data, params="uploadType=multipart", meta=b'{"labelIds": ["INBOX"]}', ctype=None):
        boundary = "b0undary"
        body = (b"--b0undary\r\nContent-Type: application/json\r\n\r\n" + meta +
                b"\r\n--b0undary\r\nContent-Type: message/rfc822\r\n\r\n" + data + b"\r\n--b0undary--\r\n")
        hdrs = {"Authorization": "Bearer " + self.srv.token(),
                "Content-Type": ctype or "multipart/related; boundary=%s" % boundary}
        if "uploadType=media" in params:
            body = data
            hdrs["Content-Type"] = ctype or "message/rfc822"
        return self.srv.request("POST", "/upload" + API + "messages/import?" + params, body, hdrs)

    def found(self, msgid):
        return self.srv.get("messages", {"q": "rfc822msgid:<%s@old.example> in:anywhere" % msgid}).get("messages", [])

    def test_json_import_stores_the_bytes_with_labels_and_the_header_date(self):
        start = self.srv.get("profile")["historyId"]
        status, msg = self.srv.api("POST", "messages/import", body={"raw": b64(raw("Old one", "j1")),
                                                                     "labelIds": ["INBOX", "UNREAD"]})
        self.assertEqual(status, 200, msg)
        check_schema(self, msg, "Message")
        assert_no_empty(self, msg)
        self.assertEqual(sorted(msg["labelIds"]), ["INBOX", "UNREAD"])
        got = self.srv.get("messages/" + msg["id"], {"format": "raw"})
        self.assertEqual(base64.urlsafe_b64decode(got["raw"] + "=="), raw("Old one", "j1"))
        self.assertEqual(got["internalDate"], "1514887200000")
        self.assertEqual([m["id"] for m in self.found("j1")], [msg["id"]])
        added = [r for r in self.srv.get("history", {"startHistoryId": start}).get("history", []) if r.get("messagesAdded")]
        self.assertEqual(added[-1]["messagesAdded"][0]["message"]["id"], msg["id"])

    def test_multipart_and_media_uploads(self):
        status, _, body = self.upload(raw("Uploaded", "u1"))
        self.assertEqual(status, 200, body)
        self.assertEqual(len(self.found("u1")), 1)
        status, _, body = self.upload(raw("Media", "m1"), params="uploadType=media")
        self.assertEqual(status, 200, body)
        media = self.found("m1")
        self.assertEqual(len(media), 1)   # a media upload carries no labels: archived
        self.assertNotIn("labelIds", self.srv.get("messages/" + media[0]["id"], {"format": "minimal"}))
        status, _, _ = self.upload(raw("Bad", "x1"), params="uploadType=resumable")
        self.assertEqual(status, 400)
        status, _, _ = self.upload(raw("Bad", "x2"), params="uploadType=media", ctype="text/plain")
        self.assertEqual(status, 400)

    def test_multipart_upload_stores_the_message_part_byte_for_byte(self):
        # A header longer than 78 characters, LF line ends and no final line end: a
        # re-serialized message/rfc822 part would refold, re-end and change them.
        long_id = "<" + "a" * 80 + "@import.hudson.invalid>"
        data = ("Message-ID: %s\nSubject: exact\n\nline one\nline two" % long_id).encode()
        status, _, body = self.upload(data)
        self.assertEqual(status, 200, body)
        got = self.srv.get("messages", {"q": "rfc822msgid:%s in:anywhere" % long_id}).get("messages", [])
        self.assertEqual(len(got), 1)
        raw_got = self.srv.get("messages/" + got[0]["id"], {"format": "raw"})["raw"]
        self.assertEqual(base64.urlsafe_b64decode(raw_got + "=="), data)

    def test_parameters_are_checked_and_applied(self):
        status, _ = self.srv.api("POST", "messages/import", {"internalDateSource": "tomorrow"},
                                 body={"raw": b64(raw("P", "p0"))})
        self.assertEqual(status, 400)
        status, _ = self.srv.api("POST", "messages/import", {"neverMarkSpam": "maybe"}, body={"raw": b64(raw("P", "p1"))})
        self.assertEqual(status, 400)
        status, msg = self.srv.api("POST", "messages/import", {"internalDateSource": "receivedTime"},
                                   body={"raw": b64(raw("P", "p2"))})
        self.assertEqual(status, 200)
        self.assertNotEqual(self.srv.get("messages/" + msg["id"], {"format": "minimal"})["internalDate"], "1514887200000")
        spam = raw("Spammy", "s1", extra="X-Fake-Spam: yes\r\n")
        status, msg = self.srv.api("POST", "messages/import", body={"raw": b64(spam), "labelIds": ["INBOX"]})
        self.assertEqual(msg["labelIds"], ["SPAM"])
        status, msg = self.srv.api("POST", "messages/import", {"neverMarkSpam": "true", "processForCalendar": "true"},
                                   body={"raw": b64(raw("Spammy", "s2", extra="X-Fake-Spam: yes\r\n")), "labelIds": ["INBOX"]})
        self.assertEqual(msg["labelIds"], ["INBOX"])
        status, msg = self.srv.api("POST", "messages/import", {"deleted": "true"}, body={"raw": b64(raw("Vault", "v1"))})
        self.assertEqual(status, 200)
        self.assertEqual(self.found("v1"), [])

    def test_refusals(self):
        for body in ({"raw": b64(raw("L", "l1")), "labelIds": ["Label_none"]},
                     {"raw": b64(raw("L", "l2")), "labelIds": ["DRAFT"]},
                     {"raw": b64(b"no headers at all")}, {"raw": ""}):
            status, err = self.srv.api("POST", "messages/import", body=body)
            self.assertEqual(status, 400, body)
            self.assertEqual(err["error"]["code"], 400)
        status, msg = self.srv.api("POST", "messages/import", body={"raw": b64(raw("Sent", "l3")), "labelIds": ["SENT"]})
        self.assertEqual((status, msg["labelIds"]), (200, ["SENT"]))

    def test_threading_needs_a_reference_and_the_subject(self):
        _, first = self.srv.api("POST", "messages/import", body={"raw": b64(raw("Trip plans", "t1"))})
        reply = raw("Re: Trip plans", "t2", extra="In-Reply-To: <t1@old.example>\r\n")
        _, second = self.srv.api("POST", "messages/import", body={"raw": b64(reply)})
        self.assertEqual(second["threadId"], first["threadId"])
        other = raw("Something else", "t3", extra="In-Reply-To: <t1@old.example>\r\n")
        _, third = self.srv.api("POST", "messages/import", body={"raw": b64(other)})
        self.assertNotEqual(third["threadId"], first["threadId"])

    def test_quota_and_faults(self):
        self.srv.api("POST", "messages/import", body={"raw": b64(raw("Q", "q1"))})
        last = [r for r in self.srv.admin("GET", "requests") if r.get("api") == "messages.import"][-1]
        self.assertEqual(last["units"], 25)
        # Applied, then the answer lost: the message is there all the same.
        self.faults({"path": "messages/import", "mode": "apply_then_status", "status": 503})
        status, _ = self.srv.api("POST", "messages/import", body={"raw": b64(raw("Lost", "f1"))})
        self.assertEqual(status, 503)
        self.assertEqual(len(self.found("f1")), 1)
        self.faults({"path": "messages/import", "status": 500})
        status, _, _ = self.upload(raw("Refused", "f2"))
        self.assertEqual(status, 500)
        self.assertEqual(self.found("f2"), [])

    def test_needs_a_scope_that_allows_it(self):
        status, _ = self.srv.api("POST", "messages/import", body={"raw": b64(raw("S", "sc1"))}, token="nonsense")
        self.assertEqual(status, 401)
