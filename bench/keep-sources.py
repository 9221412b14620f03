#!/usr/bin/env python3
"""Keeps every corpus message's source in a Hudson store, as an account with kept
sources (`hd-auth set EMAIL keep-raw on`) has them after fetching: the bytes the
project's fake Gmail answers for `format=raw`, written straight into
`message_sources`. It lets `hd-export --no-fetch` be measured at sizes where the fake
would have to hold every source in memory (docs/performance.md, "Raw sources and
hd-export").

    bench/keep-sources.py STORE CORPUS/gmail.ndjson

The store must hold the corpus (bench/import, or an ingest through the fake). Messages
the store does not hold are skipped; sources already kept are replaced.
"""
import json
import os
import sqlite3
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "fake-gmail"))
from fakegmail import mime  # noqa: E402  (the fake's own payload-to-source rule)
from fakegmail.util import b64_lenient  # noqa: E402

BATCH = 5000


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: keep-sources.py STORE CORPUS/gmail.ndjson")
    store, corpus = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(store, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 10000")
    ids = dict(db.execute("SELECT gmail_id, id FROM messages"))
    started, kept, batch = time.time(), 0, []
    now = int(time.time() * 1000)

    def flush():
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT OR REPLACE INTO message_sources (message_id, source, fetched_at) VALUES (?, ?, ?)", batch)
        db.execute("COMMIT")
        batch.clear()

    with open(corpus, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            row = ids.get(record["id"])
            if row is None:
                continue
            if record.get("raw"):
                raw = b64_lenient(record["raw"])
            else:
                raw = mime.payload_to_raw(record["payload"], record["id"])
            if raw is None:
                continue
            batch.append((row, raw, now))
            kept += 1
            if len(batch) >= BATCH:
                flush()
                if kept % 100_000 == 0:
                    print("%d sources kept, %.0f s" % (kept, time.time() - started), file=sys.stderr, flush=True)
    if batch:
        flush()
    print("%d sources kept in %.0f s" % (kept, time.time() - started), file=sys.stderr)


if __name__ == "__main__":
    main()
