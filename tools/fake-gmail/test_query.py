"""The structure and size operators of ``q`` (gmail-api.md §6, §8): ``has:attachment``,
``filename:``, ``larger:``, ``smaller:``, ``size:``, over real HTTP."""
from fakegmail import mime
from fgtestlib import ServerTestCase

MIXED_TEXT = ("From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: two text parts\r\n"
              "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
              "--b\r\nContent-Type: text/plain\r\n\r\none\r\n"
              "--b\r\nContent-Type: text/plain\r\n\r\ntwo\r\n--b--\r\n")
LONE_PDF = ("From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: a lone pdf\r\n"
            "MIME-Version: 1.0\r\nContent-Type: application/pdf; name=\"Report.PDF\"\r\n"
            "Content-Disposition: attachment; filename=\"Report.PDF\"\r\n"
            "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n")


class StructureQueryTests(ServerTestCase):
    server_args = ("--demo", "--demo-count", "80")

    def ids(self, q):
        found, token = [], None
        while True:
            params = {"q": q, "maxResults": 500, "includeSpamTrash": "true"}
            if token:
                params["pageToken"] = token
            page = self.srv.get("messages", params)
            found += [m["id"] for m in page.get("messages", [])]
            token = page.get("nextPageToken")
            if not token:
                return set(found)

    def full(self):
        out = {}
        for entry in self.srv.admin("GET", "state")["messages"]:
            out[entry["id"]] = self.srv.get("messages/" + entry["id"])
        return out

    def test_has_attachment_is_a_part_with_a_filename(self):
        mixed = self.srv.admin("POST", "insert", {"raw": MIXED_TEXT})["id"]
        pdf = self.srv.admin("POST", "insert", {"raw": LONE_PDF})["id"]
        messages = self.full()
        want = {i for i, m in messages.items()
                if any(p.get("filename") for p in mime.walk(m["payload"]))}
        got = self.ids("has:attachment")
        self.assertEqual(got, want)
        self.assertIn(pdf, got)                 # a single part, not multipart/mixed
        self.assertNotIn(mixed, got)            # multipart/mixed without a filename
        self.assertTrue(self.ids("filename:pdf") >= {pdf})
        self.assertEqual(self.ids("filename:report"), {pdf} | {
            i for i, m in messages.items()
            if any("report" in (p.get("filename") or "").lower() for p in mime.walk(m["payload"]))})
        self.assertEqual(self.ids("has:attachment in:anywhere"), got)

    def test_sizes_compare_size_estimate(self):
        messages = self.full()
        sizes = sorted(m["sizeEstimate"] for m in messages.values())
        middle = sizes[len(sizes) // 2]
        self.assertEqual(self.ids("larger:%d" % middle),
                         {i for i, m in messages.items() if m["sizeEstimate"] > middle})
        self.assertEqual(self.ids("smaller:%d" % middle),
                         {i for i, m in messages.items() if m["sizeEstimate"] < middle})
        self.assertEqual(self.ids("size:%d" % middle), self.ids("larger:%d" % middle))
        self.assertEqual(self.ids("larger:1K"), {i for i, m in messages.items() if m["sizeEstimate"] > 1024})
        self.assertEqual(self.ids("smaller:1m"), set(messages))

    def test_invalid_structure_queries(self):
        for q in ("has:drive", "has:", "larger:abc", "smaller:10G", "larger:-1"):
            status, body = self.srv.api("GET", "messages", {"q": q})
            self.assertEqual(status, 400, q)
            self.assertEqual(body["error"]["message"], "Invalid query")


class NegatedLabelQueryTests(ServerTestCase):
    """``-in:``, ``-is:``, ``-label:`` (§6's NOT), as lieer lists all mail with ``-in:chats``."""
    server_args = ("--demo", "--demo-count", "80")

    def ids(self, q, spam_trash=True):
        found, token = [], None
        while True:
            params = {"q": q, "maxResults": 500}
            if spam_trash:
                params["includeSpamTrash"] = "true"
            if token:
                params["pageToken"] = token
            page = self.srv.get("messages", params)
            found += [m["id"] for m in page.get("messages", [])]
            token = page.get("nextPageToken")
            if not token:
                return set(found)

    def labelled(self):
        return {m["id"]: set(m.get("labelIds", [])) for m in self.srv.admin("GET", "state")["messages"]}

    def test_negated_label_terms_are_the_complement(self):
        messages = self.labelled()
        self.assertEqual(self.ids("-in:chats"), set(messages))
        self.assertEqual(self.ids("-in:chats", spam_trash=False), self.ids("", spam_trash=False))
        self.assertEqual(self.ids("-in:inbox"), {i for i, l in messages.items() if "INBOX" not in l})
        self.assertEqual(self.ids("-is:unread"), self.ids("is:read"))
        self.assertEqual(self.ids("-is:read"), self.ids("is:unread"))
        self.assertEqual(self.ids("-is:starred"), {i for i, l in messages.items() if "STARRED" not in l})
        self.assertEqual(self.ids("-label:Work"), {i for i, l in messages.items() if "Label_1" not in l})
        self.assertEqual(self.ids("in:inbox -is:unread"),
                         {i for i, l in messages.items() if "INBOX" in l and "UNREAD" not in l})

    def test_other_negations_are_invalid(self):
        for q in ("-in:anywhere", "-in:nowhere", "-is:muted", "-from:me", "-", "-in:", "--in:inbox"):
            status, body = self.srv.api("GET", "messages", {"q": q})
            self.assertEqual(status, 400, q)
            self.assertEqual(body["error"]["message"], "Invalid query")
