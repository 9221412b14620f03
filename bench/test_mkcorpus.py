"""Tests of bench/mkcorpus.py, the mailbox generator of the benchmark and the fake Gmail's tests.

Run from the repository root (scripts/test does):
    python3 -m unittest discover -s bench -p 'test_*.py'
tools/fake-gmail/test_loaders.py checks that the fake Gmail loads and serves what it writes.
"""
import base64
import email
import email.policy
import email.utils
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MKCORPUS = os.path.join(HERE, "mkcorpus.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools", "fake-gmail"))
from fgtestlib import check_schema  # noqa: E402

SYSTEM = {"INBOX", "UNREAD", "STARRED", "IMPORTANT", "SENT", "CATEGORY_PERSONAL", "CATEGORY_SOCIAL",
          "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS"}
TAKEOUT = {"inbox": "INBOX", "sent": "SENT", "starred": "STARRED", "important": "IMPORTANT",
           "unread": "UNREAD", "category personal": "CATEGORY_PERSONAL",
           "category social": "CATEGORY_SOCIAL", "category promotions": "CATEGORY_PROMOTIONS",
           "category updates": "CATEGORY_UPDATES", "category forums": "CATEGORY_FORUMS"}
OUTPUTS = ["--maildir", "md", "--mbox", "mail.mbox", "--gmail-ndjson", "mail.ndjson", "--labels-json",
           "labels.json", "--labels-tsv", "labels.tsv", "--summary-json", "summary.json"]


def generate(directory, count, seed, env=None):
    os.makedirs(directory, exist_ok=True)
    subprocess.run([sys.executable, MKCORPUS, "--count", str(count), "--seed", str(seed), "--quiet"] + OUTPUTS,
                   cwd=directory, check=True, env=env)


def tree(directory):
    """{relative path: bytes} of every file under a directory."""
    out = {}
    for path in glob.glob(os.path.join(directory, "**"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[os.path.relpath(path, directory)] = f.read()
    return out


def mboxrd_messages(path):
    """The messages of an mboxrd file, one '>' taken off quoted From lines."""
    with open(path, "rb") as f:
        data = f.read()
    chunks = re.split(rb"(?m)^From [^\n]*\n", data)
    assert chunks[0] == b"", "an mbox starts with a From line"
    out = []
    for chunk in chunks[1:]:
        assert chunk.endswith(b"\n\n"), "a message ends with an empty line"
        out.append(re.sub(rb"(?m)^>(>*From )", rb"\1", chunk[:-1]))
    return out


def leaves(part):
    if "parts" in part:
        return [leaf for child in part["parts"] for leaf in leaves(child)]
    return [part]


def header(payload, name):
    return next((h["value"] for h in payload["headers"] if h["name"].lower() == name.lower()), None)


def b64url(data):
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def without_label_headers(raw):
    """The message as written, without the label headers before it (Return-Path comes first)."""
    return b"Return-Path: " + raw.split(b"Return-Path: ", 1)[1]


def split_names(value):
    return [n for n in str(value).replace("\n", "").split(",") if n] if value is not None else []


class GeneratedMailbox(unittest.TestCase):
    """One mailbox of 1,500 messages, read back through every output."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mkcorpus-test-")
        generate(cls.dir, 1500, 42)
        path = lambda name: os.path.join(cls.dir, name)  # noqa: E731
        with open(path("mail.ndjson"), encoding="utf-8") as f:
            cls.ndjson = [json.loads(line) for line in f]
        cls.by_id = {m["id"]: m for m in cls.ndjson}
        with open(path("labels.json"), encoding="utf-8") as f:
            cls.labels = {e["id"]: e["name"] for e in json.load(f)["labels"]}
        with open(path("summary.json"), encoding="utf-8") as f:
            cls.summary = json.load(f)
        with open(path("labels.tsv"), encoding="utf-8") as f:
            cls.tsv = [line.rstrip("\n").split("\t") for line in f]
        cls.maildir = {}
        for name in glob.glob(path("md/*/*")):
            with open(name, "rb") as f:
                cls.maildir[name] = f.read()
        cls.mbox = mboxrd_messages(path("mail.mbox"))
        cls.parsed = {}  # Gmail id -> (Maildir file, parsed message)
        for name, raw in cls.maildir.items():
            message = email.message_from_bytes(raw, policy=email.policy.default)
            cls.parsed[re.search(r"\.M([0-9a-f]{16})P0\.", name).group(1)] = (name, message)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_output_holds_every_message(self):
        self.assertEqual(len(self.ndjson), 1500)
        self.assertEqual(len(self.by_id), 1500)
        self.assertEqual(len(self.maildir), 1500)
        self.assertEqual(len(self.mbox), 1500)
        self.assertEqual(len(self.tsv), 1500)
        self.assertEqual(set(self.parsed), set(self.by_id))
        self.assertEqual(os.listdir(os.path.join(self.dir, "md", "tmp")), [])

    def test_maildir_parses_and_matches_the_gmail_payload(self):
        for gmail_id, (name, message) in self.parsed.items():
            for part in message.walk():
                self.assertEqual(part.defects, [], name)
            gmail = self.by_id[gmail_id]["payload"]
            ours = [p for p in message.walk() if not p.is_multipart()]
            theirs = leaves(gmail)
            self.assertEqual([p.get_content_type() for p in ours], [p["mimeType"] for p in theirs], name)
            for mine, their in zip(ours, theirs):
                data = mine.get_payload(decode=True)
                self.assertEqual(len(data), their["body"]["size"], name)
                if "data" in their["body"]:
                    self.assertEqual(b64url(their["body"]["data"]), data, name)
                self.assertEqual(mine.get_filename() or "", their["filename"], name)
            self.assertEqual(message["Date"].datetime,
                             email.utils.parsedate_to_datetime(header(gmail, "Date")), name)
            for field in ("Subject", "From", "To", "Cc", "Message-ID", "In-Reply-To"):
                value = message[field]
                self.assertEqual(None if value is None else " ".join(str(value).split()),
                                 header(gmail, field), (name, field))

    def test_mbox_holds_the_maildir_messages(self):
        maildir = {}
        for raw in self.maildir.values():
            self.assertTrue(raw.startswith(b"X-Keywords: "))
            maildir[re.search(rb"(?m)^Message-ID: (.*)$", raw).group(1)] = without_label_headers(raw)
        for raw in self.mbox:
            message = email.message_from_bytes(raw, policy=email.policy.default)
            self.assertEqual([p.defects for p in message.walk()], [[] for _ in message.walk()])
            self.assertTrue(raw.startswith(b"X-GM-THRID: "))
            mid = re.search(rb"(?m)^Message-ID: (.*)$", raw).group(1)
            self.assertEqual(without_label_headers(raw), maildir[mid])
        # Bodies start lines with "From " now and then: the mboxrd escaping is exercised.
        with open(os.path.join(self.dir, "mail.mbox"), "rb") as f:
            self.assertGreater(len(re.findall(rb"(?m)^>From ", f.read())), 0)

    def test_ndjson_has_only_discovery_fields(self):
        for m in self.ndjson:
            check_schema(self, m, "Message")
            self.assertRegex(m["id"], r"^[0-9a-f]{16}$")
            self.assertEqual(set(m), {"id", "threadId", "labelIds", "snippet", "historyId", "internalDate",
                                      "sizeEstimate", "payload"})
            self.assertEqual(m["payload"]["partId"], "")
            self.assertEqual(m["sizeEstimate"], len(without_label_headers(self.maildir[self.parsed[m["id"]][0]])))
            date = email.utils.parsedate_to_datetime(header(m["payload"], "Date"))
            self.assertEqual(int(m["internalDate"]), int(date.timestamp()) * 1000)

    def test_threads(self):
        threads = {}
        for m in self.ndjson:
            threads.setdefault(m["threadId"], []).append(m)
        self.assertGreater(max(len(t) for t in threads.values()), 10)
        by_message_id = {header(m["payload"], "Message-ID"): m for m in self.ndjson}
        replies = 0
        for thread_id, messages in threads.items():
            messages.sort(key=lambda m: (int(m["internalDate"]), m["id"]))
            self.assertEqual(messages[0]["id"], thread_id, "a thread's id is its first message's")
            subject = header(messages[0]["payload"], "Subject")
            for m in messages[1:]:
                replies += 1
                self.assertEqual(header(m["payload"], "Subject"), "Re: " + subject)
                parent = by_message_id[header(m["payload"], "In-Reply-To")]
                self.assertEqual(parent["threadId"], thread_id)
                self.assertIn(header(m["payload"], "In-Reply-To"), header(m["payload"], "References").split())
        self.assertGreater(replies, 300)

    def test_zipf_senders(self):
        counts = {}
        for m in self.ndjson:
            sender = header(m["payload"], "From")
            counts[sender] = counts.get(sender, 0) + 1
        ranked = sorted(counts.values(), reverse=True)
        self.assertGreater(len(ranked), 100)
        self.assertGreater(ranked[1], 10 * ranked[len(ranked) // 2])  # a long tail behind a few
        human = self.summary["top_human_sender"]
        self.assertFalse(human.endswith(("github.com", "amazon.com")) or human == self.summary["me"])

    def text_of(self, m):
        return "".join(b64url(p["body"]["data"]).decode("utf-8") for p in leaves(m["payload"])
                       if p["mimeType"] == "text/plain" and not p["filename"] and "data" in p["body"])

    def test_languages(self):
        texts = [self.text_of(m) for m in self.ndjson]
        # Chinese and Japanese sentences run without spaces; Korean has Hangul.
        self.assertTrue(any(re.search(r"[\u4e00-\u9fff]{6,}[^ ]*。", t) for t in texts))
        self.assertTrue(any(re.search(r"[\u3040-\u30ff]", t) and "。" in t for t in texts))
        self.assertTrue(any(re.search(r"[\uac00-\ud7af]{2,} [\uac00-\ud7af]{2,}", t) for t in texts))
        self.assertTrue(any(re.search(r"\b\w*[éèüöäßłñ]\w*\b \w+ \w*[éèüöäßłñ]", t) for t in texts))
        subjects = [header(m["payload"], "Subject") for m in self.ndjson]
        self.assertTrue(any(re.search(r"[\u4e00-\u9fff]", s) for s in subjects))
        self.assertTrue(any(b"=?UTF-8?B?" in raw for raw in self.maildir.values()))

    def test_html_and_attachments(self):
        mimes = [p["mimeType"] for m in self.ndjson for p in leaves(m["payload"])]
        self.assertGreater(mimes.count("text/html"), 300)
        attachments = [p for m in self.ndjson for p in leaves(m["payload"]) if p["filename"]]
        self.assertGreater(len(attachments), 50)
        self.assertTrue(any(not p["filename"].isascii() for p in attachments))
        self.assertTrue(all("attachmentId" in p["body"] and "data" not in p["body"] for p in attachments))
        transfer = [p.get("Content-Transfer-Encoding") for _, msg in self.parsed.values() for p in msg.walk()
                    if p.get_filename()]
        self.assertEqual(set(transfer), {"base64"})
        encodings = {p.get("Content-Transfer-Encoding") for _, msg in self.parsed.values() for p in msg.walk()
                     if not p.is_multipart()}
        self.assertEqual(encodings, {"7bit", "8bit", "quoted-printable", "base64"})
        # Non-ASCII file names both ways: RFC 2231, and an RFC 2047 word in quotes as Gmail writes.
        self.assertTrue(any(b"filename*=UTF-8''" in raw for raw in self.maildir.values()))
        self.assertTrue(any(b'filename="=?UTF-8?B?' in raw for raw in self.maildir.values()))

    def test_labels_agree_across_outputs(self):
        names = dict(self.labels)
        self.assertIn("Travel/2026", names.values())
        self.assertIn("Travel", names.values())  # a nested label's parent exists
        for name in names.values():
            if "/" in name:
                self.assertIn(name.rsplit("/", 1)[0], names.values())
        tsv = {row[1]: row for row in self.tsv}
        seen = set()
        for m in self.ndjson:
            labels = set(m["labelIds"])
            seen |= labels
            self.assertLessEqual(labels, SYSTEM | set(names), m["id"])
            self.assertEqual(tsv[m["id"]][3].split(","), m["labelIds"])
            self.assertEqual(tsv[m["id"]][2], m["threadId"])
            self.assertEqual("<%s>" % tsv[m["id"]][0], header(m["payload"], "Message-ID"))
            wanted = sorted(names.get(l, l) for l in labels)
            # Maildir: X-Keywords and the flags S (read) and F (starred).
            name, message = self.parsed[m["id"]]
            info = name.split(":2,")[1] if ":2," in name else ""
            kept = split_names(message["X-Keywords"])
            kept += ["UNREAD"] if "S" not in info else []
            kept += ["STARRED"] if "F" in info else []
            self.assertEqual(sorted(kept), wanted, name)
            self.assertEqual("SENT" in labels, header(m["payload"], "From").endswith("<%s>" % self.summary["me"]))
        self.assertLessEqual(SYSTEM, seen)
        self.assertGreater(len(seen & set(names)), 8)
        # mbox: X-Gmail-Labels with Takeout's names.
        for raw in self.mbox:
            message = email.message_from_bytes(raw, policy=email.policy.default)
            m = self.by_id["%016x" % int(message["X-GM-MSGID"])]
            self.assertEqual(int(message["X-GM-THRID"]), int(m["threadId"], 16))
            got = sorted(TAKEOUT.get(n.lower(), n) for n in split_names(message["X-Gmail-Labels"]) if n != "Opened")
            self.assertEqual(got, sorted(names.get(l, l) for l in m["labelIds"]))

    def test_summary_counts_what_is_there(self):
        s = self.summary
        self.assertEqual(s["count"], 1500)
        self.assertEqual(sum(s["labels"].values()), sum(len(m["labelIds"]) for m in self.ndjson))
        self.assertEqual(set(s["user_labels"].items()), set(self.labels.items()))
        texts = [(header(m["payload"], "Subject") + "\n" + self.text_of(m)).lower() for m in self.ndjson]
        words = [set(re.findall(r"\w+", text)) for text in texts]
        for word, probe in s["probe_words"].items():
            if re.search(r"[\u3040-\u9fff\uac00-\ud7af]", word):
                holding = sum(word in text for text in texts)
            else:
                holding = sum(word in found for found in words)
            self.assertEqual(probe["messages"], holding, word)
        # Put in at a known rate (quoted replies add a little): one message in 5, 20, 100.
        for word, low, high in (("meeting", 1 / 5, 1 / 3), ("budget", 1 / 20, 1 / 10), ("invoice", 1 / 100, 1 / 40)):
            self.assertGreater(s["probe_words"][word]["messages"] / 1500, low * 0.7, word)
            self.assertLess(s["probe_words"][word]["messages"] / 1500, high, word)
        self.assertGreater(s["phrases"]["weekly digest"], 10)


class Determinism(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mkcorpus-seed-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_same_seed_same_bytes_anywhere(self):
        """Another hash seed, locale and time zone change nothing; another seed changes everything."""
        runs = [("a", 11, {"PYTHONHASHSEED": "1", "TZ": "UTC", "LC_ALL": "C"}),
                ("b", 11, {"PYTHONHASHSEED": "2", "TZ": "Asia/Tokyo", "LC_ALL": "C.UTF-8"}),
                ("c", 12, {"PYTHONHASHSEED": "1", "TZ": "UTC", "LC_ALL": "C"})]
        trees = {}
        for name, seed, env in runs:
            generate(os.path.join(self.dir, name), 400, seed, dict(os.environ, **env))
            trees[name] = tree(os.path.join(self.dir, name))
        self.assertEqual(len(trees["a"]), 400 + 5)
        self.assertEqual(sorted(trees["a"]), sorted(trees["b"]))
        for path in trees["a"]:
            self.assertEqual(trees["a"][path], trees["b"][path], path)
        for path in ("mail.ndjson", "mail.mbox", "labels.tsv", "summary.json"):
            self.assertNotEqual(trees["a"][path], trees["c"][path], path)

    def test_command_line(self):
        shown = subprocess.run([sys.executable, MKCORPUS, "--help"], capture_output=True, text=True)
        self.assertEqual(shown.returncode, 0)
        self.assertIn("--gmail-ndjson", shown.stdout)
        refused = subprocess.run([sys.executable, MKCORPUS, "--count", "0"], capture_output=True, text=True)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("--count must be at least 1", refused.stderr)
        unwritable = subprocess.run([sys.executable, MKCORPUS, "--count", "3", "--gmail-ndjson",
                                     os.path.join(self.dir, "missing", "mail.ndjson")], capture_output=True, text=True)
        self.assertEqual((unwritable.returncode, len(unwritable.stderr.splitlines())), (73, 1), unwritable.stderr)
        self.assertIn("No such file or directory", unwritable.stderr)


if __name__ == "__main__":
    unittest.main()
