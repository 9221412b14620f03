"""The command line: the listening line, --port-file, clean exit on SIGTERM / shutdown."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
import urllib.request

from fgtestlib import HERE, NOW

SCRIPT = os.path.join(HERE, "fake_gmail.py")


class CliTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fake-gmail-cli-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    @staticmethod
    def reap(proc):
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()

    def start(self, *extra):
        port_file = os.path.join(self.tmp, "url")
        proc = subprocess.Popen([SCRIPT, "--port", "0", "--port-file", port_file,
                                 "--now", str(NOW), "--demo-count", "25", *extra],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(self.reap, proc)
        line = proc.stdout.readline()
        return proc, line, port_file

    def test_listening_line_port_file_and_sigterm(self):
        proc, line, port_file = self.start()
        self.assertRegex(line, r"^listening http://127\.0\.0\.1:\d+\n$")
        url = line.split()[1]
        with open(port_file) as f:
            self.assertEqual(f.read().strip(), url)
        with urllib.request.urlopen(url + "/_admin/state", timeout=5) as resp:
            self.assertEqual(len(json.load(resp)["messages"]), 25)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertEqual(proc.stderr.read(), "")        # quiet by default

    def test_admin_shutdown_and_verbose(self):
        proc, line, _ = self.start("--verbose")
        url = line.split()[1]
        req = urllib.request.Request(url + "/_admin/shutdown", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=5) as resp:
            self.assertEqual(json.load(resp), {"stopping": True})
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertIn("25 messages", proc.stderr.read())

    def test_sigint_and_bad_source(self):
        proc, line, _ = self.start()
        proc.send_signal(signal.SIGINT)
        self.assertEqual(proc.wait(timeout=10), 0)
        bad = subprocess.run([sys.executable, SCRIPT, "--gmail-ndjson",
                              os.path.join(self.tmp, "missing.ndjson")],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("missing.ndjson", bad.stderr)

    def test_state_survives_a_restart(self):
        """--state: a restarted server serves the same mailbox, changes included, and its
        history goes on from where it stopped (scripts/demo --serve)."""
        state = os.path.join(self.tmp, "mailbox.state")
        proc, line, _ = self.start("--state", state)
        url = line.split()[1]
        with urllib.request.urlopen(url + "/_admin/state", timeout=5) as resp:
            before = json.load(resp)
        first = before["messages"][0]["id"]
        token_req = urllib.request.Request(
            url + "/token", method="POST",
            data=b"grant_type=refresh_token&refresh_token=demo-refresh-token"
                 b"&client_id=hudson-demo-client&client_secret=hudson-demo-secret")
        with urllib.request.urlopen(token_req, timeout=5) as resp:
            token = json.load(resp)["access_token"]
        modify = urllib.request.Request(
            url + "/gmail/v1/users/me/messages/%s/modify" % first, method="POST",
            data=json.dumps({"addLabelIds": ["STARRED"]}).encode(),
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        urllib.request.urlopen(modify, timeout=5).close()
        with urllib.request.urlopen(url + "/_admin/state", timeout=5) as resp:
            changed = json.load(resp)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertTrue(os.path.exists(state))

        # Without --now the generated ids would differ; with --state they are not generated.
        again = subprocess.Popen([SCRIPT, "--port", "0", "--state", state],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(self.reap, again)
        url = again.stdout.readline().split()[1]
        with urllib.request.urlopen(url + "/_admin/state", timeout=5) as resp:
            after = json.load(resp)
        self.assertEqual(after["messages"], changed["messages"])
        self.assertEqual(after["historyId"], changed["historyId"])
        self.assertIn("STARRED", [m for m in after["messages"] if m["id"] == first][0]["labelIds"])

    def test_state_file_that_is_not_one(self):
        state = os.path.join(self.tmp, "garbage.state")
        with open(state, "wb") as f:
            f.write(b"not a pickle")
        proc = subprocess.run([SCRIPT, "--port", "0", "--state", state],
                              capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("not a saved mailbox", proc.stderr)
