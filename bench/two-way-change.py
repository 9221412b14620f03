#!/usr/bin/env python3
"""What a mail client does to a two-way export between two runs, for bench.py's rows.

    bench/two-way-change.py maildir DIR [--count 1000]
        toggles the S (seen) flag of COUNT message files, as a Maildir client marks mail
        read or unread: each file renamed in place, `cur/U:2,FLAGS` to `cur/U:2,FLAGS±S`
        (a file in `new/` moves to `cur/U:2,S`, as a client does when it first sees it).
    bench/two-way-change.py notmuch IDS [--tag flagged]
        adds TAG to every notmuch message id listed in the file IDS (one a line) when the
        first of them lacks it, and removes it from all of them otherwise, in one
        `notmuch tag --batch` (NOTMUCH_CONFIG names the database).

Each run changes the same messages, the other way: the files are the COUNT spread
evenly over the Maildir sorted by their unique part (the name before `:2,`, which no
flag change alters), so a row's every run reads back the same number of changes.
Prints one line: how many were changed, and which way.
"""
import argparse
import os
import subprocess
import sys


def unique_part(name):
    return name.split(":", 1)[0]


def maildir_files(directory):
    """(unique part, subdirectory, name) of every message file in cur/ and new/."""
    found = []
    for sub in ("cur", "new"):
        with os.scandir(os.path.join(directory, sub)) as entries:
            for entry in entries:
                if not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                    found.append((unique_part(entry.name), sub, entry.name))
    found.sort()
    return found


def spread(items, count):
    """COUNT of ITEMS, evenly spaced (all of them when there are fewer)."""
    if count >= len(items):
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def toggled_name(sub, name):
    """The name a client gives a file after toggling its S flag (Maildir flags are kept in
    ASCII order)."""
    if sub == "new" or ":2," not in name:
        return unique_part(name) + ":2,S"
    base, flags = name.split(":2,", 1)
    flags = flags.replace("S", "") if "S" in flags else "".join(sorted(flags + "S"))
    return base + ":2," + flags


def toggle_maildir(directory, count):
    chosen = spread(maildir_files(directory), count)
    marked = 0
    for _, sub, name in chosen:
        new = toggled_name(sub, name)
        os.rename(os.path.join(directory, sub, name), os.path.join(directory, "cur", new))
        marked += "S" in new.split(":2,", 1)[1]
    return "%d files: %d marked seen, %d unseen" % (len(chosen), marked, len(chosen) - marked)


def toggle_notmuch(ids_file, tag):
    with open(ids_file) as f:
        ids = [line.strip() for line in f if line.strip()]
    if not ids:
        sys.exit("two-way-change: %s: no message ids" % ids_file)
    first = subprocess.run(["notmuch", "count", "id:" + ids[0], "and", "tag:" + tag], check=True,
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    sign = "-" if first != "0" else "+"
    batch = "".join("%s%s -- id:%s\n" % (sign, tag, i) for i in ids)
    subprocess.run(["notmuch", "tag", "--batch"], input=batch, text=True, check=True)
    return "%d messages: %s%s" % (len(ids), sign, tag)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("maildir")
    m.add_argument("directory")
    m.add_argument("--count", type=int, default=1000)
    n = sub.add_parser("notmuch")
    n.add_argument("ids")
    n.add_argument("--tag", default="flagged")
    args = p.parse_args()
    if args.mode == "maildir":
        print(toggle_maildir(args.directory, args.count))
    else:
        print(toggle_notmuch(args.ids, args.tag))


if __name__ == "__main__":
    main()
