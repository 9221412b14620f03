"""The embedded demo mailbox: determinism and realism."""
import collections
import re
import unittest

from fakegmail import demo, labels, mime
from fakegmail.server import build_app, parse_args
from fgtestlib import NOW


def demo_messages(count=300, seed=1, now=NOW, span=730):
    return demo.generate(labels.LabelTable(), "demo@hudson.test", count, seed, now, span)


class DemoTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.msgs = demo_messages()

    def test_deterministic(self):
        again = demo_messages()
        self.assertEqual([m.id for m in again], [m.id for m in self.msgs])
        self.assertEqual([m.thread_id for m in again], [m.thread_id for m in self.msgs])
        self.assertTrue(all(a.raw() == b.raw() for a, b in zip(again, self.msgs)))
        other = demo_messages(seed=2)
        self.assertNotEqual([m.id for m in other], [m.id for m in self.msgs])
        app1 = build_app(parse_args(["--now", str(NOW), "--demo-count", "50"]))
        app2 = build_app(parse_args(["--now", str(NOW), "--demo-count", "50"]))
        self.assertEqual(sorted(app1.mailbox.messages), sorted(app2.mailbox.messages))
        self.assertEqual(app1.mailbox.history.current, app2.mailbox.history.current)

    def test_ids_dates_and_history(self):
        for m in self.msgs:
            self.assertRegex(m.id, r"^[0-9a-f]{16}$")
            self.assertLessEqual(m.internal_date, NOW * 1000 + 999)
            self.assertGreaterEqual(m.internal_date, (NOW - 730 * 86400) * 1000)
        app = build_app(parse_args(["--now", str(NOW)]))
        start = app.mailbox.history.current
        self.assertGreaterEqual(start, 100000)
        self.assertTrue(all(m.history_id <= start for m in app.mailbox.messages.values()))
        self.assertEqual(len(app.mailbox.messages), 300)

    def test_threads(self):
        threads = collections.defaultdict(list)
        for m in self.msgs:
            threads[m.thread_id].append(m)
        sizes = [len(v) for v in threads.values()]
        self.assertEqual(max(sizes), 8)
        self.assertEqual(min(sizes), 1)
        self.assertGreater(sum(1 for s in sizes if s > 1), 20)
        for members in threads.values():
            members.sort(key=lambda m: m.internal_date)
            self.assertEqual(members[0].thread_id, members[0].id)
            for prev, m in zip(members, members[1:]):
                self.assertIn(prev.message_id, m.references)
                self.assertTrue(m.subject.startswith("Re: ") or "Re: " in m.subject, m.subject)

    def test_labels_in_plausible_proportions(self):
        count = collections.Counter(lab for m in self.msgs for lab in m.labels)
        n = len(self.msgs)
        self.assertTrue(0.2 * n <= count["INBOX"] <= 0.4 * n, count["INBOX"])
        for lid in ("UNREAD", "STARRED", "IMPORTANT", "SENT", "CATEGORY_PERSONAL",
                    "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
                    "CATEGORY_FORUMS", "Label_1", "Label_2", "Label_3", "Label_4", "Label_5"):
            self.assertGreater(count[lid], 0, lid)
        newest = sorted(self.msgs, key=lambda m: m.internal_date)[-60:]
        oldest = sorted(self.msgs, key=lambda m: m.internal_date)[:60]
        inbox = lambda ms: sum("INBOX" in m.labels for m in ms)  # noqa: E731
        self.assertGreater(inbox(newest), inbox(oldest))
        for m in self.msgs:
            if "SENT" in m.labels:
                self.assertIn("demo@hudson.test", m.from_text)
                self.assertNotIn("INBOX", m.labels)

    def test_headers_and_content(self):
        raws = [m.raw() for m in self.msgs]
        senders = {m.from_text for m in self.msgs if "SENT" not in m.labels}
        self.assertGreaterEqual(len(senders), 30)
        self.assertTrue(any(not s.isascii() for s in senders))
        self.assertTrue(any(re.search(rb"^From: =\?UTF-8\?B\?", r, re.M) for r in raws))
        self.assertTrue(any(b"\r\nList-Id: " in r for r in raws))
        news = [m for m in self.msgs if "Label_5" in m.labels]
        self.assertTrue(all(b"\r\nList-Id: " in m.raw() for m in news))
        text = " ".join(mime.decode_text(mime.b64_lenient(p["body"]["data"]), "utf-8")
                        for m in self.msgs for p in mime.walk(m.payload())
                        if p["mimeType"] == "text/plain" and p["body"].get("data"))
        for word in ("café", "東京", "quokka", "meeting"):
            self.assertIn(word, text)
        attachments = [p for m in self.msgs for p in mime.walk(m.payload())
                       if p["body"].get("attachmentId")]
        names = {p["filename"].rsplit(".", 1)[-1] for p in attachments}
        self.assertTrue({"pdf", "txt"} <= names, names)
        self.assertTrue(all(100 <= p["body"]["size"] <= 2000 for p in attachments
                            if p["filename"].endswith((".pdf", ".txt"))))
