"""labels.create / patch / delete against the reference (gmail-api.md §2.10, the
discovery document's Label and LabelColor), and "another device" changing labels."""
from fgtestlib import API, ServerTestCase


class LabelObjectTests(ServerTestCase):
    def names(self):
        return {e["name"]: e for e in self.srv.get("labels")["labels"]}

    def test_duplicate_name_is_409_whatever_the_case(self):
        _, made = self.srv.api("POST", "labels", body={"name": "Receipts/2026"}, expect=200)
        for name in ("Receipts/2026", "receipts/2026", "  Receipts/2026 "):
            status, err = self.srv.api("POST", "labels", body={"name": name})
            self.assertEqual(status, 409, name)
            self.assertEqual(err["error"]["status"], "ALREADY_EXISTS")
        # A rename onto a taken name is refused the same way; onto its own name is fine.
        _, other = self.srv.api("POST", "labels", body={"name": "Receipts/2027"}, expect=200)
        self.assertEqual(self.srv.api("PATCH", "labels/" + other["id"], body={"name": "RECEIPTS/2026"})[0], 409)
        self.srv.api("PATCH", "labels/" + made["id"], body={"name": "Receipts/2026"}, expect=200)

    def test_system_labels_refuse_every_change(self):
        for name in ("INBOX", "inbox", "Spam", "TRASH"):
            self.assertEqual(self.srv.api("POST", "labels", body={"name": name})[0], 400, name)
        self.assertEqual(self.srv.api("PATCH", "labels/STARRED", body={"name": "Stars"})[0], 400)
        self.assertEqual(self.srv.api("PUT", "labels/UNREAD", body={"name": "New"})[0], 400)
        self.assertEqual(self.srv.api("DELETE", "labels/IMPORTANT")[0], 400)
        self.assertIn("IMPORTANT", {e["id"] for e in self.srv.get("labels")["labels"]})

    def test_color_only_from_the_palette(self):
        status, err = self.srv.api("POST", "labels", body={
            "name": "Colors/Bad", "color": {"textColor": "#123456", "backgroundColor": "#16a766"}})
        self.assertEqual(status, 400)
        self.assertIn("palette", err["error"]["message"])
        self.assertNotIn("Colors/Bad", self.names())
        _, made = self.srv.api("POST", "labels", body={
            "name": "Colors/Good", "color": {"textColor": "#FFFFFF", "backgroundColor": "#16a766"}}, expect=200)
        self.assertEqual(made["color"], {"textColor": "#ffffff", "backgroundColor": "#16a766"})
        self.assertEqual(self.srv.api("PATCH", "labels/" + made["id"], body={
            "color": {"textColor": "#000000", "backgroundColor": "#010101"}})[0], 400)

    def test_rename_keeps_every_message_label_and_records_no_history(self):
        _, made = self.srv.api("POST", "labels", body={"name": "Voyages/2026"}, expect=200)
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 3})["messages"]]
        self.srv.api("POST", "messages/batchModify", body={"ids": ids, "addLabelIds": [made["id"]]}, expect=204)
        start = self.srv.get("profile")["historyId"]
        self.srv.api("PATCH", "labels/" + made["id"], body={"name": "Trips/2026"}, expect=200)
        for mid in ids:
            self.assertIn(made["id"], self.srv.get("messages/" + mid, {"format": "minimal"})["labelIds"])
        self.assertEqual(self.srv.get("profile")["historyId"], start)
        self.assertIn("Trips/2026", self.names())
        self.assertNotIn("Voyages/2026", self.names())
        found = self.srv.get("messages", {"q": "label:trips-2026", "maxResults": 10}).get("messages", [])
        self.assertEqual({m["id"] for m in found} & set(ids), set(ids))

    def test_delete_removes_from_every_message_with_label_removed_history(self):
        _, made = self.srv.api("POST", "labels", body={"name": "Doomed"}, expect=200)
        ids = [m["id"] for m in self.srv.get("messages", {"maxResults": 4})["messages"]]
        self.srv.api("POST", "messages/batchModify", body={"ids": ids, "addLabelIds": [made["id"]]}, expect=204)
        start = self.srv.get("profile")["historyId"]
        status, _, body = self.srv.request("DELETE", API + "labels/" + made["id"],
                                           headers={"Authorization": "Bearer " + self.srv.token()})
        self.assertEqual((status, body), (204, b""))
        history = self.srv.get("history", {"startHistoryId": start})["history"]
        removed = {r["messages"][0]["id"] for r in history if r.get("labelsRemoved")}
        self.assertEqual(removed, set(ids))
        self.assertGreater(int(self.srv.get("profile")["historyId"]), int(start))
        # A delete whose answer was lost, sent again: 404, the label is gone.
        self.assertEqual(self.srv.api("DELETE", "labels/" + made["id"])[0], 404)

    def test_another_device_creates_and_renames(self):
        made = self.srv.admin("POST", "create-label", {"name": "Elsewhere"})
        self.assertEqual(self.names()["Elsewhere"]["id"], made["id"])
        self.assertEqual(self.srv.api("POST", "labels", body={"name": "elsewhere"})[0], 409)
        self.srv.admin("POST", "rename-label", {"id": made["id"], "name": "Elsewhere/Renamed"})
        self.assertEqual(self.names()["Elsewhere/Renamed"]["id"], made["id"])

    def test_a_create_whose_answer_is_lost_is_made_once(self):
        self.srv.admin("POST", "faults", {"rules": [{"path": "/labels$", "method": "POST", "mode": "apply_then_drop"}]})
        try:
            self.srv.api("POST", "labels", body={"name": "Lost/Answer"})
        except Exception:
            pass
        self.srv.admin("DELETE", "faults")
        self.assertIn("Lost/Answer", self.names())
        self.assertEqual(self.srv.api("POST", "labels", body={"name": "Lost/Answer"})[0], 409)
