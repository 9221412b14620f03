"""messages.list / get / attachments.get over real HTTP (gmail-api.md §2.2-2.4, §6)."""
import base64
import calendar
import json

from fakegmail import mime
from fgtestlib import NOW, ServerTestCase, assert_no_empty, check_schema


class ListTests(ServerTestCase):
    def all_ids(self, **params):
        ids, token, pages = [], None, 0
        while True:
            p = dict(params, maxResults=params.get("maxResults", 37))
            if token:
                p["pageToken"] = token
            page = self.srv.get("messages", p)
            ids += [m["id"] for m in page.get("messages", [])]
            token = page.get("nextPageToken")
            pages += 1
            if not token:
                return ids, pages

    def test_default_page_shape(self):
        page = self.srv.get("messages")
        check_schema(self, page, "ListMessagesResponse")
        self.assertEqual(len(page["messages"]), 100)
        self.assertEqual(set(page["messages"][0]), {"id", "threadId"})
        self.assertIn("nextPageToken", page)
        self.assertIsInstance(page["resultSizeEstimate"], int)

    def test_newest_first_and_paging_covers_everything(self):
        state = self.srv.admin("GET", "state")["messages"]
        expected = [m["id"] for m in sorted(
            state, key=lambda m: (int(m["internalDate"]), m["id"]), reverse=True)
            if not {"SPAM", "TRASH"} & set(m["labelIds"])]
        ids, pages = self.all_ids()
        self.assertEqual(ids, expected)
        self.assertGreater(pages, 5)
        self.assertEqual(self.srv.get("messages")["resultSizeEstimate"], len(expected))

    def test_include_spam_trash(self):
        every, _ = self.all_ids(includeSpamTrash="true")
        self.assertEqual(len(every), len(self.srv.admin("GET", "state")["messages"]))

    def test_max_results_limits(self):
        visible = [m for m in self.srv.admin("GET", "state")["messages"]
                   if not {"SPAM", "TRASH"} & set(m["labelIds"])]
        page = self.srv.get("messages", {"maxResults": 500})
        self.assertEqual(len(page["messages"]), len(visible))      # 300 demo messages
        self.assertNotIn("nextPageToken", page)
        for bad in ("501", "0", "x"):
            status, body = self.srv.api("GET", "messages", {"maxResults": bad})
            self.assertEqual(status, 400, bad)
            self.assertEqual(body["error"]["status"], "INVALID_ARGUMENT")

    def test_label_ids_must_all_match(self):
        ids, _ = self.all_ids(labelIds=["INBOX", "UNREAD"])
        state = {m["id"]: m for m in self.srv.admin("GET", "state")["messages"]}
        self.assertTrue(ids)
        for i in ids:
            self.assertTrue({"INBOX", "UNREAD"} <= set(state[i]["labelIds"]))
        inbox, _ = self.all_ids(labelIds="INBOX")
        self.assertGreater(len(inbox), len(ids))

    def test_page_token_survives_inserts(self):
        first = self.srv.get("messages", {"maxResults": 50})
        raw = "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: new\r\n\r\nhi\r\n"
        new = self.srv.admin("POST", "insert", {"raw": raw})
        second = self.srv.get("messages", {"maxResults": 50, "pageToken": first["nextPageToken"]})
        ids1 = [m["id"] for m in first["messages"]]
        ids2 = [m["id"] for m in second["messages"]]
        self.assertFalse(set(ids1) & set(ids2))
        self.assertNotIn(new["id"], ids2)
        self.assertEqual(self.srv.get("messages", {"maxResults": 1})["messages"][0]["id"],
                         new["id"])
        self.srv.admin("POST", "delete", {"id": new["id"]})

    def test_bad_page_token(self):
        status, body = self.srv.api("GET", "messages", {"pageToken": "garbage"})
        self.assertEqual(status, 400)
        token = self.srv.get("messages", {"maxResults": 5})["nextPageToken"]
        status, _ = self.srv.api("GET", "messages", {"pageToken": token, "q": "is:unread"})
        self.assertEqual(status, 400)

    def test_query_dates(self):
        state = self.srv.admin("GET", "state")["messages"]
        after = NOW - 30 * 86400
        ids, _ = self.all_ids(q="after:%d" % after)
        want = {m["id"] for m in state if int(m["internalDate"]) >= after * 1000
                and not {"SPAM", "TRASH"} & set(m["labelIds"])}
        self.assertEqual(set(ids), want)
        ids, _ = self.all_ids(q="after:2025/01/01 before:2025/02/01")
        lo, hi = (calendar.timegm((2025, 1, 1, 0, 0, 0)) * 1000,
                  calendar.timegm((2025, 2, 1, 0, 0, 0)) * 1000)
        want = {m["id"] for m in state if lo <= int(m["internalDate"]) < hi
                and not {"SPAM", "TRASH"} & set(m["labelIds"])}
        self.assertEqual(set(ids), want)
        self.assertTrue(want)

    def test_query_operators(self):
        state = self.srv.admin("GET", "state")["messages"]
        one = state[7]
        for q in ("rfc822msgid:%s" % one["messageId"], "rfc822msgid:%s" % one["messageId"][1:-1]):
            self.assertEqual([m["id"] for m in self.srv.get(
                "messages", {"q": q, "includeSpamTrash": "true"})["messages"]], [one["id"]])
        sent, _ = self.all_ids(q="in:sent")
        self.assertEqual(set(sent), {m["id"] for m in state if "SENT" in m["labelIds"]
                                     and "TRASH" not in m["labelIds"]})
        travel, _ = self.all_ids(q="label:travel-2026")
        quoted, _ = self.all_ids(q='label:"Travel/2026"')
        self.assertEqual(travel, quoted)
        self.assertEqual(set(travel), {m["id"] for m in state if "Label_3" in m["labelIds"]
                                       and not {"SPAM", "TRASH"} & set(m["labelIds"])})
        trash, _ = self.all_ids(q="in:trash")
        self.assertEqual(set(trash), {m["id"] for m in state if "TRASH" in m["labelIds"]})
        starred_unread, _ = self.all_ids(q="is:starred is:unread")
        for i in starred_unread:
            self.assertTrue({"STARRED", "UNREAD"} <= set(
                next(m for m in state if m["id"] == i)["labelIds"]))
        github, _ = self.all_ids(q="from:notifications@github.com")
        self.assertTrue(github)
        mine, _ = self.all_ids(q="from:me")
        self.assertEqual(set(mine), set(sent))

    def test_invalid_query(self):
        for q in ("hello", "subject:x", "in:nowhere", "after:yesterday", "is:muted"):
            status, body = self.srv.api("GET", "messages", {"q": q})
            self.assertEqual(status, 400, q)
            self.assertEqual(body["error"]["message"], "Invalid query")
            self.assertEqual(body["error"]["errors"][0]["reason"], "invalidArgument")


class GetTests(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.state = cls.srv.admin("GET", "state")["messages"]

    def test_minimal(self):
        m = self.srv.get("messages/" + self.state[0]["id"], {"format": "minimal"})
        self.assertEqual(set(m), {"id", "threadId", "labelIds", "snippet", "historyId",
                                  "internalDate", "sizeEstimate"})
        check_schema(self, m, "Message")
        self.assertIsInstance(m["historyId"], str)
        self.assertIsInstance(m["internalDate"], str)
        self.assertIsInstance(m["sizeEstimate"], int)

    def test_full_is_default_and_matches_schema(self):
        for entry in self.state:
            m = self.srv.get("messages/" + entry["id"])
            check_schema(self, m, "Message")
            assert_no_empty(self, m)
            self.assertNotIn("raw", m)
            for part in mime.walk(m["payload"]):
                self.assertIn("partId", part)
                self.assertIn("filename", part)
                if part["mimeType"].startswith("multipart/"):
                    self.assertEqual(part["body"], {"size": 0})
                    self.assertTrue(part["parts"])
                elif "attachmentId" in part["body"]:
                    self.assertNotIn("data", part["body"])
                elif part["body"].get("data"):
                    self.assertNotIn("=", part["body"]["data"])
                    self.assertEqual(len(mime.b64_lenient(part["body"]["data"])),
                                     part["body"]["size"])

    def test_metadata_headers(self):
        mid = self.state[3]["id"]
        m = self.srv.get("messages/" + mid, {"format": "metadata"})
        self.assertEqual(set(m["payload"]), {"partId", "mimeType", "filename", "headers"})
        full_names = [h["name"] for h in m["payload"]["headers"]]
        m = self.srv.get("messages/" + mid, {"format": "metadata",
                                             "metadataHeaders": ["subject", "FROM", "Date"]})
        names = [h["name"] for h in m["payload"]["headers"]]
        self.assertEqual(names, [n for n in full_names
                                 if n.lower() in ("subject", "from", "date")])
        self.assertNotIn("body", m["payload"])

    def test_raw_and_size_estimate(self):
        mid = self.state[5]["id"]
        m = self.srv.get("messages/" + mid, {"format": "raw"})
        self.assertNotIn("payload", m)
        self.assertEqual(len(m["raw"]) % 4, 0)        # padded base64url (§8)
        raw = base64.urlsafe_b64decode(m["raw"])
        self.assertEqual(len(raw), m["sizeEstimate"])
        self.assertIn(b"Message-ID: " + self.state[5]["messageId"].encode(), raw)

    def test_unknown_message_and_format(self):
        status, body = self.srv.api("GET", "messages/ffffffffffffffff")
        self.assertEqual(status, 404)
        self.assertEqual(body["error"]["errors"][0]["reason"], "notFound")
        self.assertEqual(body["error"]["status"], "NOT_FOUND")
        status, _ = self.srv.api("GET", "messages/" + self.state[0]["id"], {"format": "bogus"})
        self.assertEqual(status, 400)

    def test_attachments(self):
        found = 0
        for entry in self.state:
            m = self.srv.get("messages/" + entry["id"])
            for part in mime.walk(m["payload"]):
                att_id = part["body"].get("attachmentId")
                if not att_id:
                    continue
                self.assertGreater(len(att_id), 60)
                body = self.srv.get("messages/%s/attachments/%s" % (entry["id"], att_id))
                check_schema(self, body, "MessagePartBody")
                self.assertEqual(set(body), {"size", "data"})
                self.assertNotIn("=", body["data"])
                self.assertEqual(len(mime.b64_lenient(body["data"])), part["body"]["size"])
                again = self.srv.get("messages/" + entry["id"])
                self.assertIn(att_id, json.dumps(again))     # stable per (message, part)
                found += 1
        self.assertGreater(found, 5)
        status, _ = self.srv.api("GET", "messages/%s/attachments/nope" % self.state[0]["id"])
        self.assertEqual(status, 404)

    def test_demo_mime_variety(self):
        kinds, charsets = set(), set()
        for entry in self.state:
            m = self.srv.get("messages/" + entry["id"])
            for part in mime.walk(m["payload"]):
                kinds.add(part["mimeType"])
                for h in part.get("headers", []):
                    if h["name"].lower() == "content-type" and "charset" in h["value"]:
                        charsets.add(h["value"].split("charset=")[1].strip('"').upper())
        for kind in ("text/plain", "text/html", "multipart/alternative", "multipart/mixed",
                     "multipart/related", "message/rfc822", "image/png", "application/pdf"):
            self.assertIn(kind, kinds)
        self.assertTrue({"UTF-8", "ISO-8859-1", "SHIFT_JIS"} <= charsets, charsets)
