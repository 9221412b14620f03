#!/usr/bin/env python3
"""Two commands timed in turn, N pairs: the ratio of their medians, and of each pair.

    bench/pairs.py [-n 20] 'hd-search --count meeting' 'sqlite3 -readonly STORE ".read count.sql"'

Each command runs once untimed, then the two alternate (A B, B A, A B, ...), each a whole
process under `sh -c` (so pipes work), its output discarded unless the command pipes it.
Load that comes and goes on a shared machine then falls on both sides alike, where
hyperfine times all runs of one command before the next. Prints one line: both medians,
their ratio, and the median and quartiles of the per-pair ratios.
"""
import argparse
import statistics
import subprocess
import time


def timed(command):
    started = time.perf_counter()
    subprocess.run(command, shell=True, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20, help="pairs (default 20)")
    parser.add_argument("a")
    parser.add_argument("b")
    args = parser.parse_args()
    timed(args.a)
    timed(args.b)
    a, b = [], []
    for index in range(args.n):
        order = [(args.a, a), (args.b, b)]
        for command, times in order if index % 2 == 0 else reversed(order):
            times.append(timed(command))
    ratios = sorted(x / y for x, y in zip(a, b))
    quartile = max(1, len(ratios) // 4)
    print("A %.1f ms  B %.1f ms  A/B %.2f  (per pair: median %.2f, quartiles %.2f-%.2f, %d pairs)" % (
        statistics.median(a) * 1e3, statistics.median(b) * 1e3, statistics.median(a) / statistics.median(b),
        statistics.median(ratios), ratios[quartile - 1], ratios[-quartile], args.n))


if __name__ == "__main__":
    main()
