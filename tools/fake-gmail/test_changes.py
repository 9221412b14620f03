"""modify / batchModify / trash / send and their history (gmail-api.md §2.5-2.9, §5)."""
import base64
import json

from fgtestlib import ServerTestCase, assert_no_empty, check_schema


def b64url(data, pad=True):
    text = base64.urlsafe_b64encode(data).decode()
    return text if pad else text.rstrip("=")


class ChangeTests(ServerTestCase):
    def current(self):
        return self.srv.get("profile")["historyId"]

    def history(self, start, **params):
        records, token, pages = [], None, []
        while True:
            p = dict(params, startHistoryId=start)
            if token:
                p["pageToken"] = token
            page = self.srv.get("history", p)
            check_schema(self, page, "ListHistoryResponse")
            assert_no_empty(self, page)
            pages.append(page)
            records += page.get("history", [])
            token = page.get("nextPageToken")
            if not token:
                return records, pages

    def inbox_message(self, n=0):
        return self.srv.get("messages", {"labelIds": "INBOX", "maxResults": 20})["messages"][n]

    # ------------------------------------------------------------ modify

    def test_modify_records_only_changes(self):
        start = self.current()
        ref = self.inbox_message()
        before = self.srv.get("messages/" + ref["id"], {"format": "minimal"})
        status, m = self.srv.api("POST", "messages/%s/modify" % ref["id"],
                                 body={"addLabelIds": ["STARRED", "INBOX"],
                                       "removeLabelIds": ["UNREAD"]})
        self.assertEqual(status, 200)
        check_schema(self, m, "Message")
        # Only what §2.5 documents for the answer: a client must not need more.
        self.assertEqual(set(m), {"id", "threadId", "labelIds"})
        self.assertIn("STARRED", m["labelIds"])
        after = self.srv.get("messages/" + ref["id"], {"format": "minimal"})
        self.assertGreater(int(after["historyId"]), int(before["historyId"]))
        records, _ = self.history(start)
        self.assertEqual(len(records), 1)
        rec = records[0]
        self.assertEqual(rec["id"], after["historyId"])
        self.assertEqual(rec["messages"], [{"id": ref["id"], "threadId": ref["threadId"]}])
        self.assertEqual(rec["labelsAdded"][0]["labelIds"], ["STARRED"])
        self.assertEqual(rec["labelsAdded"][0]["message"]["id"], ref["id"])
        if "UNREAD" in before.get("labelIds", []):
            self.assertEqual(rec["labelsRemoved"][0]["labelIds"], ["UNREAD"])
        # the same call again is a no-op: no record, historyId unchanged
        again = self.current()
        self.srv.api("POST", "messages/%s/modify" % ref["id"], body={"addLabelIds": ["STARRED"]})
        again_message = self.srv.get("messages/" + ref["id"], {"format": "minimal"})
        self.assertEqual(again_message["historyId"], after["historyId"])
        self.assertEqual(self.current(), again)
        self.assertEqual(self.history(again)[0], [])

    def test_modify_errors(self):
        mid = self.inbox_message()["id"]
        for body, text in (({"addLabelIds": ["Label_99"]}, "Invalid label: Label_99"),
                           ({"addLabelIds": ["SENT"]}, "Invalid label: SENT"),
                           ({"removeLabelIds": ["DRAFT"]}, "Invalid label: DRAFT"),
                           ({"addLabelIds": ["INBOX"] * 101}, None)):
            status, err = self.srv.api("POST", "messages/%s/modify" % mid, body=body)
            self.assertEqual(status, 400, body)
            if text:
                self.assertEqual(err["error"]["message"], text)
        status, _ = self.srv.api("POST", "messages/0000000000000000/modify",
                                 body={"addLabelIds": ["STARRED"]})
        self.assertEqual(status, 404)

    def test_insert_raw_b64_keeps_bytes_exactly(self):
        raw = (b"From: a@example.org\r\nSubject: caf\xe9 \xff\xfe\r\n"
               b"Content-Type: text/plain; charset=utf-8\r\n\r\nnot utf-8: \xc3\x28 \x00 end\r\n")
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            new = self.srv.admin("POST", "insert", {"raw_b64": encode(raw).decode("ascii").rstrip("="),
                                                    "labelIds": ["INBOX"]})
            got = self.srv.get("messages/" + new["id"], {"format": "raw"})["raw"]
            self.assertEqual(base64.urlsafe_b64decode(got + "=" * (-len(got) % 4)), raw)
        for body in ({"raw_b64": "***"}, {"raw_b64": ""}, {"raw": "x", "raw_b64": "eA"}, {"raw_b64": 5}):
            status, _, _ = self.srv.request("POST", "/_admin/insert", body)
            self.assertEqual(status, 400, body)

    def test_all_labels_removed_omits_label_ids(self):
        raw = "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: bare\r\n\r\nx\r\n"
        new = self.srv.admin("POST", "insert", {"raw": raw, "labelIds": ["INBOX"]})
        _, m = self.srv.api("POST", "messages/%s/modify" % new["id"],
                            body={"removeLabelIds": ["INBOX"]})
        self.assertNotIn("labelIds", m)
        full = self.srv.get("messages/" + new["id"])
        self.assertNotIn("labelIds", full)
        assert_no_empty(self, full)

    def test_batch_modify(self):
        start = self.current()
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 5})["messages"]]
        status, headers, body = self.srv.request(
            "POST", "/gmail/v1/users/me/messages/batchModify",
            {"ids": ids + ["ffffffffffffffff"], "addLabelIds": ["Label_2"]},
            {"Authorization": "Bearer " + self.srv.token()})
        self.assertEqual((status, body), (204, b""))
        records, _ = self.history(start)
        changed = {r["messages"][0]["id"] for r in records}
        self.assertEqual(changed, set(ids))
        for r in records:
            self.assertEqual(r["labelsAdded"][0]["labelIds"], ["Label_2"])
        status, err = self.srv.api("POST", "messages/batchModify",
                                   body={"ids": ["a"] * 1001, "addLabelIds": ["STARRED"]})
        self.assertEqual(status, 400)
        status, _ = self.srv.api("POST", "messages/batchModify",
                                 body={"ids": ids, "addLabelIds": ["NOPE"]})
        self.assertEqual(status, 400)

    def test_admin_delete_label_is_another_device(self):
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 3})["messages"]]
        self.srv.api("POST", "messages/batchModify", body={"ids": ids, "addLabelIds": ["Label_3"]}, expect=204)
        start = self.current()
        self.srv.admin("POST", "delete-label", {"id": "Label_3"})
        records, _ = self.history(start)
        self.assertTrue(all(r["labelsRemoved"][0]["labelIds"] == ["Label_3"] for r in records))
        self.assertTrue({r["messages"][0]["id"] for r in records} >= set(ids))
        status, err = self.srv.api("POST", "messages/batchModify", body={"ids": ids, "addLabelIds": ["Label_3"]})
        self.assertEqual(status, 400)
        self.assertIn("Invalid label: Label_3", err["error"]["message"])

    def test_trash_and_untrash_are_label_changes(self):
        start = self.current()
        ref = self.inbox_message(1)
        _, m = self.srv.api("POST", "messages/%s/trash" % ref["id"], expect=200)
        self.assertIn("TRASH", m["labelIds"])
        self.assertNotIn("INBOX", m["labelIds"])
        _, m = self.srv.api("POST", "messages/%s/untrash" % ref["id"], expect=200)
        self.assertNotIn("TRASH", m.get("labelIds", []))
        records, _ = self.history(start)
        self.assertEqual(len(records), 2)
        self.assertEqual(records[0]["labelsAdded"][0]["labelIds"], ["TRASH"])
        self.assertEqual(records[0]["labelsRemoved"][0]["labelIds"], ["INBOX"])
        self.assertEqual(records[1]["labelsRemoved"][0]["labelIds"], ["TRASH"])
        for r in records:
            self.assertNotIn("messagesDeleted", r)

    # ------------------------------------------------------------ send

    def test_send_new_and_reply(self):
        start = self.current()
        raw = (b"From: Robin <demo@hudson.test>\r\nTo: ada@analytical.example\r\n"
               b"Subject: Lunch plans\r\n\r\nShall we?\r\n")
        for encoded in (b64url(raw), b64url(raw, pad=False), base64.b64encode(raw).decode()):
            _, sent = self.srv.api("POST", "messages/send", body={"raw": encoded}, expect=200)
            self.assertEqual(set(sent), {"id", "threadId", "labelIds"})
            self.assertEqual(sent["labelIds"], ["SENT"])
            self.assertEqual(sent["threadId"], sent["id"])
        records, _ = self.history(start, historyTypes="messageAdded")
        self.assertEqual(len(records), 3)
        self.assertEqual(records[-1]["messagesAdded"][0]["message"]["id"], sent["id"])
        self.assertEqual(records[-1]["messagesAdded"][0]["message"]["labelIds"], ["SENT"])
        msgid = self.srv.admin("GET", "message/" + sent["id"])["messageId"]
        self.assertTrue(msgid.startswith("<"))
        reply = ("From: demo@hudson.test\r\nTo: ada@analytical.example\r\n"
                 "Subject: Re: Lunch plans\r\nIn-Reply-To: %s\r\nReferences: %s\r\n\r\nOk\r\n"
                 % (msgid, msgid)).encode()
        _, r1 = self.srv.api("POST", "messages/send",
                             body={"raw": b64url(reply), "threadId": sent["threadId"]})
        self.assertEqual(r1["threadId"], sent["threadId"])          # all three rules hold
        _, r2 = self.srv.api("POST", "messages/send", body={"raw": b64url(reply)})
        self.assertNotEqual(r2["threadId"], sent["threadId"])       # no threadId given
        other = reply.replace(b"Re: Lunch plans", b"Re: Dinner")
        _, r3 = self.srv.api("POST", "messages/send",
                             body={"raw": b64url(other), "threadId": sent["threadId"]})
        self.assertNotEqual(r3["threadId"], sent["threadId"])       # subject differs
        thread = self.srv.get("threads/" + sent["threadId"], {"format": "minimal"})
        self.assertEqual([m["id"] for m in thread["messages"]], [sent["id"], r1["id"]])

    def test_send_errors(self):
        for body in ({"raw": "%%%not base64%%%"}, {}, {"raw": b64url(b"Subject: x\r\n\r\nhi")},
                     {"raw": b64url(b"From: a@b\r\nSubject: x\r\n\r\nno recipient")}):
            status, err = self.srv.api("POST", "messages/send", body=body)
            self.assertEqual(status, 400, body)
            self.assertEqual(err["error"]["code"], 400)

    def test_upload_send(self):
        raw = b"From: demo@hudson.test\r\nTo: x@example.org\r\nSubject: big\r\n\r\nbody\r\n"
        status, _, body = self.srv.request(
            "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", raw,
            {"Authorization": "Bearer " + self.srv.token(), "Content-Type": "message/rfc822"})
        self.assertEqual(status, 200, body)
        sent = json.loads(body)
        self.assertEqual(sent["labelIds"], ["SENT"])
        got = self.srv.get("messages/" + sent["id"], {"format": "raw"})
        self.assertTrue(base64.urlsafe_b64decode(got["raw"]).endswith(raw))

    # ------------------------------------------------------------ history.list

    def test_history_paging_and_filters(self):
        start = self.current()
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 7})["messages"]]
        for mid in ids:
            self.srv.api("POST", "messages/%s/modify" % mid, body={"addLabelIds": ["Label_4"]})
            self.srv.api("POST", "messages/%s/modify" % mid, body={"removeLabelIds": ["Label_4"]})
        records, pages = self.history(start, maxResults=3)
        self.assertEqual(len(records), 14)
        self.assertEqual(len(pages), 5)
        current = self.current()
        for page in pages:
            self.assertEqual(page["historyId"], current)            # on every page
        record_ids = [int(r["id"]) for r in records]
        self.assertEqual(record_ids, sorted(record_ids))
        self.assertGreater(record_ids[0], int(start))
        added, _ = self.history(start, historyTypes="labelAdded")
        self.assertEqual(len(added), 7)
        self.assertTrue(all("labelsRemoved" not in r for r in added))
        both, _ = self.history(start, historyTypes=["labelAdded", "labelRemoved"])
        self.assertEqual(len(both), 14)
        by_label, _ = self.history(start, labelId="Label_4")
        self.assertEqual(len(by_label), 14)
        none, pages = self.history(start, labelId="SPAM", maxResults=5)
        self.assertEqual(none, [])
        self.assertGreater(len(pages), 1)       # pages with a token and no "history" key
        self.assertNotIn("history", pages[0])
        self.assertIn("nextPageToken", pages[0])

    def test_history_edges(self):
        current = self.current()
        page = self.srv.get("history", {"startHistoryId": current})
        self.assertEqual(page, {"historyId": current})
        page = self.srv.get("history", {"startHistoryId": int(current) + 1000})
        self.assertEqual(page, {"historyId": current})
        for params in ({}, {"startHistoryId": "abc"}, {"startHistoryId": ""}):
            status, err = self.srv.api("GET", "history", params)
            self.assertEqual(status, 400)
            self.assertEqual(err["error"]["message"], "Missing/invalid parameter: startHistoryId")
        status, _ = self.srv.api("GET", "history", {"startHistoryId": current,
                                                    "historyTypes": "bogus"})
        self.assertEqual(status, 400)

    def test_history_expiry_and_delete(self):
        start = self.current()
        ref = self.inbox_message(2)
        self.srv.admin("POST", "modify", {"id": ref["id"], "add": ["Family"], "remove": []})
        self.srv.admin("POST", "delete", {"id": ref["id"]})
        records, _ = self.history(start)
        self.assertEqual(records[0]["labelsAdded"][0]["labelIds"], ["Label_4"])
        self.assertEqual(records[1]["messagesDeleted"],
                         [{"message": {"id": ref["id"], "threadId": ref["threadId"]}}])
        status, _ = self.srv.api("GET", "messages/" + ref["id"])
        self.assertEqual(status, 404)
        self.srv.admin("POST", "expire-history", {"before": records[1]["id"]})
        status, err = self.srv.api("GET", "history", {"startHistoryId": start})
        self.assertEqual(status, 404)
        self.assertEqual(err["error"]["errors"][0]["reason"], "notFound")
        self.assertEqual(self.history(records[1]["id"])[0], [])
        self.srv.admin("POST", "expire-history", {})
        status, _ = self.srv.api("GET", "history", {"startHistoryId": records[0]["id"]})
        self.assertEqual(status, 404)
        self.assertEqual(self.history(self.current())[0], [])
