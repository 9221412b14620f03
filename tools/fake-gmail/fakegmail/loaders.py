"""Mailbox sources: eml directories (and Maildir), mbox files, Gmail NDJSON.

- ``load_eml_dir``: every file under the directory (recursively, Maildir
  ``cur/`` and ``new/`` included, Maildir ``tmp/`` and dot-files skipped) is
  one RFC 822 message.  Labels come from ``X-Gmail-Labels`` (Google Takeout
  names) or ``X-Keywords`` (offlineimap, as bench/mkcorpus.py's Maildir writes),
  plus Maildir flags (no ``S`` -> UNREAD, ``F`` -> STARRED); with none of
  these a message is in INBOX.  The thread is ``X-GM-THRID`` when present,
  else found through References / In-Reply-To.
- ``load_mbox``: an mbox (mboxrd or mboxo) such as Takeout's, same headers.
- ``load_ndjson``: one ``users.messages.get(format=full)`` JSON per line:
  ids, threadIds, labelIds, internalDate, historyId, snippet, sizeEstimate
  and payload kept as given; ``raw`` rebuilt from the payload on demand.
- ``load_labels_json``: a ``labels.list`` response naming user labels.
"""
import csv
import email.utils
import hashlib
import json
import os
import re

from . import mime
from .labels import SYSTEM_IDS, TAKEOUT_IGNORED, TAKEOUT_NAMES
from .message import Message
from .util import b64_lenient, gmail_id

_FROM_LINE = re.compile(rb"^>+From ")


def label_for_name(name, labels):
    """Label id for a Takeout / keyword label name, creating user labels."""
    clean = name.strip()
    low = clean.lower()
    if low in TAKEOUT_IGNORED:
        return None
    if low in TAKEOUT_NAMES:
        return TAKEOUT_NAMES[low]
    if clean.upper() in SYSTEM_IDS:
        return clean.upper()
    return labels.ensure(clean)


def _split_names(value):
    value = mime.header_text(value)
    try:
        return next(csv.reader([value], skipinitialspace=True))
    except (csv.Error, StopIteration):
        return value.split(",")


def _date_ms(hdrs, fallback_s):
    value = hdrs.get("Date")
    if value:
        try:
            dt = email.utils.parsedate_to_datetime(str(value))
            if dt is not None:
                return int(dt.timestamp() * 1000)
        except (TypeError, ValueError, IndexError, OverflowError):
            pass
    return int(fallback_s * 1000)


def message_from_raw(raw, labels, flags=None, fallback_s=0, taken=None):
    """A Message from RFC 822 bytes, labels and thread taken from its headers.

    ``flags`` is the Maildir info string ("" for new/ mail, None when the
    file is not in a Maildir).  Returns (message, explicit_thread).
    """
    hdrs = mime.parse_headers(raw)
    label_ids = []
    names = hdrs.get("X-Gmail-Labels")
    keywords = hdrs.get("X-Keywords")
    if names is not None or keywords is not None:
        for name in _split_names(names if names is not None else keywords):
            lid = label_for_name(name, labels)
            if lid:
                label_ids.append(lid)
    else:
        label_ids.append("INBOX")
    if flags is not None and names is None:
        if "S" not in flags and "UNREAD" not in label_ids:
            label_ids.append("UNREAD")
        if "F" in flags and "STARRED" not in label_ids:
            label_ids.append("STARRED")
    ms = _date_ms(hdrs, fallback_s)
    gm_msgid = (hdrs.get("X-GM-MSGID") or "").strip()
    if gm_msgid.isdigit():
        msg_id = "%016x" % int(gm_msgid)
    else:
        msg_id = gmail_id(ms, hashlib.sha1(raw).hexdigest(), taken)
    thrid = (hdrs.get("X-GM-THRID") or "").strip()
    thread = "%016x" % int(thrid) if thrid.isdigit() else None
    m = Message(msg_id, thread or msg_id, label_ids, ms, raw=raw)
    if taken is not None:
        taken.add(msg_id)
    return m, thread is not None


def assign_threads(messages):
    """Group messages into threads through References / In-Reply-To.

    Union-find over Message-IDs; a thread's id is its oldest message's id.
    """
    parent = {m.id: m.id for m in messages}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    by_mid = {}
    for m in messages:
        if m.message_id:
            by_mid.setdefault(m.message_id, m.id)
    for m in messages:
        for ref in m.references:
            other = by_mid.get(ref)
            if other:
                a, b = find(m.id), find(other)
                if a != b:
                    parent[a] = b
    groups = {}
    for m in messages:
        groups.setdefault(find(m.id), []).append(m)
    for members in groups.values():
        oldest = min(members, key=lambda x: (x.internal_date, x.id))
        for m in members:
            m.thread_id = oldest.id


def _maildir_flags(path):
    """Maildir info flags for a file in cur/ or new/, else None."""
    folder = os.path.basename(os.path.dirname(path))
    root = os.path.dirname(os.path.dirname(path))
    if folder not in ("cur", "new") or not (
            os.path.isdir(os.path.join(root, "cur")) or os.path.isdir(os.path.join(root, "new"))):
        return None
    name = os.path.basename(path)
    return name.split(":2,", 1)[1] if ":2," in name else ""


def load_eml_dir(path, labels):
    """Every file under ``path`` is one message (see module docstring)."""
    files = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (
            d == "tmp" and os.path.isdir(os.path.join(root, "cur"))))
        files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith("."))
    out, taken, loose = [], set(), []
    for fname in files:
        with open(fname, "rb") as f:
            raw = f.read()
        if not raw.strip():
            continue
        flags = _maildir_flags(fname)
        lead = re.match(r"^(\d{9,11})\.", os.path.basename(fname))
        fallback = int(lead.group(1)) if lead else os.path.getmtime(fname)
        m, explicit = message_from_raw(raw, labels, flags, fallback, taken)
        out.append(m)
        if not explicit:
            loose.append(m)
    assign_threads(loose)
    return out


def iter_mbox(path):
    """Yield the raw bytes of each message of an mbox (mboxrd un-escaping)."""
    current = None
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"From "):
                if current is not None:
                    yield _finish_mbox(current)
                current = []
                continue
            if current is None:
                continue
            if _FROM_LINE.match(line):
                line = line[1:]
            current.append(line)
    if current is not None:
        yield _finish_mbox(current)


def _finish_mbox(lines):
    if lines and lines[-1].strip() == b"":
        lines = lines[:-1]
    return b"".join(lines)


def load_mbox(path, labels):
    out, taken, loose = [], set(), []
    for raw in iter_mbox(path):
        m, explicit = message_from_raw(raw, labels, None, os.path.getmtime(path), taken)
        out.append(m)
        if not explicit:
            loose.append(m)
    assign_threads(loose)
    return out


def _strip_empty(part):
    """Drop empty ``headers``/``parts`` lists: Google omits empty fields (§1)."""
    for key in ("headers", "parts"):
        if key in part and not part[key]:
            del part[key]
    for child in part.get("parts", ()):
        _strip_empty(child)


def load_ndjson(path, labels):
    """One ``format=full`` (or ``raw``) Message JSON per line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                msg_id = d["id"]
            except (ValueError, KeyError, TypeError):
                raise ValueError("%s:%d: not a Gmail message JSON" % (path, lineno)) from None
            payload = d.get("payload")
            if payload is not None:
                _strip_empty(payload)
            raw = b64_lenient(d["raw"]) if d.get("raw") else None
            if raw is None and payload is None:
                raise ValueError("%s:%d: message has neither payload nor raw" % (path, lineno))
            label_ids = d.get("labelIds") or []
            for lid in label_ids:
                if lid not in labels:
                    labels.ensure(lid, lid)
            out.append(Message(msg_id, d.get("threadId") or msg_id, label_ids,
                               int(d.get("internalDate") or 0), raw=raw, payload=payload,
                               snippet=d.get("snippet"), size=d.get("sizeEstimate"),
                               history_id=int(d.get("historyId") or 0)))
    return out


def load_labels_json(path, labels):
    """Define user labels from a labels.list response (or a list of Labels)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    for entry in data.get("labels", []) if isinstance(data, dict) else data:
        if entry.get("type", "user") == "user" and entry.get("id") and entry.get("name"):
            if entry["id"] in labels:
                labels.labels[entry["id"]]["name"] = entry["name"]
            else:
                labels.create(entry, entry["id"])
