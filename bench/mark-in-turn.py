#!/usr/bin/env python3
"""Times `hd-mark archive` of the same threads with two (or more) builds, run in turn.

    python3 bench/mark-in-turn.py [--runs N] [--warmup N] REFS NAME=BIN_DIR:STORE ...

Each round, for each build in turn: `hd-undo --no-flush` (so that every run queues the
same changes), then `hd-mark archive --no-flush --verbose < REFS`, timed from this process
start to exit, with the local commit time `--verbose` reports. Run in turn, the builds
share the machine's phases, which on a shared machine move a single row by half; compare
their medians, not runs from different minutes. Each build needs a store at its own schema
version (a copy of the same store, migrated or taken back), since a build refuses a store
a newer one wrote. Prints the median (min-max) of each, in milliseconds.
"""
import argparse
import os
import re
import statistics
import subprocess
import time


def store_env(store):
    env = dict(os.environ, HUDSON_DB=store, HUDSON_CONFIG_DIR=os.path.join(os.path.dirname(store), "config"))
    env.pop("HUDSON_ACCOUNT", None)
    return env


def undo(bin_dir, store):
    """Undoes the last run, then waits (up to 10 s) for the undo's checkpoint helper to have
    removed the WAL, so that the next run starts from a store at rest (bench.py, mark)."""
    env = store_env(store)
    subprocess.run([os.path.join(bin_dir, "hd-undo"), "--no-flush"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while os.path.exists(env["HUDSON_DB"] + "-wal") and time.monotonic() < deadline:
        time.sleep(0.001)


def run_once(bin_dir, store, refs):
    env = store_env(store)
    undo(bin_dir, store)
    with open(refs) as stdin:
        started = time.perf_counter()
        done = subprocess.run([os.path.join(bin_dir, "hd-mark"), "archive", "--no-flush", "--verbose"], env=env,
                              stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        whole = (time.perf_counter() - started) * 1000
    match = re.search(r"committed in ([0-9.]+) ms", done.stderr)
    if done.returncode != 0 or not match:
        raise SystemExit("mark-in-turn: %s: %s" % (bin_dir, done.stderr.strip()))
    return whole, float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description="hd-mark archive, builds run in turn")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("refs", help="the references to archive, one per line (bench/run's threads-1000)")
    parser.add_argument("builds", nargs="+", metavar="NAME=BIN_DIR:STORE")
    args = parser.parse_args()
    builds = []
    for spec in args.builds:
        name, _, rest = spec.partition("=")
        bin_dir, _, store = rest.rpartition(":")
        if not name or not bin_dir or not store:
            parser.error("%s: expected NAME=BIN_DIR:STORE" % spec)
        builds.append((name, bin_dir, store))
    times = {name: ([], []) for name, _, _ in builds}
    for round_index in range(args.warmup + args.runs):
        for name, bin_dir, store in builds:
            whole, commit = run_once(bin_dir, store, args.refs)
            if round_index >= args.warmup:
                times[name][0].append(whole)
                times[name][1].append(commit)
    for name, bin_dir, store in builds:
        undo(bin_dir, store)  # the store as it was
        whole, commit = times[name]
        print("%s: whole %.1f (%.1f-%.1f), commit %.1f (%.1f-%.1f) ms, %d runs" % (
            name, statistics.median(whole), min(whole), max(whole),
            statistics.median(commit), min(commit), max(commit), len(whole)))


if __name__ == "__main__":
    main()
