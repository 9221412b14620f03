"""The supported subset of Gmail's ``q`` search syntax (gmail-api.md §6).

Terms are ANDed.  Supported: ``after:`` / ``before:`` (also ``newer:`` /
``older:``) with epoch seconds or YYYY/MM/DD, MM/DD/YYYY, YYYY-MM-DD dates
(midnight UTC; real Gmail uses midnight PST, §6), ``rfc822msgid:`` (brackets
optional), ``in:inbox|sent|trash|spam|anywhere|drafts|starred``, ``label:``
(name, ``-`` for spaces and ``/``, or id), ``is:unread|read|starred|important``,
``from:`` (substring of the decoded From header; ``from:me`` = the owner),
``has:attachment`` (a part with a non-empty filename, §8), ``filename:`` (an
attachment whose name contains the value, or whose MIME subtype is it, as in
``filename:pdf``), ``larger:`` / ``smaller:`` / ``size:`` (``size`` is
``larger``) against ``sizeEstimate``, in bytes or with a ``K`` / ``M`` suffix of
1024 / 1024² (Gmail does not document the unit; Hudson reads it so).
Values may be double-quoted.  A leading ``-`` negates a label term (``-in:``,
``-is:``, ``-label:``; §6's NOT operator), as lieer's ``-in:chats`` uses it.
Anything else is 400 "Invalid query".
"""
import calendar
import re

from . import mime
from .util import bad_request

_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*")+')
_IN = {"inbox": "INBOX", "sent": "SENT", "trash": "TRASH", "spam": "SPAM",
       "drafts": "DRAFT", "draft": "DRAFT", "starred": "STARRED",
       "important": "IMPORTANT", "chats": "CHAT", "unread": "UNREAD"}
_IS = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT"}
_SIZE = re.compile(r"^(\d{1,12})([kKmM]?)$")


def _invalid():
    return bad_request("Invalid query")


def parse_date(value):
    """Epoch seconds for an after:/before: value; None when it is malformed."""
    if value.isdigit():
        return int(value)
    m = re.match(r"^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$", value) or None
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = re.match(r"^(\d{1,2})/(\d{1,2})/(\d{4})$", value)
        if not m:
            return None
        mo, d, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        return calendar.timegm((y, mo, d, 0, 0, 0, 0, 0, 0)) if 1 <= mo <= 12 \
            and 1 <= d <= calendar.monthrange(y, mo)[1] else None
    except (ValueError, OverflowError):
        return None


class Query:
    """A compiled query; ``match(message)`` tests one message."""

    def __init__(self, q, labels, account):
        self.source = " ".join((q or "").split())
        self.after_ms = None
        self.before_ms = None
        self.msgid = None
        self.froms = []
        self.any_of = []          # list of sets: one label of each set required
        self.none_of = set()      # labels that must be absent
        self.allow_spam_trash = False
        self.has_attachment = False
        self.filenames = []
        self.larger = None        # bytes: sizeEstimate must be above
        self.smaller = None       # bytes: sizeEstimate must be below
        for token in _TOKEN.findall(self.source):
            self._term(token, labels, account)

    def _term(self, token, labels, account):
        if token.startswith("-"):
            return self._negated_label_term(token[1:], labels)
        op, sep, value = token.partition(":")
        if not sep or not value:
            raise _invalid()
        op = op.lower()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        low = value.lower()
        if op in ("after", "newer", "before", "older"):
            secs = parse_date(value)
            if secs is None:
                raise _invalid()
            if op in ("after", "newer"):
                self.after_ms = max(self.after_ms or 0, secs * 1000)
            else:
                self.before_ms = secs * 1000 if self.before_ms is None else min(
                    self.before_ms, secs * 1000)
        elif op == "rfc822msgid":
            self.msgid = value.strip().strip("<>")
        elif op == "in":
            if low == "anywhere":
                self.allow_spam_trash = True
            elif low in _IN:
                self.any_of.append({_IN[low]})
                if low in ("trash", "spam"):
                    self.allow_spam_trash = True
            else:
                raise _invalid()
        elif op == "is":
            if low == "read":
                self.none_of.add("UNREAD")
            elif low in _IS:
                self.any_of.append({_IS[low]})
            else:
                raise _invalid()
        elif op == "label":
            ids = set(labels.search_names(value))
            self.any_of.append(ids)   # an unknown label matches nothing
            if ids & {"TRASH", "SPAM"}:
                self.allow_spam_trash = True
        elif op == "from":
            self.froms.append(account.lower() if low == "me" else low)
        elif op == "has":
            if low != "attachment":
                raise _invalid()
            self.has_attachment = True
        elif op == "filename":
            self.filenames.append(low)
        elif op in ("larger", "size", "smaller"):
            m = _SIZE.match(value)
            if not m:
                raise _invalid()
            size = int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
            if op == "smaller":
                self.smaller = size if self.smaller is None else min(self.smaller, size)
            else:
                self.larger = size if self.larger is None else max(self.larger, size)
        else:
            raise _invalid()

    def _negated_label_term(self, token, labels):
        """``-in:X``, ``-is:X``, ``-label:X``: the message must not have the label(s)."""
        op, sep, value = token.partition(":")
        op = op.lower()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        low = value.lower()
        if not sep or not value:
            raise _invalid()
        if op == "in" and low in _IN:
            self.none_of.add(_IN[low])
        elif op == "is" and low == "read":
            self.any_of.append({"UNREAD"})
        elif op == "is" and low in _IS:
            self.none_of.add(_IS[low])
        elif op == "label":
            self.none_of.update(labels.search_names(value))
        else:
            raise _invalid()

    def signature(self):
        return self.source

    def match(self, m):
        if self.after_ms is not None and m.internal_date < self.after_ms:
            return False
        if self.before_ms is not None and m.internal_date >= self.before_ms:
            return False
        if self.any_of or self.none_of:
            have = set(m.labels)
            if any(not (need & have) for need in self.any_of) or (self.none_of & have):
                return False
        if self.msgid is not None and m.message_id.strip().strip("<>") != self.msgid:
            return False
        if self.froms:
            frm = m.from_text.lower()
            if any(f not in frm for f in self.froms):
                return False
        if self.larger is not None and not m.size_estimate() > self.larger:
            return False
        if self.smaller is not None and not m.size_estimate() < self.smaller:
            return False
        if self.has_attachment or self.filenames:
            parts = [n for n in mime.walk(m.payload()) if n.get("filename")]
            if not parts:
                return False
            for want in self.filenames:
                if not any(want in n["filename"].lower()
                           or (n.get("mimeType") or "").lower().endswith("/" + want) for n in parts):
                    return False
        return True
