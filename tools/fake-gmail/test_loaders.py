"""Loading bench/mkcorpus.py's mailbox (NDJSON, Maildir, mbox) and eml directories."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from fakegmail import mime
from fgtestlib import MKCORPUS, LiveServer, check_schema


class CorpusTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fake-gmail-corpus-")
        cls.ndjson = os.path.join(cls.tmp, "c.ndjson")
        cls.maildir = os.path.join(cls.tmp, "md")
        cls.mbox = os.path.join(cls.tmp, "c.mbox")
        cls.labels_json = os.path.join(cls.tmp, "labels.json")
        tsv = os.path.join(cls.tmp, "labels.tsv")
        subprocess.run([sys.executable, MKCORPUS, "--count", "300", "--seed", "7",
                        "--gmail-ndjson", cls.ndjson, "--maildir", cls.maildir,
                        "--mbox", cls.mbox, "--labels-tsv", tsv, "--labels-json", cls.labels_json],
                       check=True, stdout=subprocess.DEVNULL)
        with open(cls.ndjson, encoding="utf-8") as f:
            cls.lines = [json.loads(line) for line in f]
        with open(tsv, encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f]
        cls.tsv = {"<%s>" % row[0]: row for row in rows}
        with open(cls.labels_json, encoding="utf-8") as f:
            cls.user_labels = {e["id"]: e["name"] for e in json.load(f)["labels"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def label_names(self, label_ids, names):
        """Label ids as names: system ids stay, user labels by their name."""
        return sorted(names.get(lid, lid) for lid in label_ids)

    def test_ndjson_kept_as_given(self):
        srv = LiveServer("--gmail-ndjson", self.ndjson, "--labels-json", self.labels_json)
        try:
            profile = srv.get("profile")
            self.assertEqual(profile["messagesTotal"], len(self.lines))
            top = max(int(d["historyId"]) for d in self.lines)
            self.assertGreaterEqual(int(profile["historyId"]), top)
            for d in self.lines[::7]:
                m = srv.get("messages/" + d["id"])
                check_schema(self, m, "Message")
                for key in ("id", "threadId", "labelIds", "internalDate", "historyId", "snippet"):
                    self.assertEqual(m[key], d[key], key)
                self.assertEqual(m["payload"]["mimeType"], d["payload"]["mimeType"])
                raw = base64.urlsafe_b64decode(srv.get("messages/" + d["id"],
                                                       {"format": "raw"})["raw"])
                leaves = lambda p: [(n["mimeType"], n["body"].get("size")) for n in mime.walk(p)
                                    if "parts" not in n]  # noqa: E731
                self.assertEqual(leaves(mime.parse(raw, d["id"]).payload), leaves(d["payload"]))
                for part in mime.walk(m["payload"]):
                    att = part["body"].get("attachmentId")
                    if att:
                        body = srv.get("messages/%s/attachments/%s" % (d["id"], att))
                        self.assertEqual(body["size"], part["body"]["size"])
            newest = max(self.lines, key=lambda d: (int(d["internalDate"]), d["id"]))
            self.assertEqual(srv.get("messages", {"maxResults": 1})["messages"][0]["id"],
                             newest["id"])
            d = self.lines[3]
            msgid = next(h["value"] for h in d["payload"]["headers"] if h["name"] == "Message-ID")
            found = srv.get("messages", {"q": "rfc822msgid:" + msgid, "includeSpamTrash": "true"})
            self.assertEqual([x["id"] for x in found["messages"]], [d["id"]])
        finally:
            srv.stop()

    def state(self, *args):
        srv = LiveServer(*args)
        try:
            return srv.admin("GET", "state"), srv
        finally:
            srv.stop()

    def test_ndjson_labels_named(self):
        state, _ = self.state("--gmail-ndjson", self.ndjson, "--labels-json", self.labels_json)
        names = {e["id"]: e["name"] for e in state["labels"]}
        self.assertIn("Travel/2026", names.values())
        for d in self.lines:
            for lid in d["labelIds"]:
                self.assertIn(lid, names)

    def test_maildir(self):
        """Same messages, labels (by name) and threads as the NDJSON."""
        state, _ = self.state("--eml-dir", self.maildir)
        self.assertEqual(len(state["messages"]), len(self.lines))
        names = {e["id"]: e["name"] for e in state["labels"]}
        groups_here, groups_there = {}, {}
        for m in state["messages"]:
            row = self.tsv[m["messageId"]]
            want = self.label_names(row[3].split(","), self.user_labels)
            self.assertEqual(self.label_names(m["labelIds"], names), want, m["messageId"])
            groups_here.setdefault(m["threadId"], set()).add(m["messageId"])
            groups_there.setdefault(row[2], set()).add(m["messageId"])
        self.assertEqual(sorted(map(sorted, groups_here.values())),
                         sorted(map(sorted, groups_there.values())))

    def test_mbox_takeout_headers(self):
        """Same ids, threads and labels (by name) as the NDJSON."""
        state, _ = self.state("--mbox", self.mbox)
        self.assertEqual(len(state["messages"]), len(self.lines))
        names = {e["id"]: e["name"] for e in state["labels"]}
        for m in state["messages"]:
            row = self.tsv[m["messageId"]]
            self.assertEqual((m["id"], m["threadId"]), (row[1], row[2]))
            self.assertEqual(self.label_names(m["labelIds"], names),
                             self.label_names(row[3].split(","), self.user_labels))


class EmlDirTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fake-gmail-eml-")
        os.makedirs(os.path.join(self.tmp, "sub"))
        files = {
            "a.eml": "X-Gmail-Labels: Inbox,Starred,Opened,\"Work, Stuff\"\nFrom: a@example.org\n"
                     "To: demo@hudson.test\nSubject: Plan\nMessage-ID: <p1@example.org>\n"
                     "Date: Mon, 2 Dec 2024 13:00:00 +0100\n\nfirst\n",
            "sub/b.eml": "From: demo@hudson.test\nTo: a@example.org\nSubject: Re: Plan\n"
                         "Message-ID: <p2@example.org>\nIn-Reply-To: <p1@example.org>\n"
                         "Date: Mon, 2 Dec 2024 14:00:00 +0100\n\nsecond\n",
            "c.eml": "From: z@example.org\nTo: demo@hudson.test\nSubject: Other\n"
                     "Message-ID: <p3@example.org>\nDate: Tue, 3 Dec 2024 10:00:00 +0000\n\nx\n",
            ".hidden": "not mail",
        }
        for name, text in files.items():
            with open(os.path.join(self.tmp, name), "w", encoding="utf-8") as f:
                f.write(text)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_labels_and_threads(self):
        srv = LiveServer("--eml-dir", self.tmp, "--demo", "--demo-count", "10")
        try:
            state = srv.admin("GET", "state")
            self.assertEqual(len(state["messages"]), 13)
            by_mid = {m["messageId"]: m for m in state["messages"]}
            work = next(e["id"] for e in state["labels"] if e["name"] == "Work, Stuff")
            self.assertEqual(sorted(by_mid["<p1@example.org>"]["labelIds"]),
                             sorted(["INBOX", "STARRED", work]))
            self.assertEqual(by_mid["<p3@example.org>"]["labelIds"], ["INBOX"])
            self.assertEqual(by_mid["<p1@example.org>"]["threadId"],
                             by_mid["<p2@example.org>"]["threadId"])
            first = by_mid["<p1@example.org>"]
            self.assertEqual(first["threadId"], first["id"])
            self.assertNotEqual(by_mid["<p3@example.org>"]["threadId"],
                                by_mid["<p1@example.org>"]["threadId"])
            self.assertEqual(by_mid["<p1@example.org>"]["internalDate"], "1733140800000")
            m = srv.get("messages/" + by_mid["<p1@example.org>"]["id"])
            self.assertEqual(base64.urlsafe_b64decode(m["payload"]["body"]["data"] + "=="),
                             b"first\n")
        finally:
            srv.stop()
