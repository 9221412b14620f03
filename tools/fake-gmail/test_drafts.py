"""users.drafts.* (gmail-api.md §2.12): create, update, get, list, send, delete, the admin
hook that edits a draft "on another device", history, and the fault modes on drafts."""
import base64
import http.client

from fgtestlib import API, ServerTestCase, assert_no_empty, check_schema


def raw(subject, msgid, to="bob@example.org", extra=""):
    return ("From: demo@hudson.test\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <%s@hudson.test>\r\n%s\r\n"
            "Body of %s\r\n" % (to, subject, msgid, extra, subject)).encode()


def b64(data):
    return base64.urlsafe_b64encode(data).decode()


class DraftTests(ServerTestCase):
    def faults(self, *rules):
        return self.srv.admin("POST", "faults", {"rules": list(rules)})

    def auth(self):
        return {"Authorization": "Bearer " + self.srv.token()}

    def create(self, subject, msgid, **kw):
        status, draft = self.srv.api("POST", "drafts", body={"message": {"raw": b64(raw(subject, msgid, **kw))}})
        self.assertEqual(status, 200, draft)
        return draft

    def history_since(self, start):
        return self.srv.get("history", {"startHistoryId": start}).get("history", [])

    def test_create_get_list(self):
        start = self.srv.get("profile")["historyId"]
        draft = self.create("First draft", "d1")
        check_schema(self, draft, "Draft")
        assert_no_empty(self, draft)
        self.assertTrue(draft["id"].startswith("r-"))
        self.assertEqual(draft["message"]["labelIds"], ["DRAFT"])
        got = self.srv.get("drafts/" + draft["id"], {"format": "raw"})
        # As given, with the Date Gmail adds when there is none.
        self.assertTrue(base64.urlsafe_b64decode(got["message"]["raw"]).endswith(raw("First draft", "d1")))
        listed = self.srv.get("drafts")
        check_schema(self, listed, "ListDraftsResponse")
        entry = [d for d in listed["drafts"] if d["id"] == draft["id"]][0]
        self.assertEqual(set(entry["message"]), {"id", "threadId"})
        self.assertEqual(entry["message"]["id"], draft["message"]["id"])
        found = self.srv.get("drafts", {"q": "rfc822msgid:<d1@hudson.test>"})
        self.assertEqual([d["id"] for d in found["drafts"]], [draft["id"]])
        self.assertEqual(self.srv.get("drafts", {"q": "rfc822msgid:<none@x>"}), {"resultSizeEstimate": 0})
        # An ordinary message too: in:drafts, and messageAdded in history.
        ids = [m["id"] for m in self.srv.get("messages", {"q": "in:drafts"})["messages"]]
        self.assertIn(draft["message"]["id"], ids)
        added = [r for r in self.history_since(start) if r.get("messagesAdded")]
        self.assertEqual(added[-1]["messagesAdded"][0]["message"]["id"], draft["message"]["id"])

    def test_update_replaces_the_message_and_keeps_the_id(self):
        draft = self.create("To update", "u1")
        start = self.srv.get("profile")["historyId"]
        status, updated = self.srv.api("PUT", "drafts/" + draft["id"],
                                       body={"id": draft["id"], "message": {"raw": b64(raw("Updated", "u2"))}})
        self.assertEqual(status, 200, updated)
        self.assertEqual(updated["id"], draft["id"])
        self.assertNotEqual(updated["message"]["id"], draft["message"]["id"])
        self.assertEqual(self.srv.api("GET", "messages/" + draft["message"]["id"])[0], 404)
        kinds = [k for r in self.history_since(start) for k in r if k in ("messagesAdded", "messagesDeleted")]
        self.assertEqual(kinds, ["messagesDeleted", "messagesAdded"])
        self.assertEqual(self.srv.api("PUT", "drafts/r-404", body={"message": {"raw": b64(raw("x", "x"))}})[0], 404)
        self.assertEqual(self.srv.api("PUT", "drafts/" + draft["id"], body={"message": {}})[0], 400)

    def test_admin_edit_on_another_device(self):
        draft = self.create("Phone", "p1")
        edited = self.srv.admin("POST", "draft", {"id": draft["id"], "raw": raw("Phone", "p2").decode()})
        self.assertEqual(edited["id"], draft["id"])
        got = self.srv.get("drafts/" + draft["id"], {"format": "raw"})
        self.assertIn(b"<p2@hudson.test>", base64.urlsafe_b64decode(got["message"]["raw"]))
        listed = self.srv.admin("GET", "drafts")["drafts"]
        self.assertIn((draft["id"], "<p2@hudson.test>"), [(d["id"], d["rfc822MessageId"]) for d in listed])
        made = self.srv.admin("POST", "draft", {"raw": raw("Made on the phone", "p3").decode()})
        self.assertEqual(self.srv.get("drafts/" + made["id"])["message"]["id"], made["messageId"])

    def test_send_and_delete(self):
        draft = self.create("To send", "s1")
        status, sent = self.srv.api("POST", "drafts/send", body={"id": draft["id"]})
        self.assertEqual(status, 200, sent)
        check_schema(self, sent, "Message")
        self.assertEqual(sent["labelIds"], ["SENT"])
        self.assertEqual(self.srv.api("GET", "drafts/" + draft["id"])[0], 404)
        self.assertEqual(self.srv.api("POST", "drafts/send", body={"id": draft["id"]})[0], 404)
        found = self.srv.get("messages", {"q": "rfc822msgid:s1@hudson.test in:sent"})["messages"]
        self.assertEqual([m["id"] for m in found], [sent["id"]])
        self.assertEqual(self.srv.api("POST", "drafts/send", body={})[0], 400)
        gone = self.create("To delete", "x1")
        self.assertEqual(self.srv.api("DELETE", "drafts/" + gone["id"])[0], 204)
        self.assertEqual(self.srv.api("DELETE", "drafts/" + gone["id"])[0], 404)
        self.assertEqual(self.srv.api("GET", "messages/" + gone["message"]["id"])[0], 404)

    def test_send_without_recipients_is_refused_and_kept(self):
        draft = self.create("No one", "n1", to="")
        status, err = self.srv.api("POST", "drafts/send", body={"id": draft["id"]})
        self.assertEqual(status, 400)
        self.assertEqual(self.srv.api("GET", "drafts/" + draft["id"])[0], 200)

    def test_a_reply_draft_joins_its_thread(self):
        parent = self.srv.get("messages", {"maxResults": 1})["messages"][0]
        full = self.srv.get("messages/" + parent["id"], {"format": "metadata", "metadataHeaders": ["Message-ID", "Subject"]})
        headers = {h["name"].lower(): h["value"] for h in full["payload"]["headers"]}
        extra = "In-Reply-To: %s\r\nReferences: %s\r\n" % (headers["message-id"], headers["message-id"])
        data = raw("Re: " + headers["subject"], "t1", extra=extra)
        status, draft = self.srv.api("POST", "drafts", body={"message": {"raw": b64(data), "threadId": parent["threadId"]}})
        self.assertEqual(status, 200)
        self.assertEqual(draft["message"]["threadId"], parent["threadId"])

    def test_faults_on_drafts(self):
        self.srv.token()
        self.faults({"method": "POST", "path": "/drafts$", "mode": "apply_then_drop"})
        body = {"message": {"raw": b64(raw("Lost answer", "f1"))}}
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.srv.request("POST", API + "drafts", body, self.auth())
        found = self.srv.get("drafts", {"q": "rfc822msgid:f1@hudson.test"})["drafts"]
        self.assertEqual(len(found), 1)
        self.faults({"path": "/drafts/send$", "mode": "apply_then_status", "status": 503})
        self.assertEqual(self.srv.api("POST", "drafts/send", body={"id": found[0]["id"]})[0], 503)
        self.assertEqual(len(self.srv.get("messages", {"q": "rfc822msgid:f1@hudson.test in:sent"})["messages"]), 1)
        for status in (429, 500):
            self.faults({"path": "/drafts/[^/]+$", "method": "PUT", "status": status})
            draft = self.create("Fault %d" % status, "g%d" % status)
            code, _ = self.srv.api("PUT", "drafts/" + draft["id"], body={"message": {"raw": b64(raw("New", "h%d" % status))}})
            self.assertEqual(code, status)
            self.assertIn(b"<g%d@hudson.test>" % status,
                          base64.urlsafe_b64decode(self.srv.get("drafts/" + draft["id"], {"format": "raw"})["message"]["raw"]))
        self.faults({"path": "/drafts/[^/]+$", "method": "DELETE", "mode": "apply_then_drop"})
        draft = self.create("Delete lost", "k1")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
            self.srv.request("DELETE", API + "drafts/" + draft["id"], None, self.auth())
        self.assertEqual(self.srv.api("GET", "drafts/" + draft["id"])[0], 404)

    def test_loaded_draft_messages_are_drafts(self):
        from fakegmail.mailbox import Mailbox
        from fakegmail.message import Message

        class Clock:
            def now_ms(self):
                return 1796000000000
        mb = Mailbox("demo@hudson.test", Clock())
        mb.load([Message("1a", "1a", ["DRAFT"], 1796000000000, raw=raw("Loaded", "l1")),
                 Message("1b", "1b", ["INBOX"], 1796000000001, raw=raw("Mail", "l2"))])
        self.assertEqual([m.id for _, m in mb.drafts.listing()], ["1a"])

    def test_units(self):
        self.srv.admin("DELETE", "requests")
        draft = self.create("Units", "q1")
        self.srv.get("drafts")
        self.srv.get("drafts/" + draft["id"])
        self.srv.api("PUT", "drafts/" + draft["id"], body={"message": {"raw": b64(raw("Units", "q2"))}})
        self.srv.api("POST", "drafts/send", body={"id": draft["id"]})
        log = [(e["api"], e["units"]) for e in self.srv.admin("GET", "requests") if e.get("api", "").startswith("drafts")]
        self.assertEqual(log, [("drafts.create", 10), ("drafts.list", 5), ("drafts.get", 5), ("drafts.update", 15),
                               ("drafts.send", 100)])
