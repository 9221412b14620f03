#!/usr/bin/env python3
"""Hudson's benchmark: Hudson against the sqlite3 CLI, notmuch and mu on one mailbox.

Run it through `bench/run` (which installs what it needs first); see bench/README.md.
Everything it generates (corpus, stores, notmuch and mu databases, results) goes to a
scratch directory (`bench/out/` by default, ignored by git), never into the repository.

Steps, each recorded under OUT/results/<size>/:
  corpus     bench/mkcorpus.py: Maildir, Gmail-API NDJSON, labels, summary
  ingest     the fake Gmail (latency 0, no quota) -> hd-auth add -> hd-sync --catch-up
             --prefetch-days 0 (lookback 0) under /usr/bin/time -v: messages/s, peak RSS
  notmuch    notmuch new + labels as tags (notmuch tag --batch), timed
  mu         mu init + mu index, timed (with notmuch: the two side by side)
  install    scripts/install into the scratch directory: installed size, the size of each
             way to package the commands, and the later rows time the installed commands
  rows       hyperfine -N: each Hudson command beside its baselines in one run
  mark       hd-mark archive of 1,000 piped threads (--no-flush), trash beside it, then a
             flush of each
             and its request count from the fake's /_admin/requests
  rules      50 rules (hd-filters rules apply --no-flush, one action) beside 50 hd-search
             --messages --count of the same queries, then a flush of the rules' changes
             and its request count
  two-way    hd-export of a two-way Maildir (and --notmuch) export of the whole store, nothing
             changed and after 1,000 client changes, beside lieer's gmi pull / gmi push
  paced      the fake at 80 ms latency and 6,000 units/min: backfill rate per minute
             against the background sub-budget. Options make it the backfill at Gmail's
             ceiling (issue 43 §4): --paced-latency-ms 100-300, --paced-quota 15000,
             --paced-faults 429:P,503:P (a share of messages.get answered so), and with
             --paced-sample-seconds every so often the messages stored, hd-sync's RSS, the
             fake's units, and the load; --paced-push-every S times `hd-mark archive` of an
             inbox thread (its push included) during the backfill, and as many after it with
             no backfill; --paced-recent-days D polls `hd-search --messages --count` of the
             newest D days of the corpus until they are all searchable
  sizes      store bytes per message: Hudson, notmuch, mu
"""
import argparse
import calendar
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The sqlite3 shell for set-up and checks (never a timed row): it waits for a lock another
# process holds for a moment (a command's checkpoint helper finishing its WAL) instead of
# failing at once with "database is locked".
SQLITE_CLI = ["sqlite3", "-cmd", ".timeout 30000"]
MKCORPUS = os.path.join(ROOT, "bench", "mkcorpus.py")
ACCOUNT = "alex.hudson@example.com"
# QuotaBucket's defaults (Sources/HudsonGmail/QuotaBucket.swift): background may use 95 %.
BACKGROUND_SHARE = 0.95
UNITS_GET = 5
UNITS_LIST = 5
# A baseline whose one recorded run took longer than this is timed with fewer runs (hyperfine).
SLOW_BASELINE_SECONDS = 2.0
SLOW_BASELINE_RUNS = 3
PAGE = 500  # hd-sync --catch-up lists pages of 500 (AccountWorker.catchUpPageSize)


def log(*parts):
    print("bench:", *parts, file=sys.stderr, flush=True)


def run(cmd, env=None, check=True, capture=False, **kw):
    log("$", " ".join(cmd) if isinstance(cmd, list) else cmd)
    result = subprocess.run(cmd, env=env, check=False, text=True,
                            stdout=subprocess.PIPE if capture else None, **kw)
    if check and result.returncode != 0:
        raise SystemExit("bench: command failed (%d): %s" % (result.returncode, cmd))
    return result


def write_json(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")


def unique_bytes(path):
    """Bytes of the files under path, each hard-linked file once."""
    seen, total = set(), 0
    for base, _, files in os.walk(path):
        for name in files:
            info = os.lstat(os.path.join(base, name))
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total


def du(path):
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except FileNotFoundError:
                pass
    return total


def time_v(stderr_text):
    """Wall seconds and peak RSS (KiB) from /usr/bin/time -v output."""
    wall = rss = None
    for line in stderr_text.splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            clock = line.rsplit(" ", 1)[1]
            seconds = 0.0
            for part in clock.split(":"):
                seconds = seconds * 60 + float(part)
            wall = seconds
        elif line.startswith("Maximum resident set size"):
            rss = int(line.rsplit(" ", 1)[1])
    return wall, rss


# --------------------------------------------------------------------------- the fake


class Fake:
    """tools/fake-gmail serving the corpus NDJSON on a free port."""

    def __init__(self, work, ndjson, labels_json, latency_ms=0, quota=0, latency_ms_max=0, extra=()):
        os.makedirs(work, exist_ok=True)
        self.url_file = os.path.join(work, "fake.url")
        if os.path.exists(self.url_file):
            os.unlink(self.url_file)
        cmd = [sys.executable, os.path.join(ROOT, "tools/fake-gmail/fake_gmail.py"), "--port", "0",
               "--port-file", self.url_file, "--gmail-ndjson", ndjson, "--labels-json", labels_json,
               "--account", ACCOUNT, "--latency-ms", str(latency_ms), "--quota-per-minute", str(quota)] + list(extra)
        if latency_ms_max > latency_ms:
            cmd += ["--latency-ms-max", str(latency_ms_max)]
        log("$", " ".join(cmd))
        self.log = open(os.path.join(work, "fake.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 900
        while not (os.path.exists(self.url_file) and os.path.getsize(self.url_file) > 0):
            if self.proc.poll() is not None:
                raise SystemExit("bench: the fake Gmail exited; see %s" % self.log.name)
            if time.time() > deadline:
                raise SystemExit("bench: the fake Gmail did not start")
            time.sleep(0.2)
        with open(self.url_file) as f:
            self.url = f.read().strip()

    def admin(self, path, method="GET", body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + "/_admin/" + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=120) as response:
            raw = response.read()
            return json.loads(raw) if raw else None

    def stop(self, seconds=30):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(seconds)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def hudson_env(binaries, work, fake, quota_per_minute):
    env = dict(os.environ)
    env.update({
        "PATH": binaries + os.pathsep + env.get("PATH", ""),
        "HUDSON_DB": os.path.join(work, "hudson.sqlite3"),
        "HUDSON_CONFIG_DIR": os.path.join(work, "config"),
        "HUDSON_GMAIL_URL": fake.url,
        "HUDSON_OAUTH_TOKEN_URL": fake.url + "/token",
        "HUDSON_OAUTH_AUTH_URL": fake.url + "/auth",
        "HUDSON_QUOTA_PER_MINUTE": str(quota_per_minute),
    })
    env.pop("HUDSON_ACCOUNT", None)
    return env


def offline_env(binaries, work):
    """The environment of Hudson commands on the store in `work` with no Gmail at all."""
    env = dict(os.environ)
    env.update({"PATH": binaries + os.pathsep + env.get("PATH", ""),
                "HUDSON_DB": os.path.join(work, "hudson.sqlite3"),
                "HUDSON_CONFIG_DIR": os.path.join(work, "config")})
    for name in ("HUDSON_ACCOUNT", "HUDSON_GMAIL_URL", "HUDSON_OAUTH_TOKEN_URL"):
        env.pop(name, None)
    return env


def connect_account(env, work, fake):
    secret = os.path.join(work, "client_secret.json")
    write_json(secret, {"installed": {
        "client_id": "hudson-demo-client", "client_secret": "hudson-demo-secret",
        "auth_uri": fake.url + "/auth", "token_uri": fake.url + "/token",
        "redirect_uris": ["http://localhost"]}})
    token = os.path.join(work, "refresh_token")
    with open(token, "w") as f:
        f.write("demo-refresh-token\n")
    run(["hd-auth", "add", ACCOUNT, "--client-secret", secret, "--refresh-token-file", token,
         "--lookback-days", "0"], env=env)


def threads_page(walk):
    """The best the sqlite3 CLI does for "the first 50 threads, newest first": `walk`
    (FROM ... WHERE ... ORDER BY a key DESC) read from its newest end, distinct threads,
    stop at 50, then each thread's rollup row and newest message."""
    return """
        SELECT r.thread_id, r.last_message_at, n.subject, r.sender, r.labels
          FROM (SELECT DISTINCT m.thread_id, m.account_id
                  %s LIMIT 50) AS t
          JOIN thread_rollup AS r ON r.thread_id = t.thread_id AND r.account_id = t.account_id
          JOIN messages AS n ON n.id = r.newest_message_id;
        """ % walk


# --------------------------------------------------------------------------- steps


class Bench:
    def __init__(self, args):
        self.args = args
        self.size = args.size
        self.out = os.path.abspath(args.out)
        self.results = os.path.join(self.out, "results", str(self.size))
        self.corpus_dir = os.path.join(self.out, "corpus", str(self.size))
        self.work = os.path.join(self.out, "work", str(self.size))
        os.makedirs(self.results, exist_ok=True)
        self.binaries = args.bin
        self.summary = None
        self.fake = None
        self.env = None

    # corpus -------------------------------------------------------------------

    def corpus(self):
        c = self.corpus_dir
        done = os.path.join(c, "done")
        self.paths = {
            "maildir": os.path.join(c, "maildir"), "ndjson": os.path.join(c, "gmail.ndjson"),
            "labels_tsv": os.path.join(c, "labels.tsv"), "summary": os.path.join(c, "summary.json"),
            "labels_json": os.path.join(c, "labels.json"),
        }
        if not os.path.exists(done):
            shutil.rmtree(c, ignore_errors=True)
            os.makedirs(c)
            started = time.time()
            outputs = ["--gmail-ndjson", self.paths["ndjson"], "--summary-json", self.paths["summary"],
                       "--labels-json", self.paths["labels_json"]]
            if self.args.baselines:  # notmuch and mu read the Maildir; the tags come from the TSV
                outputs += ["--maildir", self.paths["maildir"], "--labels-tsv", self.paths["labels_tsv"]]
            run([sys.executable, MKCORPUS, "--count", str(self.size), "--seed", "42"] + outputs)
            with open(done, "w") as f:
                f.write("%.1f\n" % (time.time() - started))
        partial = os.path.join(c, "maildir.partial")
        if self.args.baselines and (not os.path.isdir(self.paths["maildir"]) or os.path.exists(partial)):
            # A corpus made with --no-baselines has no Maildir for notmuch and mu: the seed
            # writes the same mail again, as a Maildir alone (mkcorpus: one seed, the same bytes).
            shutil.rmtree(self.paths["maildir"], ignore_errors=True)
            open(partial, "w").close()
            run([sys.executable, MKCORPUS, "--count", str(self.size), "--seed", "42",
                 "--maildir", self.paths["maildir"], "--labels-tsv", self.paths["labels_tsv"]])
            os.unlink(partial)
        with open(self.paths["summary"]) as f:
            self.summary = json.load(f)

    # Hudson ingest ------------------------------------------------------------

    def ingest(self):
        if self.args.direct_import:
            return self.direct_import()
        work = os.path.join(self.work, "hudson")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.fake = Fake(work, self.paths["ndjson"], self.paths["labels_json"])
        self.env = hudson_env(self.binaries, work, self.fake, 100_000_000)
        connect_account(self.env, work, self.fake)
        started = time.time()
        result = run(["/usr/bin/time", "-v", "hd-sync", "--catch-up", "--prefetch-days", "0", "--json"],
                     env=self.env, capture=True, stderr=subprocess.PIPE)
        elapsed = time.time() - started
        sys.stderr.write(result.stderr[-2000:])
        wall, rss = time_v(result.stderr)
        report = json.loads(result.stdout.strip().splitlines()[-1])
        db = self.env["HUDSON_DB"]
        run(SQLITE_CLI + [db, "PRAGMA wal_checkpoint(TRUNCATE);"], capture=True)
        counts = run(SQLITE_CLI + [db, "SELECT count(*), sum(body_state) FROM messages;"], capture=True).stdout.split("|")
        messages = int(counts[0])
        requests = self.fake.admin("requests")
        data = {
            "messages": messages, "bodies": int(counts[1]), "seconds": wall or elapsed,
            "messages_per_second": messages / (wall or elapsed), "peak_rss_kib": rss,
            "report": report, "requests": len(requests),
            "store_bytes": os.path.getsize(db),
        }
        write_json(os.path.join(self.results, "ingest.json"), data)
        log("ingest: %d messages in %.1f s = %.0f/s, peak RSS %.1f MiB" % (
            messages, data["seconds"], data["messages_per_second"], (rss or 0) / 1024))

    def reuse_store(self):
        """Times the store an earlier run built (steps without ingest): no fake, so the
        mark step skips its flush. Builds the store when there is none."""
        work = os.path.join(self.work, "hudson")
        if not os.path.exists(os.path.join(work, "hudson.sqlite3")):
            return self.ingest()
        self.env = dict(os.environ)
        self.env.update({"PATH": self.binaries + os.pathsep + self.env.get("PATH", ""),
                         "HUDSON_DB": os.path.join(work, "hudson.sqlite3"),
                         "HUDSON_CONFIG_DIR": os.path.join(work, "config")})
        self.env.pop("HUDSON_ACCOUNT", None)
        # A store built by an older Hudson is refused by the read-only commands until a
        # writing command migrates it; a dry run writes nothing else.
        subprocess.run(["hd-mark", "--dry-run", "archive", "thread:0"], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def direct_import(self):
        """Builds the store without HTTP (bench/import): for sizes the fake cannot hold."""
        work = os.path.join(self.work, "hudson")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.env = dict(os.environ)
        self.env.update({"PATH": self.binaries + os.pathsep + self.env.get("PATH", ""),
                         "HUDSON_DB": os.path.join(work, "hudson.sqlite3"),
                         "HUDSON_CONFIG_DIR": os.path.join(work, "config")})
        self.env.pop("HUDSON_ACCOUNT", None)
        result = run(["/usr/bin/time", "-v", os.path.join(self.binaries, "hudson-bench-import"), self.env["HUDSON_DB"],
                      self.paths["ndjson"], self.paths["labels_json"], ACCOUNT], env=self.env, capture=True,
                     stderr=subprocess.PIPE)
        sys.stderr.write(result.stderr[-1500:])
        wall, rss = time_v(result.stderr)
        db = self.env["HUDSON_DB"]
        run(SQLITE_CLI + [db, "PRAGMA wal_checkpoint(TRUNCATE);"], capture=True)
        messages = int(run(SQLITE_CLI + [db, "SELECT count(*) FROM messages;"], capture=True).stdout)
        data = {"messages": messages, "bodies": messages, "seconds": wall, "messages_per_second": messages / wall,
                "peak_rss_kib": rss, "direct_import": True, "store_bytes": os.path.getsize(db)}
        write_json(os.path.join(self.results, "ingest.json"), data)
        log("direct import: %d messages in %.1f s = %.0f/s" % (messages, wall, messages / wall))

    # notmuch and mu -----------------------------------------------------------

    # Where the baselines live: one place, so timing an earlier run's databases again
    # looks where building them put them.
    def notmuch_config(self):
        return os.path.join(self.work, "notmuch", "config")

    def notmuch_database(self):
        return os.path.join(self.paths["maildir"], ".notmuch")

    def notmuch_env(self):
        return dict(os.environ, NOTMUCH_CONFIG=self.notmuch_config())

    def mu_home(self):
        return os.path.join(self.work, "mu")

    def reuse_notmuch(self):
        """Times the notmuch database an earlier run built (steps without notmuch); builds it when there is none."""
        if not (os.path.exists(self.notmuch_config()) and os.path.isdir(self.notmuch_database())):
            self.notmuch()

    def notmuch(self, side_by_side=False):
        work = os.path.join(self.work, "notmuch")
        maildir = self.paths["maildir"]
        shutil.rmtree(self.notmuch_database(), ignore_errors=True)
        os.makedirs(work, exist_ok=True)
        config = self.notmuch_config()
        with open(config, "w") as f:
            f.write("[database]\npath=%s\n[user]\nname=Alex Hudson\nprimary_email=%s\n"
                    "[new]\ntags=\nignore=\n[search]\nexclude_tags=\n[maildir]\nsynchronize_flags=true\n"
                    % (maildir, ACCOUNT))
        env = self.notmuch_env()
        started = time.time()
        result = run(["/usr/bin/time", "-v", "notmuch", "new", "--quiet"], env=env, capture=True,
                     stderr=subprocess.PIPE)
        new_seconds, new_rss = time_v(result.stderr)
        new_seconds = new_seconds or time.time() - started
        # Labels as tags: one line per message, names as the user sees them.
        names = dict(self.summary["user_labels"])
        batch = os.path.join(work, "tags.batch")
        with open(self.paths["labels_tsv"]) as src, open(batch, "w") as dst:
            for line in src:
                message_id, _, _, labels = line.rstrip("\n").split("\t")
                tags = [names.get(l, l).lower().replace(" ", "_") for l in labels.split(",") if l]
                if tags:
                    dst.write("%s -- id:%s\n" % (" ".join("+" + t for t in tags), message_id))
        started = time.time()
        run(["notmuch", "tag", "--batch", "--input=" + batch], env=env)
        tag_seconds = time.time() - started
        data = {
            "messages": self.size, "new_seconds": new_seconds, "tag_seconds": tag_seconds,
            "messages_per_second": self.size / (new_seconds + tag_seconds),
            "new_messages_per_second": self.size / new_seconds, "peak_rss_kib": new_rss,
            "database_bytes": du(self.notmuch_database()), "side_by_side": side_by_side,
        }
        write_json(os.path.join(self.results, "notmuch.json"), data)
        log("notmuch: new %.1f s + tag %.1f s = %.0f messages/s" % (new_seconds, tag_seconds, data["messages_per_second"]))

    def baselines_side_by_side(self):
        """notmuch's and mu's indexes built at once, one on each core: they read the same
        Maildir into databases of their own, and built one after the other they were the
        longest part of a 1,000,000-message run (57 + 32 and 35 minutes). Each one's time
        is then its time beside the other, recorded as such; the pair's wall time too."""
        from concurrent.futures import ThreadPoolExecutor
        started = time.time()
        with ThreadPoolExecutor(max_workers=2) as pool:
            builds = [pool.submit(self.notmuch, side_by_side=True), pool.submit(self.mu, side_by_side=True)]
            # A failed build's SystemExit is raised here, once the other build has finished
            # too (leaving the pool waits for it: tens of minutes at 1,000,000 messages).
            for build in builds:
                build.result()
        wall = time.time() - started
        write_json(os.path.join(self.results, "baselines.json"), {"messages": self.size, "seconds": wall})
        log("notmuch and mu side by side: %.1f s" % wall)

    def reuse_mu(self):
        """Times the mu database an earlier run built (steps without mu); builds it when there is none."""
        if not os.path.isdir(os.path.join(self.mu_home(), "xapian")):
            self.mu()

    def mu(self, side_by_side=False):
        home = self.mu_home()
        shutil.rmtree(home, ignore_errors=True)
        run(["mu", "init", "--muhome=" + home, "--maildir=" + self.paths["maildir"],
             "--my-address=" + ACCOUNT], capture=True)
        started = time.time()
        result = run(["/usr/bin/time", "-v", "mu", "index", "--muhome=" + home, "--quiet"], capture=True,
                     stderr=subprocess.PIPE)
        seconds, rss = time_v(result.stderr)
        seconds = seconds or time.time() - started
        data = {"messages": self.size, "seconds": seconds, "messages_per_second": self.size / seconds,
                "peak_rss_kib": rss, "database_bytes": du(home), "side_by_side": side_by_side}
        write_json(os.path.join(self.results, "mu.json"), data)
        log("mu: index %.1f s = %.0f messages/s" % (seconds, data["messages_per_second"]))

    # the timed rows -----------------------------------------------------------

    def queries(self):
        """The searches, chosen from the corpus summary so every size asks the same kind of thing."""
        s = self.summary
        probes = s["probe_words"]
        # The word put into one message in 5; the invented word whose count is nearest one
        # message in 2,000 (at least 3), so that small sizes still find something.
        common = min((w for w in probes if probes[w]["one_in"]), key=lambda w: (probes[w]["one_in"], w))
        target = max(3, self.size // 2000)
        invented = [w for w in probes if probes[w]["invented"]]
        found = [w for w in invented if probes[w]["messages"] >= 3] or invented
        rare = min(found, key=lambda w: (abs(probes[w]["messages"] - target), w))
        sender = s["top_human_sender"]
        # The most used user label, so the half-year below holds some of its mail at every
        # size (the first label had none of its 14 messages there at 2,000).
        counts = s["labels"]
        label_id = max(s["user_labels"], key=lambda l: (counts.get(l, 0), l))
        label = s["user_labels"][label_id]
        return {"common": common, "rare": rare, "prefix": "proj", "sender": sender,
                "label_id": label_id, "label": label, "after": "2023/01/01", "before": "2023/07/01",
                "phrase": "weekly digest"}

    def sql_file(self, name, sql):
        path = os.path.join(self.work, "sql", name + ".sql")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(sql.strip() + "\n")
        return path

    def rows(self):
        q = self.queries()
        write_json(os.path.join(self.results, "queries.json"), q)
        db = self.env["HUDSON_DB"]
        nm = ["notmuch", "search", "--limit=50"]
        # Without baselines neither notmuch nor mu is built (their commands are dropped below).
        mu = ["mu", "find", "--muhome=" + self.mu_home(), "--maxnum=50", "--sortfield=date", "--reverse"]
        epoch = lambda d: calendar.timegm(time.strptime(d, "%Y/%m/%d"))  # noqa: E731
        after, before = epoch(q["after"]), epoch(q["before"])
        iso = lambda d: d.replace("/", "-")  # noqa: E731
        compact = lambda d: d.replace("/", "")  # noqa: E731
        day_before = time.strftime("%Y-%m-%d", time.gmtime(before - 86400))

        def sqlite(name, sql):
            return ["sqlite3", "-readonly", db, ".read " + self.sql_file(name, sql)]

        def fts_threads(match):
            # The FTS doclist walked backwards (rowid follows the date).
            return threads_page("""FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid
                         WHERE fts_messages MATCH '%s'
                           AND NOT EXISTS (SELECT 1 FROM message_labels AS l
                                            WHERE l.message_id = m.id AND l.label IN ('SPAM', 'TRASH'))
                         ORDER BY fts_messages.rowid DESC""" % match.replace("'", "''"))

        rows = []
        rows.append(("startup", "start-up", [
            ("hudson", ["hd-ls", "--version"]),
            ("sqlite3", ["sqlite3", ":memory:", "select 1"]),
        ]))
        rows.append(("ls", "hd-ls first page (50 threads)", [
            ("hudson", ["hd-ls"]),
            ("sqlite3", sqlite("ls", """
                SELECT r.account_id, r.thread_id, r.last_message_at, m.gmail_id, m.subject, m.snippet, r.sender,
                       r.participants, r.message_count, r.unread_count, r.labels
                  FROM thread_labels AS tl
                  JOIN thread_rollup AS r ON r.account_id = tl.account_id AND r.last_message_at = tl.last_message_at
                                         AND r.thread_id = tl.thread_id
                  JOIN messages AS m ON m.id = r.newest_message_id
                 WHERE tl.account_id = 1 AND tl.label = 'INBOX'
                 ORDER BY tl.last_message_at DESC, tl.thread_id DESC LIMIT 50;""")),
            ("notmuch", nm + ["tag:inbox"]),
            ("mu", mu + ["tag:inbox"]),
        ]))
        searches = [
            ("common", "common word '%s'" % q["common"], [q["common"]], '"%s" *' % q["common"],
             [q["common"]], [q["common"]]),
            ("rare", "rare word '%s'" % q["rare"], [q["rare"]], '"%s" *' % q["rare"], [q["rare"]], [q["rare"]]),
            ("prefix", "prefix '%s'" % q["prefix"], [q["prefix"]], '"%s" *' % q["prefix"],
             [q["prefix"] + "*"], [q["prefix"] + "*"]),
            ("phrase", 'phrase "%s"' % q["phrase"], ['"%s"' % q["phrase"]], '"%s"' % q["phrase"],
             ['"%s"' % q["phrase"]], ['"%s"' % q["phrase"]]),
        ]
        for key, title, hudson, match, notmuch_q, mu_q in searches:
            rows.append(("search-" + key, "hd-search " + title, [
                ("hudson", ["hd-search", "-n", "50"] + hudson),
                ("sqlite3", sqlite("search-" + key, fts_threads(match))),
                ("notmuch", nm + notmuch_q),
                ("mu", mu + mu_q),
            ]))
        rows.append(("search-from", "hd-search from:%s" % q["sender"], [
            ("hudson", ["hd-search", "-n", "50", "from:" + q["sender"]]),
            ("sqlite3", sqlite("search-from", threads_page("""FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id
                         WHERE a.address = '%s' AND a.role = 'from'
                         ORDER BY a.message_id DESC""" % q["sender"]))),
            ("notmuch", nm + ["from:" + q["sender"]]),
            ("mu", mu + ["from:" + q["sender"]]),
        ]))
        rows.append(("search-label-date", "hd-search label:%s after:%s before:%s" % (q["label"], q["after"], q["before"]), [
            ("hudson", ["hd-search", "-n", "50", "label:" + q["label"], "after:" + q["after"], "before:" + q["before"]]),
            ("sqlite3", sqlite("search-label-date", threads_page("""FROM message_labels AS l JOIN messages AS m ON m.id = l.message_id
                         WHERE l.label = '%s' AND l.message_id >= %d AND l.message_id < %d
                         ORDER BY l.message_id DESC""" % (q["label_id"], after * 1000 * 1000, before * 1000 * 1000)))),
            ("notmuch", nm + ["tag:" + q["label"].lower(), "date:%s..%s" % (iso(q["after"]), day_before)]),
            ("mu", mu + ["tag:" + q["label"].lower(), "date:%s..%s" % (compact(q["after"]), day_before.replace("-", ""))]),
        ]))
        # The same label alone: its first page, from every member it has.
        rows.append(("search-label", "hd-search label:%s (no dates)" % q["label"], [
            ("hudson", ["hd-search", "-n", "50", "label:" + q["label"]]),
            ("sqlite3", sqlite("search-label", threads_page("""FROM message_labels AS l JOIN messages AS m ON m.id = l.message_id
                         WHERE l.label = '%s'
                         ORDER BY l.message_id DESC""" % q["label_id"]))),
            ("notmuch", nm + ["tag:" + q["label"].lower()]),
            ("mu", mu + ["tag:" + q["label"].lower()]),
        ]))
        # hd-show: the newest thread of 20 messages (or the longest there is).
        thread = run(SQLITE_CLI + ["-readonly", db, """
            SELECT r.thread_id, r.message_count, m.message_id_header FROM thread_rollup AS r
              JOIN messages AS m ON m.id = r.newest_message_id
             ORDER BY abs(r.message_count - 20), r.last_message_at DESC LIMIT 1;"""], capture=True).stdout.strip().split("|")
        thread_id, count, message_id = thread[0], int(thread[1]), thread[2].strip("<>")
        nm_thread = run(["notmuch", "search", "--output=threads", "id:" + message_id], env=self.notmuch_env(),
                        capture=True).stdout.strip() if self.args.baselines else ""
        rows.append(("show", "hd-show of a %d-message thread" % count, [
            ("hudson", ["hd-show", "thread:" + thread_id]),
            ("sqlite3", sqlite("show", """
                SELECT m.subject, m.sender, m.to_header, m.date_header, b.text FROM messages AS m
                  JOIN message_bodies AS b ON b.message_id = m.id
                 WHERE m.thread_id = '%s' AND m.account_id = 1 ORDER BY m.internal_date;""" % thread_id)),
            ("notmuch", ["notmuch", "show", "--format=text", nm_thread]),
        ]))
        self.thread_for_show = thread_id
        return rows + self.read_rows(q, sqlite) + self.mcp_rows(q) + self.sender_rows(q, sqlite)

    def sender_rows(self, q, sqlite):
        """hd-senders and hd-address (issue 42), each beside the sqlite3 statement closest
        to it and notmuch's `address` command for the same mail or prefix."""
        prefix = q["sender"][:3]
        return [
            # The corpus ends on 2026-01-01 (mkcorpus.SPAN_END): its last 90 days.
            ("senders", "hd-senders after:2025/10/03 (90 days, by list or sender)", [
                ("hudson", ["hd-senders", "-n", "0", "after:2025/10/03"]),
                ("sqlite3", sqlite("senders", """
                    SELECT coalesce(m.list_id, a.address), count(*), count(DISTINCT m.thread_id), max(m.internal_date)
                      FROM messages AS m LEFT JOIN message_addresses AS a ON a.message_id = m.id AND a.role = 'from'
                     WHERE m.internal_date >= 1759449600000
                     GROUP BY 1 ORDER BY 2 DESC;""")),
                ("notmuch", ["notmuch", "address", "--output=sender", "--output=count", "date:2025-10-03.."]),
            ]),
            ("address", "hd-address %s" % prefix, [
                ("hudson", ["hd-address", prefix]),
                ("sqlite3", sqlite("address", """
                    SELECT address, name, sent, received FROM address_book
                     WHERE address LIKE '%s%%' OR name LIKE '%s%%'
                     ORDER BY sent DESC, received DESC, last_at DESC LIMIT 50;""" % (prefix, prefix))),
                ("notmuch", ["notmuch", "address", "--output=sender", "--output=recipients", "--deduplicate=address",
                             "from:%s* or to:%s*" % (prefix, prefix)]),
            ]),
        ]

    def mcp_rows(self, q):
        """hd-mcp (issue 40): a client's whole start (initialize, initialized, tools/list),
        which reads nothing from the store, and a search through the protocol beside the
        same search by hd-search. hyperfine 1.15 has no --input, so both sides of a row
        run under `sh -c` with their input redirected: the shell is in every timing."""
        def exchange(name, messages):
            path = os.path.join(self.work, "mcp", name + ".jsonl")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                for message in messages:
                    f.write(json.dumps(message) + "\n")
            return path
        start = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        search = start[:2] + [{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                               "params": {"name": "search", "arguments": {"query": q["common"], "limit": 50,
                                                                          "max_chars": 200000}}}]
        shell = lambda command: ["sh", "-c", command]  # noqa: E731
        return [
            ("mcp-initialize", "hd-mcp: initialize, initialized, tools/list (the whole exchange)", [
                ("hudson", shell("hd-mcp < %s" % quote(exchange("initialize", start)))),
            ]),
            ("mcp-search", "hd-mcp search '%s' (50 threads) beside hd-search -n 50" % q["common"], [
                ("hudson", shell("hd-mcp < %s" % quote(exchange("search", search)))),
                ("hd-search", shell("hd-search -n 50 %s < /dev/null" % quote(q["common"]))),
            ]),
        ]

    def read_rows(self, q, sqlite):
        """Issue 19's reads at the cost of SQLite: label counts, a count, a size search,
        whole result sets to a pipe (text and JSON), the change feed, the time to the first
        line, and a deep page. Each Hudson command beside the best sqlite3 query for the
        same result on the same file (and notmuch and mu where they have the operation)."""
        db = self.env["HUDSON_DB"]
        w = q["common"]
        match = '"%s" *' % w
        # Spam and trash left out as one list read once, not a seek per message: the
        # faster of the two forms here, as it is for Hudson's whole-result reads.
        outside = "m.id NOT IN (SELECT message_id FROM message_labels WHERE label IN ('SPAM', 'TRASH'))"
        pipe = lambda argv: ["sh", "-c", " ".join(quote(a) for a in argv) + " | wc -l"]  # noqa: E731
        first = lambda argv: ["sh", "-c", " ".join(quote(a) for a in argv) + " | head -1"]  # noqa: E731
        every_message = """
            SELECT 'message:' || m.gmail_id, m.internal_date, m.sender, m.subject,
                   (SELECT group_concat(l.label, ',') FROM message_labels AS l WHERE l.message_id = m.id)
              FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid
             WHERE fts_messages MATCH '%s' AND %s
             ORDER BY fts_messages.rowid DESC;""" % (match, outside)
        # The same records as hd-search --json, byte for byte the same length (docs/json.md:
        # every member, the date as RFC 3339 and as seconds, label names and ids), so the
        # row compares the cost of the same output. Issue 19's narrower form (fewer members,
        # a quarter fewer bytes) is kept beside it as `sqlite3-fewer-members`.
        every_message_json = """
            SELECT json_object('type', 'message', 'id', 'message:' || m.gmail_id, 'account', a.email,
                               'message_id', m.gmail_id, 'thread', 'thread:' || m.thread_id,
                               'date', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', m.internal_date / 1000, 'unixepoch'),
                               'timestamp', m.internal_date / 1000,
                               'from', m.sender, 'to', m.to_header, 'subject', m.subject,
                               'snippet', m.snippet, 'size', m.size_estimate,
                               'has_attachment', json(iif(m.has_attachment, 'true', 'false')),
                               'body_stored', json(iif(m.body_state = 1, 'true', 'false')),
                               'attachment_known', json(iif(m.attachment_known, 'true', 'false')),
                               'labels', (SELECT json_group_array(coalesce(lb.name, l.label)) FROM message_labels AS l
                                            LEFT JOIN labels AS lb ON lb.account_id = m.account_id AND lb.id = l.label
                                           WHERE l.message_id = m.id),
                               'label_ids', (SELECT json_group_array(l.label) FROM message_labels AS l WHERE l.message_id = m.id))
              FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid JOIN accounts AS a ON a.id = m.account_id
             WHERE fts_messages MATCH '%s' AND %s
             ORDER BY fts_messages.rowid DESC;""" % (match, outside)
        every_message_json_fewer = """
            SELECT json_object('type', 'message', 'id', 'message:' || m.gmail_id, 'thread', 'thread:' || m.thread_id,
                               'date', m.internal_date, 'from', m.sender, 'to', m.to_header, 'subject', m.subject,
                               'snippet', m.snippet, 'size', m.size_estimate,
                               'label_ids', (SELECT json_group_array(l.label) FROM message_labels AS l WHERE l.message_id = m.id))
              FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid
             WHERE fts_messages MATCH '%s' AND %s
             ORDER BY fts_messages.rowid DESC;""" % (match, outside)
        # larger: a size that about one message in 200 exceeds (the generated corpus has
        # no megabyte mail; the issue's corpus had), in KiB as Gmail's operator takes it.
        sizes = run(SQLITE_CLI + ["-readonly", db, "SELECT size_estimate FROM messages ORDER BY size_estimate DESC "
                     "LIMIT 1 OFFSET (SELECT count(*) / 200 FROM messages);"], capture=True).stdout.strip()
        larger = "%dK" % max(1, int(sizes or 1024) // 1024)
        # The 5,000th inbox thread, newest first: where a deep page starts.
        deep = run(["hd-search", "-n", "5000", "--ids", "in:inbox"], env=self.env, capture=True).stdout.split()
        rows = [
            ("labels", "hd-labels (messages, threads and unread threads per label)", [
                ("hudson", ["hd-labels"]),
                ("sqlite3", sqlite("labels", """
                    SELECT l.id, l.name,
                           (SELECT count(*) FROM message_labels AS ml WHERE ml.label = l.id),
                           (SELECT count(*) FROM thread_labels AS tl WHERE tl.account_id = l.account_id AND tl.label = l.id),
                           (SELECT count(*) FROM thread_labels AS tl JOIN thread_rollup AS r
                               ON r.account_id = tl.account_id AND r.last_message_at = tl.last_message_at
                              AND r.thread_id = tl.thread_id
                             WHERE tl.account_id = l.account_id AND tl.label = l.id AND r.unread = 1)
                      FROM labels AS l;""")),
            ]),
            ("count-common", "hd-search --count --messages '%s' (one message in 5)" % w, [
                ("hudson", ["hd-search", "--count", "--messages", w]),
                # The full-text index alone: no column of messages is needed to count.
                ("sqlite3", sqlite("count-common", """
                    SELECT count(*) FROM fts_messages
                     WHERE fts_messages MATCH '%s' AND %s;""" % (match, outside.replace("m.id", "rowid")))),
                ("notmuch", ["notmuch", "count", w]),
            ]),
            ("count-threads", "hd-search --count '%s' (the threads of one message in 5)" % w, [
                ("hudson", ["hd-search", "--count", w]),
                # The matches from the full-text index, each one's thread from the narrow
                # index of its key (migration 032), never the wide message row.
                ("sqlite3", sqlite("count-threads", """
                    SELECT count(*) FROM (SELECT DISTINCT account_id, thread_id
                      FROM messages INDEXED BY messages_thread_by_key
                     WHERE id IN (SELECT rowid FROM fts_messages
                                   WHERE fts_messages MATCH '%s' AND %s));""" % (match, outside.replace("m.id", "rowid")))),
                ("notmuch", ["notmuch", "count", "--output=threads", w]),
            ]),
            ("larger", "hd-search larger:%s (one message in 200), first 50" % larger, [
                ("hudson", ["hd-search", "-n", "50", "larger:" + larger]),
                ("sqlite3", sqlite("larger", threads_page("""FROM messages AS m
                             WHERE m.size_estimate > %d AND %s
                             ORDER BY m.id DESC""" % (int(larger[:-1]) * 1024, outside)))),
                ("mu", ["mu", "find", "--muhome=" + self.mu_home(), "--maxnum=50", "--sortfield=date", "--reverse",
                        "size:%s.." % larger]),
            ]),
            ("stream-common", "every message matching '%s', to a pipe" % w, [
                ("hudson", pipe(["hd-search", "-n", "0", "--messages", w])),
                ("sqlite3", pipe(sqlite("stream-common", every_message))),
                ("notmuch", pipe(["notmuch", "search", "--output=messages", w])),
                ("mu", pipe(["mu", "find", "--muhome=" + self.mu_home(), w])),
            ]),
            ("stream-json", "the same with --json", [
                ("hudson", pipe(["hd-search", "-n", "0", "--messages", "--json", w])),
                ("sqlite3", pipe(sqlite("stream-json", every_message_json))),
                ("sqlite3-fewer-members", pipe(sqlite("stream-json-fewer", every_message_json_fewer))),
                ("notmuch", pipe(["notmuch", "search", "--format=json", "--output=summary", w])),
                ("mu", pipe(["mu", "find", "--muhome=" + self.mu_home(), "--format=json", w])),
            ]),
            ("changed", "hd-ls --changed-since 0 --limit 0, to a pipe", [
                ("hudson", pipe(["hd-ls", "--changed-since", "0", "--limit", "0"])),
                ("sqlite3", pipe(sqlite("changed", """
                    SELECT 'message:' || s.gmail_id, s.seq, 'thread:' || s.thread_id,
                           CASE s.deleted WHEN 1 THEN 'deleted' ELSE 'changed' END
                      FROM message_seq AS s ORDER BY s.seq;"""))),
            ]),
            ("first-line", "hd-search -n 0 --messages '%s' | head -1 (time to the first line)" % w, [
                ("hudson", first(["hd-search", "-n", "0", "--messages", w])),
                ("sqlite3", first(sqlite("stream-common", every_message))),
            ]),
        ]
        if len(deep) >= 5000:
            rows.append(("deep-page", "hd-search -n 50 in:inbox, after the 5,000th result, beside the first page", [
                ("hudson", ["hd-search", "-n", "50", "--before", deep[-1], "in:inbox"]),
                ("first-page", ["hd-search", "-n", "50", "in:inbox"]),
            ]))
        return rows

    def memory(self):
        """Peak memory of the two streaming reads, beside sqlite3 doing the same, under
        /usr/bin/time -v: it must not grow with the number of results."""
        q = self.queries()
        db = self.env["HUDSON_DB"]
        results = {}
        commands = {
            "search": ["hd-search", "-n", "0", "--messages", q["common"]],
            "changed": ["hd-ls", "--changed-since", "0", "--limit", "0"],
            "search-first-100": ["hd-search", "-n", "100", "--messages", q["common"]],
            "sqlite3-changed": ["sqlite3", "-readonly", db, "SELECT * FROM message_seq ORDER BY seq;"],
        }
        for name, argv in commands.items():
            proc = subprocess.run(["/usr/bin/time", "-v"] + argv, env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
            lines = proc.stdout.count("\n")
            _, rss = time_v(proc.stderr)
            results[name] = {"lines": lines, "peak_rss_kib": rss}
            log("memory: %s: %d lines, peak RSS %.1f MiB" % (name, lines, (rss or 0) / 1024))
        write_json(os.path.join(self.results, "memory.json"), results)

    def hyperfine(self, key, title, commands, prepare=None, runs=None, warmup=None, env=None):
        runs = runs or self.args.runs
        warmup = self.args.warmup if warmup is None else warmup
        export = os.path.join(self.results, "rows", key + ".json")
        os.makedirs(os.path.dirname(export), exist_ok=True)
        env = dict(env or self.env)
        if self.args.baselines:
            env["NOTMUCH_CONFIG"] = self.notmuch_config()
        prepares = prepare if isinstance(prepare, list) else [prepare] * len(commands)
        kept = [(c, p) for c, p in zip(commands, prepares, strict=True)
                if self.args.baselines or c[0] not in ("notmuch", "mu")]
        commands, prepares = [c for c, _ in kept], [p for _, p in kept]
        # Record what each command printed once, so a reader can check they agree.
        slow = set()
        with open(os.path.join(self.results, "rows", key + ".out"), "w") as f:
            for name, argv in commands:
                started = time.time()
                result = subprocess.run(argv, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                if name in ("notmuch", "mu") and time.time() - started > SLOW_BASELINE_SECONDS:
                    slow.add(name)
                lines = result.stdout.splitlines()
                f.write("== %s (exit %d, %d lines): %s\n" % (name, result.returncode, len(lines), " ".join(argv)))
                f.write("\n".join(lines[:5]) + "\n")
                # hyperfine runs with -i (mu find exits non-zero when nothing matches), so a
                # Hudson or sqlite3 command that fails would be timed as if it had answered.
                if (name.startswith("hudson") or name in ("sqlite3", "lieer")) and result.returncode != 0:
                    raise SystemExit("bench: %s row %s failed (exit %d): %s" % (
                        name, key, result.returncode, " ".join(lines[:2])))
        log("row:", title)
        # A baseline that takes seconds a run (notmuch's JSON stream took 25 s at 1,000,000
        # messages) gets one warm-up and SLOW_BASELINE_RUNS runs of its own: its spread is
        # small beside its time, and 13 runs of each such row were half of a 1,000,000 run's
        # timing. Hudson's and sqlite3's commands always get the full count.
        groups = [([c for c in zip(commands, prepares) if c[0][0] not in slow], warmup, runs, export),
                  ([c for c in zip(commands, prepares) if c[0][0] in slow],
                   min(warmup, 1), min(runs, SLOW_BASELINE_RUNS), export + ".slow")]
        timed = {}
        for members, group_warmup, group_runs, path in groups:
            if not members:
                continue
            cmd = ["hyperfine", "-N", "-i", "--style", "basic", "-w", str(group_warmup), "-r", str(group_runs),
                   "--export-json", path]
            if any(each for _, each in members):
                for _, each in members:
                    cmd += ["--prepare", each or "true"]
            for (name, argv), _ in members:
                cmd += ["-n", name, " ".join(quote(a) for a in argv)]
            run(cmd, env=env)
            with open(path) as f:
                for result in json.load(f)["results"]:
                    if path != export:
                        result["runs_reduced"] = True
                    timed[result["command"]] = result
            if path != export:
                os.unlink(path)
        data = {"results": [timed[name] for name, _ in commands], "title": title}
        write_json(export, data)

    def timed_rows(self):
        for key, title, commands in self.rows() + self.install_rows():
            if self.args.only and key not in self.args.only:
                continue
            self.hyperfine(key, title, commands)

    # installed size ---------------------------------------------------------------

    def install(self):
        """Installs the commands from --bin as scripts/install does, records the installed
        set's size and what each way of packaging them would take, and puts the installed
        bin/ first on PATH, so every later row times what a user runs."""
        prefix = os.path.join(self.work, "install")
        shutil.rmtree(prefix, ignore_errors=True)
        run([os.path.join(ROOT, "scripts", "install"), "--bin-dir", self.binaries, "--prefix", prefix])
        share = os.path.join(prefix, "share")
        completions = [os.path.join(share, d) for d in ("bash-completion", "zsh", "fish")]
        local = ["hd-ls", "hd-search", "hd-show", "hd-labels", "hd-pending", "hd-mark", "hd-undo"]
        network = ["hd-auth", "hd-sync", "hd-send"]
        size = lambda name: os.path.getsize(os.path.join(self.binaries, name))  # noqa: E731
        stripped = os.path.join(self.work, "stripped")
        os.makedirs(stripped, exist_ok=True)

        def stripped_size(name):
            copy = os.path.join(stripped, name)
            shutil.copyfile(os.path.join(self.binaries, name), copy)
            run(["strip", "--strip-unneeded", copy])
            return os.path.getsize(copy)
        data = {
            "installed_bytes": unique_bytes(prefix), "bin_bytes": unique_bytes(os.path.join(prefix, "bin")),
            "man_bytes": unique_bytes(os.path.join(share, "man")),
            "completion_bytes": sum(unique_bytes(c) for c in completions),
            # One binary per command as built (with debug info), and stripped; one multi-call
            # binary per kind, as built and stripped (what scripts/install installs).
            "options": {
                "per_command": sum(size(c) for c in local + network),
                "per_command_stripped": len(local) * stripped_size("hd-ls") + len(network) * stripped_size("hd-sync"),
                "multicall": size("hudson-local") + size("hudson-network"),
                "multicall_stripped": stripped_size("hudson-local") + stripped_size("hudson-network"),
            },
            "binaries": {"hd-ls": size("hd-ls"), "hd-sync": size("hd-sync"),
                         "hudson-local": size("hudson-local"), "hudson-network": size("hudson-network")},
        }
        shutil.rmtree(stripped)
        write_json(os.path.join(self.results, "install.json"), data)
        log("installed: %.1f MB (bin %.1f MB)" % (data["installed_bytes"] / 1e6, data["bin_bytes"] / 1e6))
        self.installed_bin = os.path.join(prefix, "bin")
        self.env["PATH"] = self.installed_bin + os.pathsep + self.env["PATH"]

    def install_rows(self):
        """Start-up of the installed multi-call binary beside a per-command binary as built
        (debug info and all) and sqlite3, in one hyperfine run."""
        if not getattr(self, "installed_bin", None):
            return []
        return [("startup-install", "start-up: installed hd-ls, a per-command build, sqlite3", [
            ("hudson", [os.path.join(self.installed_bin, "hd-ls"), "--version"]),
            ("per-command", [os.path.join(self.binaries, "hd-ls"), "--version"]),
            ("sqlite3", ["sqlite3", ":memory:", "select 1"]),
        ])]

    # hd-mark --------------------------------------------------------------------

    def mark(self):
        env = self.env
        refs = os.path.join(self.work, "hudson", "threads-1000")
        with open(refs, "w") as f:
            f.write(run(["hd-search", "-n", "1000", "--ids", "in:anywhere"], env=env, capture=True).stdout)
        with open(refs) as f:
            threads = sum(1 for _ in f)
        dry = run(["sh", "-c", "hd-mark archive --dry-run < %s | wc -l" % quote(refs)], env=env, capture=True)
        changes = int(dry.stdout.strip() or 0)
        if changes == 0:
            raise SystemExit("bench: the threads to archive are archived already (a mark step that did not "
                             "finish?); build the store again with --steps ingest,mark")
        # Each timed run archives the same threads; the prepare step undoes the previous run
        # (the undo cancels the still-pending rows), so every run queues the same changes.
        # It then waits for the undo's checkpoint helper to have copied the WAL into the
        # store and removed it (HudsonCLI/CheckpointHelper.swift; 2,000 polls, about 10 s), so that
        # each timed run starts from a store at rest, as a command typed a moment later
        # does, not beside the previous command's checkpoint.
        wal = quote(env["HUDSON_DB"] + "-wal")
        undo = ("hd-undo --no-flush >/dev/null 2>&1 || true; i=0; "
                "while [ -e %s ] && [ $i -lt 2000 ]; do sleep 0.005; i=$((i+1)); done; "
                "[ $i -lt 2000 ] || echo 'bench: the undo left its WAL for 10 s' >&2" % wal)
        runs = max(5, self.args.runs // 2)
        self.hyperfine("mark", "hd-mark archive of %d piped threads (--no-flush, %d changes)" % (threads, changes), [
            ("hudson", ["sh", "-c", "exec hd-mark archive --no-flush < " + refs]),
            ("sh", ["sh", "-c", "exec true < " + refs]),
        ], prepare="sh -c %s" % quote(undo), runs=runs)
        # trash beside archive, on the same threads, each run after an undo of the one before.
        self.hyperfine("mark-trash", "hd-mark trash beside archive, %d piped threads (--no-flush)" % threads, [
            ("trash", ["sh", "-c", "exec hd-mark trash --no-flush < " + refs]),
            ("archive", ["sh", "-c", "exec hd-mark archive --no-flush < " + refs]),
        ], prepare="sh -c %s" % quote(undo), runs=runs)
        # The target is for the local commit: hd-mark --verbose reports its transaction's
        # time, from BEGIN IMMEDIATE to the durable COMMIT. As many samples as the row has
        # runs, each after an undo, as the row's prepare step does.
        # Beside it, when the store is at rest again: from the start of hd-mark to the end
        # of its helper's checkpoint (the WAL removed), polled every half millisecond.
        commits, exits, settled = [], [], []
        for _ in range(runs):
            run(["sh", "-c", undo], env=env)
            started = time.monotonic()
            report = run(["sh", "-c", "exec hd-mark archive --no-flush --verbose < %s 2>&1 >/dev/null" % quote(refs)],
                         env=env, capture=True).stdout
            exits.append(time.monotonic() - started)
            while os.path.exists(env["HUDSON_DB"] + "-wal") and time.monotonic() - started < 10:
                time.sleep(0.0005)
            if os.path.exists(env["HUDSON_DB"] + "-wal"):
                log("hd-mark's checkpoint helper had not removed the WAL after 10 s; run left out of 'at rest'")
            else:
                settled.append(time.monotonic() - started)
            match = re.search(r"committed in ([0-9.]+) ms", report)
            if not match:
                raise SystemExit("bench: hd-mark --verbose reported no time: " + report.strip())
            commits.append(float(match.group(1)) / 1000)
        write_json(os.path.join(self.results, "commit.json"), {
            "threads": threads, "changes": changes, "times": commits, "median": statistics.median(commits),
            "min": min(commits), "max": max(commits),
            "exit_median": statistics.median(exits),
            "settled_median": statistics.median(settled) if settled else None, "settled_runs": len(settled)})
        log("local commit: median %.1f ms over %d runs; exit %.1f ms; at rest %s" % (
            statistics.median(commits) * 1000, len(commits), statistics.median(exits) * 1000,
            "%.1f ms" % (statistics.median(settled) * 1000) if settled else "never within 10 s"))
        run(["sh", "-c", undo], env=env)
        if self.fake is None:
            return  # built without the fake (direct import): nothing to flush to
        # The flush: archive (then trash) for real and count what reached the fake.
        for action, name in (("archive", "flush.json"), ("trash", "flush-trash.json")):
            changes = int(run(["sh", "-c", "hd-mark %s --dry-run < %s | wc -l" % (action, quote(refs))], env=env,
                              capture=True).stdout.strip() or 0)
            run(["sh", "-c", "hd-mark %s --no-flush < %s" % (action, quote(refs))], env=env)
            self.fake.admin("requests", method="DELETE")
            started = time.time()
            run(["hd-sync", "--json"], env=env, capture=True)
            seconds = time.time() - started
            requests = self.fake.admin("requests")
            api = [r for r in requests if not r.get("batch") and not r["path"].startswith("/token")]
            flush = [r for r in api if "modify" in r["path"].lower() or r["path"].endswith("/profile")]
            pending = run(SQLITE_CLI + ["-readonly", env["HUDSON_DB"], "SELECT count(*) FROM mutation_queue;"],
                          capture=True).stdout.strip()
            data = {"action": action, "threads": threads, "changes": changes, "flush_requests": len(flush),
                    "flush_calls": [(r["method"], r["path"]) for r in flush], "sync_requests": len(api),
                    "sync_seconds": seconds, "queue_left": int(pending)}
            write_json(os.path.join(self.results, name), data)
            log("flush of %s: %d changes sent in %d requests" % (action, changes, len(flush)))
            # Back to the mailbox as it was, here and on the fake (the undo queues the
            # inverse, the sync sends it), so that running this step again on this store
            # times the same work.
            run(["sh", "-c", "hd-undo --no-flush >/dev/null"], env=env)
            run(["hd-sync", "--json"], env=env, capture=True)

    # hd-filters rules ------------------------------------------------------------

    def rule_queries(self):
        """50 rules of the kind a rules file holds: a sender and a word (`from:S WORD`),
        for the ten busiest senders and five words of different frequencies (one an
        invented word, one non-ASCII, one Chinese), so each rule selects a few dozen to a
        few hundred messages, as a filter on a sender's invoices or meetings does."""
        s = self.summary
        senders = [a for a, _ in s["top_senders"]][:10]
        probes = s["probe_words"]
        wanted = ["invoice", "budget", "quindelor", "réunion", "会议"]
        words = [w for w in wanted if w in probes] or sorted(probes)[:5]
        return ["from:%s %s" % (sender, word) for sender in senders for word in words][:50]

    def rules(self):
        env = self.env
        queries = self.rule_queries()
        labels = list(self.summary["user_labels"].values())
        config = env["HUDSON_CONFIG_DIR"]
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "rules"), "w") as f:
            for i, q in enumerate(queries):
                action = "star" if i % 2 else "+" + quote_query(labels[i % len(labels)])
                f.write("[r%d] %s => %s\n" % (i, q, action))
        searches = os.path.join(self.work, "hudson", "rule-searches.sh")
        with open(searches, "w") as f:
            for q in queries:
                f.write("hd-search --messages --count %s >/dev/null || [ $? -eq 1 ]\n" % quote(q))
        dry = run(["hd-filters", "rules", "apply", "--dry-run"], env=env, capture=True)
        changes = len(dry.stdout.splitlines())
        undo = "hd-undo --no-flush >/dev/null 2>&1 || true"
        runs = max(5, self.args.runs // 3)
        # Each timed apply queues the same changes: the prepare step undoes the run before.
        self.hyperfine("rules", "50 rules: hd-filters rules apply (--no-flush, %d changes) beside 50 hd-search "
                       "--messages --count of the same queries" % changes, [
                           ("hudson", ["sh", "-c", "exec hd-filters rules apply --no-flush >/dev/null"]),
                           ("hd-search", ["sh", "-e", searches]),
                       ], prepare="sh -c %s" % quote(undo), runs=runs)
        run(["sh", "-c", undo], env=env)
        if self.fake is None:
            os.remove(os.path.join(config, "rules"))
            return
        # The flush of one real apply, counted at the fake: one batchModify per label set
        # and 1,000 messages, plus the cursor check.
        run(["hd-filters", "rules", "apply", "--no-flush"], env=env, capture=True)
        # A label set is what one batchModify carries: a message's (adds, removes), so a
        # message two rules changed is in the set of both changes (MutationFlusher).
        changes_of = {}
        for line in dry.stdout.splitlines():
            fields = line.split("\t")
            changes_of.setdefault(fields[0], set()).add(fields[1])
        sets = {}
        for ops in changes_of.values():
            key = tuple(sorted(ops))
            sets[key] = sets.get(key, 0) + 1
        allowed = sum((n + 999) // 1000 for n in sets.values())
        self.fake.admin("requests", method="DELETE")
        # A pass sends a bounded part of the queue: pass again until it is empty.
        passes = 0
        while passes < 50:
            run(["hd-sync", "--json"], env=env, capture=True)
            passes += 1
            left = int(run(["hd-pending", "--count"], env=env, capture=True).stdout.strip() or 0)
            if left == 0:
                break
        requests = self.fake.admin("requests")
        api = [r for r in requests if not r.get("batch") and not r["path"].startswith("/token")]
        flush = [r for r in api if "modify" in r["path"].lower()]
        write_json(os.path.join(self.results, "rules-flush.json"), {
            "rules": len(queries), "changes": changes, "label_sets": len(sets), "allowed": allowed,
            "flush_requests": len(flush), "sync_requests": len(api), "passes": passes, "queue_left": left})
        log("rules flush: %d changes in %d label sets sent in %d modify requests (allowed %d)" % (
            changes, len(sets), len(flush), allowed))
        run(["sh", "-c", "hd-undo --no-flush >/dev/null"], env=env)
        run(["hd-sync", "--json"], env=env, capture=True)
        os.remove(os.path.join(config, "rules"))

    # the paced backfill ---------------------------------------------------------

    def paced(self):
        work = os.path.join(self.work, "paced")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        args = self.args
        duration = args.paced_seconds
        low, _, high = args.paced_latency_ms.partition("-")
        latency = (int(low), int(high or low))
        quota = args.paced_quota
        ndjson = args.paced_ndjson or self.paths["ndjson"]
        labels = args.paced_labels_json or self.paths["labels_json"]
        fake = Fake(work, ndjson, labels, latency_ms=latency[0], quota=quota, latency_ms_max=latency[1])
        faults = parse_faults(args.paced_faults)
        sampler = None
        try:
            fake_rss_at_start = rss_kib(fake.proc.pid)
            env = hudson_env(self.binaries, work, fake, quota)
            connect_account(env, work, fake)
            if faults:
                fake.admin("faults", method="POST", body={"rules": faults})
            fake.admin("requests", method="DELETE")
            progress_path = os.path.join(work, "hd-sync.stderr")
            progress_file = open(progress_path, "w")
            started = time.time()
            # --verbose: the progress line once per page, as a pipe gets it.
            proc = subprocess.Popen(["hd-sync", "--catch-up", "--prefetch-days", str(args.paced_prefetch_days),
                                     "--json", "--verbose"], env=env, stdout=subprocess.DEVNULL, stderr=progress_file)
            sampler = PacedSampler(self, env, fake, proc, started, work)
            try:
                sampler.run(duration)
                # Still fetching at the deadline (stopped below), or done before it.
                stopped = proc.poll() is None
            finally:
                # Stopped as a person would (Ctrl-C), killed only if it does not stop.
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                proc.wait()
                progress_file.close()
            elapsed = time.time() - started
            finished = not stopped and proc.returncode == 0
            after_pushes = sampler.pushes_without_backfill() if args.paced_push_every else []
            requests = fake.admin("requests")
            totals = fake.admin("quota")["total"]
            fake_rss_at_end = rss_kib(fake.proc.pid)
        finally:
            fake.stop()
        too_many = sum(1 for r in requests if r.get("status") == 429)
        budget = quota * BACKGROUND_SHARE
        allowed = budget / (UNITS_GET + UNITS_LIST / PAGE)  # messages per minute
        data = {"latency_ms": list(latency), "quota_per_minute": quota, "background_units_per_minute": budget,
                "allowed_messages_per_minute": allowed, "seconds": elapsed, "faults": faults,
                "catch_up_finished": finished, "hd_sync_status": proc.returncode, "fake_rss_kib": [fake_rss_at_start, fake_rss_at_end],
                "load_average_end": os.getloadavg()}
        if args.paced_sample_seconds:
            # The request log keeps its last 100,000 entries only: a long run is told by its
            # samples and the fake's running totals.
            data.update(sampler.summary(totals, quota))
            data["pushes_during_backfill"] = sampler.pushes
            data["pushes_without_backfill"] = after_pushes
            data["recent"] = sampler.recent
            with open(progress_path, errors="replace") as f:
                lines = [l.rstrip("\n") for l in f if "listed" in l]
            data["progress_lines"] = lines[:3] + lines[len(lines) // 2:len(lines) // 2 + 2] + lines[-3:]
            write_json(os.path.join(self.results, "paced.json"), data)
            log("paced: %.1f messages/s stored over %.0f s (%.0f %% of the quota in units), peak RSS %.1f MiB" % (
                data["messages_per_second"], elapsed, 100 * data["quota_share"], data["peak_rss_kib"] / 1024))
            return
        charged = [r for r in requests if r.get("units", 0) > 0 or r.get("status") == 429]
        t0 = min(r["time"] for r in charged)
        windows = []
        # Whole minutes of the rolling window (a --quick run has one short, partial one).
        length = min(60.0, duration)
        for k in range(max(1, int(duration // 60))):
            inside = [r for r in charged if t0 + length * k <= r["time"] < t0 + length * (k + 1)]
            gets = [r for r in inside if r.get("batch") and r["units"] > 0]
            lists = [r for r in inside if not r.get("batch") and r["path"].endswith("/messages") and r["method"] == "GET"]
            windows.append({
                "units": sum(r["units"] for r in inside), "gets": len(gets), "lists": len(lists),
                "seconds": length,
                "first": min((r["time"] - t0 - length * k for r in gets), default=None),
                "last": max((r["time"] - t0 - length * k for r in gets), default=None),
            })
        full = windows or [{"units": 0, "gets": 0, "lists": 0}]
        measured = statistics.mean(w["gets"] for w in full)
        data.update({"windows": windows, "messages_per_minute": measured, "ratio": measured / allowed,
                     "responses_429": too_many})
        write_json(os.path.join(self.results, "paced.json"), data)
        log("paced: %.0f messages/min of %.0f allowed (%.0f %%), %d x 429" % (
            measured, allowed, 100 * measured / allowed, too_many))

    # hd-export ------------------------------------------------------------------

    def export(self):
        """hd-export (issue 24 §2) of the whole store to a Maildir, three ways: fetching
        every source from the fake (the account keeps them: keep-raw on), again from the
        kept sources (--no-fetch: no network), and the incremental rerun after 100
        changes. Whole processes, wall clock (/usr/bin/time), one run each.

        With --import (sizes where the fake would hold every source in memory) there is no
        fetching run: the sources are kept straight from the corpus (bench/keep-sources.py,
        the bytes the fake would answer), in a copy of the store."""
        work = os.path.join(self.work, "export")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        store_work = os.path.join(self.work, "hudson")
        from_corpus = self.args.direct_import
        if from_corpus:
            store_work = os.path.join(work, "store")
            os.makedirs(store_work)
            source_db = os.path.join(self.work, "hudson", "hudson.sqlite3")
            run(SQLITE_CLI + ["-readonly", source_db, ".backup %s" % quote(os.path.join(store_work, "hudson.sqlite3"))],
                capture=True)
            started = time.time()
            run([sys.executable, os.path.join(ROOT, "bench", "keep-sources.py"),
                 os.path.join(store_work, "hudson.sqlite3"), self.paths["ndjson"]])
            log("export: every source kept from the corpus in %.0f s" % (time.time() - started))
        fake = self.fake
        started_fake = None
        if fake is None and not from_corpus:  # a store built earlier: a fake to fetch from
            fake = started_fake = Fake(work, self.paths["ndjson"], self.paths["labels_json"])
        try:
            # Without a fake, every command here works offline.
            env = hudson_env(self.binaries, store_work, fake, 100_000_000) if fake else offline_env(self.binaries, store_work)
            if started_fake:
                connect_account(env, work, fake)
            # The states of the exports removed above (hd-export keeps them beside the store).
            shutil.rmtree(env["HUDSON_DB"] + ".exports", ignore_errors=True)
            if not from_corpus:
                run(["hd-auth", "set", ACCOUNT, "keep-raw", "on"], env=env)
                run(SQLITE_CLI + [env["HUDSON_DB"], "DELETE FROM message_sources;"], capture=True)

            def timed(name, argv):
                result = run(["/usr/bin/time", "-v"] + argv, env=env, capture=True, stderr=subprocess.PIPE)
                wall, rss = time_v(result.stderr)
                line = result.stdout.strip()
                log("export %s: %.1f s, peak RSS %.1f MiB: %s" % (name, wall, (rss or 0) / 1024, line))
                return {"seconds": wall, "peak_rss_kib": rss, "report": line}

            fetched_dir = os.path.join(work, "fetched")
            data = {"messages": int(run(SQLITE_CLI + ["-readonly", env["HUDSON_DB"], "SELECT count(*) FROM messages;"],
                                        capture=True).stdout)}
            if not from_corpus:
                data["fetching"] = timed("fetching every source", ["hd-export", fetched_dir])
            sources = run(SQLITE_CLI + ["-readonly", env["HUDSON_DB"],
                           "SELECT count(*), coalesce(sum(length(source)), 0) FROM message_sources;"],
                          capture=True).stdout.strip().split("|")
            data["sources"] = {"count": int(sources[0]), "bytes": int(sources[1])}
            offline_dir = os.path.join(work, "offline")
            data["offline"] = timed("from kept sources", ["hd-export", "--no-fetch", offline_dir])
            data["maildir_bytes"] = du(offline_dir)
            # 100 changes: 100 messages read (queued here, not flushed), then the rerun.
            ids = run(["hd-search", "--messages", "--ids", "-n", "100", "is:unread in:anywhere"], env=env,
                      capture=True, check=False).stdout.split()
            if ids:
                run(["hd-mark", "read", "--no-flush"] + ids, env=env, capture=True, stdin=subprocess.DEVNULL)
            data["changes"] = len(ids)
            data["incremental"] = timed("after %d changes" % len(ids), ["hd-export", "--no-fetch", offline_dir])
            run(["sh", "-c", "hd-undo --no-flush >/dev/null 2>&1 || true"], env=env)
            write_json(os.path.join(self.results, "export.json"), data)
        finally:
            if started_fake:
                started_fake.stop()

    # two-way export (issue 39) -------------------------------------------------------

    def two_way_setup(self):
        """Once per size (kept in work/SIZE/two-way, reused by later runs): a copy of the
        store whose account keeps every source (fetched once from a fake), exported to a
        two-way Maildir; with notmuch installed, a second copy exported with --notmuch into a
        notmuch database of its own; and the 1,000 notmuch ids the notmuch rows retag."""
        base = os.path.join(self.work, "two-way")
        paths = {"base": base, "maildir": os.path.join(base, "maildir"), "store": os.path.join(base, "maildir-store"),
                 "notmuch_maildir": os.path.join(base, "notmuch-maildir"),
                 "notmuch_store": os.path.join(base, "notmuch-store"),
                 "notmuch_config": os.path.join(base, "notmuch-config"), "ids": os.path.join(base, "notmuch-ids"),
                 "ready": os.path.join(base, "ready.json")}
        self.two_way_paths = paths
        notmuch = shutil.which("notmuch") is not None
        if os.path.exists(paths["ready"]):
            with open(paths["ready"]) as f:
                ready = json.load(f)
            if ready.get("notmuch") or not notmuch:
                return
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(paths["store"])
        source_db = os.path.join(self.work, "hudson", "hudson.sqlite3")
        store_db = os.path.join(paths["store"], "hudson.sqlite3")
        # A consistent copy, the original left as it is (other steps time it).
        run(SQLITE_CLI + ["-readonly", source_db, ".backup %s" % quote(store_db)], capture=True)
        ready = {"messages": int(run(SQLITE_CLI + ["-readonly", store_db, "SELECT count(*) FROM messages;"],
                                     capture=True).stdout)}
        fake = self.fake or Fake(base, self.paths["ndjson"], self.paths["labels_json"])
        try:
            env = hudson_env(self.binaries, paths["store"], fake, 100_000_000)
            connect_account(env, paths["store"], fake)
            run(["hd-auth", "set", ACCOUNT, "keep-raw", "on"], env=env)
            started = time.time()
            run(["hd-export", "--two-way", paths["maildir"]], env=env)
            ready["maildir_seconds"] = time.time() - started
        finally:
            if fake is not self.fake:
                fake.stop()
        if notmuch:
            os.makedirs(paths["notmuch_store"])
            run(SQLITE_CLI + ["-readonly", store_db,
                 ".backup %s" % quote(os.path.join(paths["notmuch_store"], "hudson.sqlite3"))], capture=True)
            shutil.copytree(os.path.join(paths["store"], "config"), os.path.join(paths["notmuch_store"], "config"))
            with open(paths["notmuch_config"], "w") as f:
                # hd-export(1): database.path is the Maildir; its own files are not mail.
                f.write("[database]\npath=%s\n[new]\ntags=\nignore=.hudson-export;.hudson-export.lock;notmuch-tags\n"
                        "[maildir]\nsynchronize_flags=true\n" % paths["notmuch_maildir"])
            env = self.two_way_env(notmuch=True)
            # --notmuch wants an export and a database on it: a one-way export first, indexed
            # by notmuch, then the run that turns --notmuch on (it writes and tags every
            # message again, hd-export(1)).
            run(["hd-export", "--no-fetch", paths["notmuch_maildir"]], env=env)
            run(["notmuch", "new", "--quiet"], env=env)
            started = time.time()
            run(["hd-export", "--no-fetch", "--notmuch", paths["notmuch_maildir"]], env=env)
            ready["notmuch_seconds"] = time.time() - started
            # 1,000 messages spread over the database, none starred: the row stars them, then
            # unstars them, run after run.
            ids = run(["notmuch", "search", "--output=messages", "--sort=oldest-first", "not tag:flagged"],
                      env=env, capture=True).stdout.split()
            with open(paths["ids"], "w") as f:
                f.write("".join(i[len("id:"):] + "\n" for i in ids[::max(1, len(ids) // 1000)][:1000]))
            ready["notmuch"] = True
        write_json(paths["ready"], ready)

    def two_way_env(self, notmuch):
        """The environment of a two-way row's Hudson commands: its own store, no Gmail."""
        paths = self.two_way_paths
        env = offline_env(self.binaries, paths["notmuch_store" if notmuch else "store"])
        env["NOTMUCH_CONFIG"] = paths["notmuch_config"]
        return env

    def two_way(self):
        """Issue 39's bounded work, whole processes (hyperfine -N): hd-export of a two-way
        export with nothing changed, and after 1,000 changes made as a client makes them
        (read back, queued as one triage action, and the 1,000 files written again) — for
        a Maildir, and with --notmuch (notmuch tag); beside lieer's `gmi pull` with nothing
        changed and `gmi push` after 1,000 notmuch tag changes, when lieer is installed
        (lieer_rows)."""
        self.two_way_setup()
        paths = self.two_way_paths
        change = [sys.executable, os.path.join(ROOT, "bench", "two-way-change.py")]
        commands, prepares = {"idle": [], "changes": []}, {"idle": [], "changes": []}

        def hudson(notmuch):
            env = self.two_way_env(notmuch)
            prefix = ["env"] + ["%s=%s" % (k, env[k]) for k in ("HUDSON_DB", "HUDSON_CONFIG_DIR", "NOTMUCH_CONFIG")]
            target = paths["notmuch_maildir" if notmuch else "maildir"]
            # After a run that queued, the store's checkpoint helper may still be copying the
            # WAL: each run starts from a store at rest (as in the mark step).
            wal = quote(env["HUDSON_DB"] + "-wal")
            rest = ("i=0; while [ -e %s ] && [ $i -lt 2000 ]; do sleep 0.005; i=$((i+1)); done" % wal)
            if notmuch:
                touch = " ".join(quote(a) for a in prefix + change + ["notmuch", paths["ids"]])
            else:
                touch = " ".join(quote(a) for a in change + ["maildir", target, "--count", "1000"])
            return prefix + ["hd-export", "--no-fetch", target], rest, touch

        for notmuch in (False, True):
            if notmuch and not os.path.exists(paths["ids"]):
                log("two-way: notmuch is not installed: no --notmuch rows")
                continue
            name = "hudson-notmuch" if notmuch else "hudson"
            argv, rest, touch = hudson(notmuch)
            commands["idle"].append((name, argv))
            prepares["idle"].append("sh -c %s" % quote(rest))
            commands["changes"].append((name, argv))
            prepares["changes"].append("sh -c %s" % quote("%s; %s >/dev/null" % (rest, touch)))
        runs = max(5, self.args.runs // 3)
        try:
            lieer = self.lieer_rows()  # starts a fake: stopped below, even when its setup fails
            if lieer:
                for key in ("idle", "changes"):
                    name, argv, prepare = lieer[key]
                    commands[key].append((name, argv))
                    prepares[key].append(prepare)
            for key, title in (("idle", "hd-export of a two-way export of %d messages, nothing changed" % self.size),
                               ("changes", "hd-export of a two-way export of %d messages after 1,000 changes "
                                           "(read back, queued, written)" % self.size)):
                row = "two-way-" + key
                if self.args.only and row not in self.args.only:
                    continue
                # Once each, prepared as a timed run is, keeping what it reported: the change row
                # must read back and queue 1,000 changes ("action N: 1000 change(s) read back").
                os.makedirs(os.path.join(self.results, "rows"), exist_ok=True)
                with open(os.path.join(self.results, "rows", row + ".check"), "w") as f:
                    env = self.two_way_env(notmuch=False)
                    for (name, argv), prepare in zip(commands[key], prepares[key]):
                        subprocess.run(prepare, shell=True, env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                        result = subprocess.run(argv, env=env, text=True, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT)
                        f.write("== %s (exit %d): %s\n%s\n" % (name, result.returncode, " ".join(argv),
                                                                "\n".join(result.stdout.splitlines()[-4:])))
                self.hyperfine(row, title, commands[key], prepare=prepares[key], runs=runs, env=env)
        finally:
            self.lieer_stop()

    # lieer (gmi), the baseline of the two-way rows ----------------------------------

    def lieer_rows(self):
        """lieer's `gmi pull` with nothing changed and `gmi push` after 1,000 notmuch tag
        changes, against the fake (bench/gmi-fake: lieer unchanged, pointed at the fake),
        on a mailbox of this size that lieer pulled in full once (kept in work/SIZE/lieer,
        with the fake's mailbox, --state, so its history stays lieer's). None, with a line,
        when lieer or notmuch's Python bindings are not installed."""
        python = self.args.lieer_python or os.path.join(self.out, "lieer", "venv", "bin", "python3")
        if not (os.path.exists(python) and shutil.which("notmuch") and subprocess.run(
                [python, "-c", "import lieer, notmuch2"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0):
            log("lieer: not installed (%s -c 'import lieer, notmuch2' fails): no lieer baseline; see "
                "bench/README.md" % python)
            return None
        base = os.path.join(self.work, "lieer")
        repo, config = os.path.join(base, "repo"), os.path.join(base, "notmuch-config")
        ids, ready_path = os.path.join(base, "notmuch-ids"), os.path.join(base, "ready.json")
        ready = os.path.exists(ready_path)
        if not ready:
            shutil.rmtree(base, ignore_errors=True)
            os.makedirs(repo)
        # The mailbox as lieer last left it (the fake saves it when stopped), else the corpus.
        self.lieer_fake = Fake(base, self.paths["ndjson"], self.paths["labels_json"],
                               extra=["--state", os.path.join(base, "fake.state")])
        gmi = [python, os.path.join(ROOT, "bench", "gmi-fake")]
        env = dict(os.environ, FAKE_GMAIL_URL=self.lieer_fake.url, NOTMUCH_CONFIG=config)
        prefix = ["env", "FAKE_GMAIL_URL=" + self.lieer_fake.url, "NOTMUCH_CONFIG=" + config]
        if not ready:
            with open(config, "w") as f:
                # lieer's repository is notmuch's database; lieer tags what it pulls itself.
                f.write("[database]\npath=%s\n[new]\ntags=\nignore=.gmailieer.json;.state.gmailieer.json;"
                        ".credentials.gmailieer.json;.lock;.resume-pull.gmailieer.json\n"
                        "[maildir]\nsynchronize_flags=true\n" % repo)
            run(["notmuch", "new", "--quiet"], env=env)
            run(gmi + ["init", "-C", repo, "--no-auth", ACCOUNT], env=env, capture=True)
            run(gmi + ["--write-credentials", repo], env=env)
            started = time.time()
            run(gmi + ["pull", "-C", repo, "--no-progress"], env=env, capture=True)
            seconds = time.time() - started
            found = run(["notmuch", "search", "--output=messages", "--sort=oldest-first", "not tag:flagged"],
                        env=env, capture=True).stdout.split()
            with open(ids, "w") as f:
                f.write("".join(i[len("id:"):] + "\n" for i in found[::max(1, len(found) // 1000)][:1000]))
            write_json(ready_path, {"full_pull_seconds": seconds, "messages": len(os.listdir(
                os.path.join(repo, "mail", "cur")))})
            log("lieer: full pull of %d messages in %.0f s" % (self.size, seconds))
        pull = prefix + gmi + ["pull", "-C", repo, "--no-progress"]
        push = prefix + gmi + ["push", "-C", repo, "--no-progress"]
        toggle = prefix + [sys.executable, os.path.join(ROOT, "bench", "two-way-change.py"), "notmuch", ids]
        # lieer skips a message changed at Gmail since its last pull (remote.py, update()), and
        # its own push is such a change: each push follows a pull, as `gmi sync` does.
        changes = "sh -c %s" % quote("%s >/dev/null 2>&1; %s >/dev/null" % (
            " ".join(quote(a) for a in pull), " ".join(quote(a) for a in toggle)))
        return {"idle": ("lieer", pull, "true"), "changes": ("lieer", push, changes)}

    def lieer_stop(self):
        fake = getattr(self, "lieer_fake", None)
        if fake:
            fake.stop(600)  # saves the mailbox (--state) for the next run: 100,000 messages take a while
            self.lieer_fake = None

    # sizes ----------------------------------------------------------------------

    def sizes(self):
        db = self.env["HUDSON_DB"]
        run(SQLITE_CLI + [db, "PRAGMA wal_checkpoint(TRUNCATE);"], capture=True)
        tables = run(SQLITE_CLI + ["-readonly", db,
                      "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC;"],
                     capture=True, check=False).stdout
        data = {"messages": self.size, "hudson_bytes": os.path.getsize(db),
                "notmuch_bytes": du(self.notmuch_database()) if self.args.baselines else None,
                "mu_bytes": du(self.mu_home()) if self.args.baselines else None,
                "maildir_bytes": du(self.paths["maildir"]) - du(self.notmuch_database()),
                "hudson_tables": [(n, int(b)) for n, b in (l.split("|") for l in tables.split("\n") if "|" in l)]}
        write_json(os.path.join(self.results, "sizes.json"), data)

    def close(self):
        if self.fake:
            self.fake.stop()
        self.lieer_stop()


def rss_kib(pid):
    """VmRSS and VmHWM (peak) of a live process, KiB; (None, None) once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])
    except (OSError, KeyError, ValueError):
        return None, None


def parse_faults(text):
    """--paced-faults 429:0.0001,503:0.001: fault rules of the fake answering that share of the
    messages.get calls (batch parts included) with that status, seeded so a run repeats."""
    rules = []
    for seed, item in enumerate(filter(None, (text or "").split(","))):
        status, _, share = item.partition(":")
        rules.append({"method": "GET", "path": "/messages/[0-9A-Za-z_-]+$", "status": int(status),
                      "probability": float(share), "times": -1, "seed": seed + 1})
    return rules


class PacedSampler:
    """Watches a running catch-up: samples, pushes, and the newest days becoming searchable."""

    def __init__(self, bench, env, fake, proc, started, work):
        self.bench, self.env, self.fake, self.proc, self.started, self.work = bench, env, fake, proc, started, work
        self.args = bench.args
        self.samples = []
        self.pushes = []
        self.recent = None
        self.db = env["HUDSON_DB"]
        if self.args.paced_recent_days:
            newest = bench.summary["date_range"][1]
            newest_epoch = calendar.timegm(time.strptime(newest, "%Y-%m-%dT%H:%M:%SZ"))
            cutoff = newest_epoch - self.args.paced_recent_days * 86400
            self.recent = {"days": self.args.paced_recent_days, "after": cutoff, "query": "after:%d" % cutoff,
                           "polls": [], "searchable_at": None}

    def stored(self):
        if not os.path.exists(self.db):
            return 0
        out = subprocess.run(SQLITE_CLI + ["-readonly", self.db, "SELECT count(*) FROM messages;"],
                             capture_output=True, text=True).stdout.strip()
        return int(out) if out.isdigit() else None

    def sample(self):
        now = time.time() - self.started
        rss, hwm = rss_kib(self.proc.pid)
        quota = self.fake.admin("quota")
        total = quota["total"]
        self.samples.append({
            "t": round(now, 1), "stored": self.stored(), "rss_kib": rss, "hwm_kib": hwm,
            "fake_rss_kib": rss_kib(self.fake.proc.pid)[0], "window_units": quota["units"],
            "units": total["units"], "gets": total["api"].get("messages.get", 0),
            "lists": total["api"].get("messages.list", 0), "status": total["status"],
            "load": os.getloadavg()[0]})
        s = self.samples[-1]
        log("paced t=%5.0f s: %s stored, RSS %s MiB, %d units (window %d), load %.1f" % (
            now, s["stored"], "%.1f" % (rss / 1024) if rss else "-", s["units"], s["window_units"], s["load"]))

    def poll_recent(self):
        r = self.recent
        out = subprocess.run(["hd-search", "--messages", "--count", r["query"]], env=self.env,
                             capture_output=True, text=True)
        count = int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None
        r["polls"].append([round(time.time() - self.started, 1), count])

    def push(self):
        """`hd-mark archive` of one inbox thread: the local change and its push to Gmail."""
        refs = subprocess.run(["hd-search", "-n", "1", "--ids", "in:inbox"], env=self.env,
                              capture_output=True, text=True).stdout.split()
        if not refs:
            return None
        before = self.fake.admin("quota")["total"]["api"]
        t0 = time.monotonic()
        result = subprocess.run(["hd-mark", "archive", refs[0]], env=self.env, capture_output=True, text=True)
        seconds = time.monotonic() - t0
        after = self.fake.admin("quota")["total"]["api"]
        sent = sum(after.get(k, 0) - before.get(k, 0) for k in after if "modify" in k.lower())
        entry = {"t": round(time.time() - self.started, 1), "seconds": round(seconds, 3), "status": result.returncode,
                 "modify_requests": sent, "stderr": result.stderr.strip()[-300:]}
        log("paced push at %.0f s: %.3f s, exit %d, %d modify request(s)%s" % (
            entry["t"], seconds, result.returncode, sent, (": " + entry["stderr"]) if entry["stderr"] else ""))
        return entry

    def run(self, duration):
        every = self.args.paced_sample_seconds
        push_every = self.args.paced_push_every
        next_sample, next_push, next_recent = 0.0, push_every or None, 0.0
        if self.recent:
            self.recent["expected"] = self.expected_recent()
        while True:
            elapsed = time.time() - self.started
            if elapsed >= duration or self.proc.poll() is not None:
                break
            if every and elapsed >= next_sample:
                self.sample()
                next_sample += every
            if self.recent and self.recent["searchable_at"] is None and elapsed >= next_recent:
                self.poll_recent()
                next_recent = elapsed + 10
            if next_push is not None and elapsed >= next_push:
                entry = self.push()
                if entry:
                    self.pushes.append(entry)
                next_push += push_every
            # Searchable once hd-search counts what Gmail lists for the range (checked below
            # against the final count too).
            if self.recent and self.recent["searchable_at"] is None and self.recent["polls"]:
                count = self.recent["polls"][-1][1]
                if count is not None and count >= self.recent["expected"]:
                    self.recent["searchable_at"] = self.recent["polls"][-1][0]
                    log("paced: the newest %d days (%d messages) searchable at %.0f s" % (
                        self.recent["days"], count, self.recent["searchable_at"]))
            time.sleep(0.5)
        if every:
            self.sample()

    def expected_recent(self):
        """What Gmail (the fake) lists for the range: messages.list's exact estimate."""
        token = json.loads(urllib.request.urlopen(urllib.request.Request(
            self.fake.url + "/token", data=("grant_type=refresh_token&refresh_token=demo-refresh-token&client_id="
                                            "hudson-demo-client&client_secret=hudson-demo-secret").encode()),
            timeout=30).read())["access_token"]
        request = urllib.request.Request(
            self.fake.url + "/gmail/v1/users/me/messages?maxResults=1&q=" + self.recent["query"],
            headers={"Authorization": "Bearer " + token})
        return json.loads(urllib.request.urlopen(request, timeout=60).read())["resultSizeEstimate"]

    def pushes_without_backfill(self):
        """As many pushes as during the backfill, once the backfill is stopped and its units
        have left the quota window (the same store, the same fake)."""
        time.sleep(65)
        out = []
        for _ in range(max(3, len(self.pushes))):
            entry = self.push()
            if entry:
                out.append(entry)
            time.sleep(2)
        return out

    def summary(self, totals, quota):
        s = self.samples
        rows = []
        for a, b in zip(s, s[1:]):
            span = b["t"] - a["t"]
            if span <= 0:
                continue
            rows.append({"t": b["t"], "stored_per_second": ((b["stored"] or 0) - (a["stored"] or 0)) / span,
                         "gets_per_second": (b["gets"] - a["gets"]) / span,
                         "quota_share": (b["units"] - a["units"]) / span / (quota / 60.0),
                         "rss_kib": b["rss_kib"], "load": b["load"]})
        first, last = s[0], s[-1]
        span = max(0.001, last["t"] - first["t"])
        rss = [x["hwm_kib"] for x in s if x["hwm_kib"]]
        # The first minute spends a whole window of quota at once (a rolling-minute budget
        # starts empty): the steady rate counts from the first sample a minute in.
        settled = next((x for x in s if x["t"] >= 60), last)
        steady = max(0.001, last["t"] - settled["t"])
        return {"samples": s, "intervals": rows,
                "steady_from": settled["t"],
                "steady_messages_per_second": ((last["stored"] or 0) - (settled["stored"] or 0)) / steady,
                "steady_gets_per_second": (last["gets"] - settled["gets"]) / steady,
                "steady_quota_share": (last["units"] - settled["units"]) / steady / (quota / 60.0),
                "messages_per_second": ((last["stored"] or 0) - (first["stored"] or 0)) / span,
                "gets_per_second": (last["gets"] - first["gets"]) / span,
                "quota_share": (last["units"] - first["units"]) / span / (quota / 60.0),
                "peak_rss_kib": max(rss) if rss else None, "fake_totals": totals}


def quote_query(name):
    """A label name as a query or rules-file value: quoted when it has a space."""
    return '"%s"' % name if " " in name else name


def quote(text):
    if re.fullmatch(r"[A-Za-z0-9_./:@=,+%-]+", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def main():
    p = argparse.ArgumentParser(description="Hudson's benchmark (run it through bench/run).")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    p.add_argument("--bin", required=True, help="directory of the hd-* binaries")
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--paced-seconds", type=float, default=150)
    p.add_argument("--paced-ndjson", help="the corpus for the paced run (default: this size's)")
    p.add_argument("--paced-labels-json", help="the labels of --paced-ndjson (default: this size's)")
    p.add_argument("--paced-latency-ms", default="80", help="N, or LOW-HIGH: each request waits a draw between")
    p.add_argument("--paced-quota", type=int, default=6000, help="units per minute, the fake's and Hudson's")
    p.add_argument("--paced-faults", default="", help="STATUS:SHARE,...: that share of messages.get faulted")
    p.add_argument("--paced-prefetch-days", type=int, default=0, help="hd-sync --prefetch-days (0: every body)")
    p.add_argument("--paced-sample-seconds", type=float, default=0, help="sample every S seconds (0: off)")
    p.add_argument("--paced-push-every", type=float, default=0, help="time an hd-mark push every S seconds (0: off)")
    p.add_argument("--paced-recent-days", type=int, default=0,
                   help="poll until the corpus's newest D days are searchable (0: off)")
    p.add_argument("--no-baselines", dest="baselines", action="store_false")
    p.add_argument("--import", dest="direct_import", action="store_true",
                   help="build the store with bench/import (no HTTP), for sizes the fake cannot hold")
    p.add_argument("--steps", default="corpus,ingest,notmuch,mu,install,rows,mark,rules,export,two-way,paced,sizes")
    p.add_argument("--only", action="append", help="only these row keys (repeatable)")
    p.add_argument("--lieer-python", help="the Python with lieer installed, for the two-way rows' baseline "
                   "(default: OUT/lieer/venv/bin/python3; see bench/README.md)")
    args = p.parse_args()
    steps = args.steps.split(",")
    bench = Bench(args)
    started = time.time()
    try:
        bench.corpus()
        if "ingest" in steps:
            bench.ingest()
        elif any(step in steps for step in ("rows", "mark", "rules", "sizes", "export", "two-way")):
            bench.reuse_store()
        if args.baselines and "notmuch" in steps and "mu" in steps:
            bench.baselines_side_by_side()
        else:
            if args.baselines and "notmuch" in steps:
                bench.notmuch()
            elif args.baselines and "rows" in steps:
                bench.reuse_notmuch()
            if args.baselines and "mu" in steps:
                bench.mu()
            elif args.baselines and "rows" in steps:
                bench.reuse_mu()
        if "install" in steps:
            bench.install()
        if "rows" in steps:
            bench.timed_rows()
            bench.memory()
        if "sizes" in steps:
            bench.sizes()
        if "mark" in steps:
            bench.mark()
        if "rules" in steps:
            bench.rules()
        if "export" in steps:
            bench.export()
        if "two-way" in steps:
            bench.two_way()
        if "paced" in steps:
            bench.paced()
    finally:
        bench.close()
    machine = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"), "size": args.size, "seconds": time.time() - started,
        "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
        "cores": os.cpu_count(), "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "kernel": os.uname().release,
        "versions": {name: (run(argv, capture=True, check=False).stdout.strip().splitlines() or ["?"])[0]
                     for name, argv in [("sqlite3", ["sqlite3", "--version"]), ("notmuch", ["notmuch", "--version"]),
                                        ("mu", ["mu", "--version"]), ("hyperfine", ["hyperfine", "--version"]),
                                        ("swift", ["swift", "--version"])]},
        "runs": args.runs, "warmup": args.warmup, "load": os.getloadavg(),
    }
    machine_path = os.path.join(bench.results, "machine.json")
    if args.only and os.path.exists(machine_path):
        # Rows timed again: the file keeps the whole run it describes and lists the reruns.
        with open(machine_path) as f:
            whole = json.load(f)
        whole.setdefault("reruns", []).append(dict(machine, rows=args.only))
        machine = whole
    write_json(machine_path, machine)
    log("results in", bench.results)


if __name__ == "__main__":
    main()
