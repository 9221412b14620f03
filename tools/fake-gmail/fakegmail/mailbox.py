"""The mailbox: messages, threads, labels, the sorted index and the history log.

Every read and write takes ``self.lock``.  Every mutation appends a history
record (gmail-api.md §2.9, §5) and stamps the touched messages with its id.
Listing walks ``self.index`` (a list of ``(internalDate, id)`` kept sorted)
from the end, so results are newest first by internalDate, then id (§2.2).
Page tokens encode the ``(internalDate, id)`` of the last item plus a hash of
the query, so they stay valid while messages are added.
"""
import bisect
import email.utils
import hashlib
import json
import threading

from . import mime
from .drafts import Drafts
from .history import Entry, HistoryLog
from .labels import NOT_USER_SETTABLE, LabelTable
from .message import Message
from .util import ApiError, b64_lenient, b64url_nopad, bad_request, gmail_id, not_found

MAX_LABELS_PER_CALL = 100   # ModifyMessageRequest limit (§2.5)


class Mailbox:
    """One Gmail mailbox (one account per server)."""

    def __init__(self, account, clock, history_start=100000, seed=1):
        self.account = account
        self.clock = clock
        self.lock = threading.RLock()
        self.labels = LabelTable()
        self.messages = {}
        self.index = []
        self.threads = {}
        self.by_msgid = {}
        self.history = HistoryLog(history_start, seed)
        self.history_start = history_start
        self.version = 0
        self._counts = {}
        self._seq = 0
        self.drafts = Drafts(self)

    # ------------------------------------------------------------ persistence

    def __getstate__(self):
        """For ``--state``: everything but the lock (a new process makes its own)."""
        state = self.__dict__.copy()
        del state["lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lock = threading.RLock()

    # ------------------------------------------------------------ storage

    def _insert(self, m):
        self.messages[m.id] = m
        bisect.insort(self.index, (m.internal_date, m.id))
        members = self.threads.setdefault(m.thread_id, [])
        members.append(m.id)
        members.sort(key=lambda i: (self.messages[i].internal_date, i))
        if m.message_id and m.message_id not in self.by_msgid:
            self.by_msgid[m.message_id] = m.id

    def _remove(self, m):
        pos = bisect.bisect_left(self.index, (m.internal_date, m.id))
        if pos < len(self.index) and self.index[pos] == (m.internal_date, m.id):
            del self.index[pos]
        del self.messages[m.id]
        members = self.threads.get(m.thread_id, [])
        if m.id in members:
            members.remove(m.id)
        if not members:
            self.threads.pop(m.thread_id, None)
        if self.by_msgid.get(m.message_id) == m.id:
            del self.by_msgid[m.message_id]

    def load(self, messages):
        """Bulk-load messages at start-up.  No history is recorded for them.

        Messages without a historyId get ids just below the starting counter,
        in internalDate order; the counter starts at max(--history-start, the
        largest loaded historyId, number of messages + 1000).
        """
        with self.lock:
            fresh = list({m.id: m for m in reversed(messages)
                          if m.id not in self.messages}.values())
            start = max([self.history_start, len(fresh) + 1000] +
                        [m.history_id for m in fresh])
            undated = sorted((m for m in fresh if not m.history_id),
                             key=lambda m: (m.internal_date, m.id))
            for rank, m in enumerate(undated):
                m.history_id = start - len(undated) + rank
            self.history.current = start
            for m in fresh:
                self.messages[m.id] = m
            self.index = sorted((m.internal_date, m.id) for m in self.messages.values())
            self.threads = {}
            for _, mid in self.index:
                self.threads.setdefault(self.messages[mid].thread_id, []).append(mid)
            for _, mid in self.index:
                m = self.messages[mid]
                if m.message_id and m.message_id not in self.by_msgid:
                    self.by_msgid[m.message_id] = mid
            # A loaded message labelled DRAFT is a draft, as in Gmail (§2.12).
            for m in fresh:
                if "DRAFT" in m.labels:
                    self.drafts.by_id[self.drafts._new_id()] = m.id
            self.version += 1
            return len(fresh)

    def get(self, msg_id):
        m = self.messages.get(msg_id)
        if m is None:
            raise not_found()
        return m

    # ------------------------------------------------------------ labels

    def check_label_ids(self, ids, user_call=True):
        """Validate label ids of a modify call (§2.5): 400 "Invalid label: X"."""
        if ids is None:
            return []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise bad_request("Invalid label list")
        if len(ids) > MAX_LABELS_PER_CALL:
            raise bad_request("Too many label ids (at most %d)" % MAX_LABELS_PER_CALL)
        for lid in ids:
            if lid not in self.labels or (user_call and lid in NOT_USER_SETTABLE):
                raise bad_request("Invalid label: %s" % lid)
        return ids

    def _relabel(self, m, add, remove):
        """Apply label changes to one message; record history if anything changed."""
        have = list(m.labels)
        added = [lid for lid in dict.fromkeys(add) if lid not in have and lid not in remove]
        removed = [lid for lid in dict.fromkeys(remove) if lid in have]
        if not added and not removed:
            return False
        m.labels = [lid for lid in have if lid not in removed] + added
        entries = []
        if added:
            entries.append(Entry("labelAdded", m.id, m.thread_id, m.labels, added))
        if removed:
            entries.append(Entry("labelRemoved", m.id, m.thread_id, m.labels, removed))
        m.history_id = self.history.append(entries)
        m.forget_renderings()
        self.version += 1
        return True

    def modify(self, msg_id, add=(), remove=()):
        """messages.modify (§2.5); a no-op records nothing."""
        with self.lock:
            m = self.get(msg_id)
            self._relabel(m, add or (), remove or ())
            return m

    def batch_modify(self, ids, add=(), remove=()):
        """messages.batchModify (§2.6): unknown ids are ignored."""
        with self.lock:
            for msg_id in dict.fromkeys(ids):
                m = self.messages.get(msg_id)
                if m is not None:
                    self._relabel(m, add or (), remove or ())

    def trash(self, msg_id):
        """Trash = label change (+TRASH, -INBOX), not a deletion (§2.8)."""
        return self.modify(msg_id, ["TRASH"], ["INBOX"])

    def untrash(self, msg_id):
        return self.modify(msg_id, [], ["TRASH"])

    def delete_label(self, label_id):
        """labels.delete: remove it from every message (labelRemoved history)."""
        with self.lock:
            entry = self.labels.get(label_id)
            if entry is None:
                raise not_found()
            if entry["type"] == "system":
                raise bad_request("Invalid label: %s" % label_id)
            for _, mid in self.index:
                m = self.messages[mid]
                if label_id in m.labels:
                    self._relabel(m, (), [label_id])
            self.labels.delete(label_id)
            self.version += 1

    def label_counts(self, label_id):
        """messagesTotal/Unread and threadsTotal/Unread for labels.get (§2.10)."""
        with self.lock:
            key = ("label", label_id)
            cached = self._counts.get(key)
            if cached and cached[0] == self.version:
                return cached[1]
            total = unread = 0
            threads, unread_threads = set(), set()
            for m in self.messages.values():
                if label_id in m.labels:
                    total += 1
                    threads.add(m.thread_id)
                    if "UNREAD" in m.labels:
                        unread += 1
                        unread_threads.add(m.thread_id)
            counts = {"messagesTotal": total, "messagesUnread": unread,
                      "threadsTotal": len(threads), "threadsUnread": len(unread_threads)}
            self._counts[key] = (self.version, counts)
            return counts

    # ------------------------------------------------------------ adding, deleting

    def new_id(self, ms):
        self._seq += 1
        return gmail_id(ms, "%s:new:%d" % (self.account, self._seq), self.messages)

    def _ensure_headers(self, raw, msg_id, ms):
        """Add Message-ID and Date when missing, as Gmail does on send."""
        hdrs = mime.parse_headers(raw)
        extra = b""
        if not hdrs.get("Message-ID"):
            extra += b"Message-ID: <%s.fake@mail.gmail.com>\r\n" % msg_id.encode("ascii")
        if not hdrs.get("Date"):
            extra += b"Date: %s\r\n" % email.utils.formatdate(ms / 1000.0).encode("ascii")
        return extra + raw

    def thread_for_reply(self, m, thread_id):
        """The thread a sent message joins (§2.7): threadId given, References or
        In-Reply-To naming one of its messages, and a matching subject."""
        members = self.threads.get(thread_id or "")
        if not members:
            return None
        msgs = [self.messages[i] for i in members]
        known = {x.message_id for x in msgs if x.message_id}
        if not any(r in known for r in m.references):
            return None
        subject = mime.normalize_subject(m.subject)
        if not any(mime.normalize_subject(x.subject) == subject for x in msgs):
            return None
        return thread_id

    def thread_by_references(self, m):
        for ref in reversed(m.references):
            mid = self.by_msgid.get(ref)
            if mid:
                return self.messages[mid].thread_id
        return None

    def add_raw(self, raw, labels, thread_id=None, internal_date=None, mode="send"):
        """Store a new message (send or admin insert); records messageAdded.

        ``mode="send"``: the thread is ``thread_id`` only when the §2.7 rule
        holds.  ``mode="insert"``: ``thread_id`` is taken as given, else the
        thread is found through References/In-Reply-To.
        """
        with self.lock:
            ms = int(internal_date) if internal_date is not None else self.clock.now_ms()
            msg_id = self.new_id(ms)
            raw = self._ensure_headers(raw, msg_id, ms) if mode in ("send", "draft") else raw
            m = Message(msg_id, msg_id, labels, ms, raw=raw)
            if mode in ("send", "draft"):
                joined = self.thread_for_reply(m, thread_id)
            else:
                joined = thread_id or self.thread_by_references(m)
            m.thread_id = joined or msg_id
            for lid in m.labels:
                if lid not in self.labels:
                    raise bad_request("Invalid label: %s" % lid)
            m.history_id = self.history.append(
                [Entry("messageAdded", m.id, m.thread_id, m.labels)])
            self._insert(m)
            self.version += 1
            return m

    def delete(self, msg_id):
        """Permanent delete: messagesDeleted history (§2.8, §2.9)."""
        with self.lock:
            m = self.get(msg_id)
            self.history.append([Entry("messageDeleted", m.id, m.thread_id, m.labels)])
            self._remove(m)
            self.drafts.forget_message(m.id)
            self.version += 1
            return m

    # ------------------------------------------------------------ listing

    @staticmethod
    def _token(key, sig):
        blob = json.dumps([key[0], key[1], hashlib.sha1(sig.encode()).hexdigest()[:10]])
        return b64url_nopad(blob.encode("utf-8"))

    @staticmethod
    def _untoken(token, sig):
        try:
            date, ident, check = json.loads(b64_lenient(token))
            assert check == hashlib.sha1(sig.encode()).hexdigest()[:10]
            return int(date), str(ident)
        except (ValueError, TypeError, AssertionError):
            raise bad_request("Invalid pageToken") from None

    def _filter(self, query, label_ids, include_spam_trash):
        need = set(label_ids)
        allow = include_spam_trash or query.allow_spam_trash or bool(need & {"SPAM", "TRASH"})

        def ok(m):
            if not allow and ("SPAM" in m.labels or "TRASH" in m.labels):
                return False
            if need and not need.issubset(m.labels):
                return False
            return query.match(m)
        sig = json.dumps([query.signature(), sorted(need), bool(include_spam_trash)])
        return ok, sig

    def _newest_first(self, token_key):
        pos = len(self.index) if token_key is None else bisect.bisect_left(self.index, token_key)
        for j in range(pos - 1, -1, -1):
            yield self.index[j], self.messages[self.index[j][1]]

    def _estimate(self, kind, sig, ok):
        cached = self._counts.get((kind, sig))
        if cached and cached[0] == self.version:
            return cached[1]
        if kind == "messages":
            n = sum(1 for m in self.messages.values() if ok(m))
        else:
            n = len({m.thread_id for m in self.messages.values() if ok(m)})
        self._counts[(kind, sig)] = (self.version, n)
        return n

    def list_messages(self, query, label_ids, include_spam_trash, max_results, page_token):
        """messages.list (§2.2) -> response dict."""
        with self.lock:
            ok, sig = self._filter(query, label_ids, include_spam_trash)
            key = self._untoken(page_token, sig) if page_token else None
            found = []
            for k, m in self._newest_first(key):
                if ok(m):
                    found.append((k, m))
                    if len(found) > max_results:
                        break
            out = {}
            if found[:max_results]:
                out["messages"] = [m.ref() for _, m in found[:max_results]]
            if len(found) > max_results:
                out["nextPageToken"] = self._token(found[max_results - 1][0], sig)
            out["resultSizeEstimate"] = self._estimate("messages", sig, ok)
            return out

    def list_threads(self, query, label_ids, include_spam_trash, max_results, page_token):
        """threads.list (§2.11): threads ordered by their newest matching message."""
        with self.lock:
            ok, sig = self._filter(query, label_ids, include_spam_trash)
            key = self._untoken(page_token, sig) if page_token else None
            found = []
            for k, m in self._newest_first(key):
                if not ok(m) or any(
                        (self.messages[i].internal_date, i) > k and ok(self.messages[i])
                        for i in self.threads[m.thread_id]):
                    continue
                found.append((k, m))
                if len(found) > max_results:
                    break
            out = {}
            if found[:max_results]:
                out["threads"] = []
                for _, m in found[:max_results]:
                    newest = self.messages[self.threads[m.thread_id][-1]]
                    entry = {"id": m.thread_id}
                    if newest.snippet():
                        entry["snippet"] = newest.snippet()
                    entry["historyId"] = str(self.thread_history_id(m.thread_id))
                    out["threads"].append(entry)
            if len(found) > max_results:
                out["nextPageToken"] = self._token(found[max_results - 1][0], sig)
            out["resultSizeEstimate"] = self._estimate("threads", sig, ok)
            return out

    def thread_messages(self, thread_id):
        with self.lock:
            members = self.threads.get(thread_id)
            if not members:
                raise not_found()
            return [self.messages[i] for i in members]

    def thread_history_id(self, thread_id):
        return max(self.messages[i].history_id for i in self.threads[thread_id])

    def profile(self):
        """users.getProfile (§2.1)."""
        with self.lock:
            return {"emailAddress": self.account, "messagesTotal": len(self.messages),
                    "threadsTotal": len(self.threads),
                    "historyId": str(self.history.current)}


def decode_raw_field(value):
    """The ``raw`` of a send request: base64url or standard, padded or not (§8)."""
    if not isinstance(value, str) or not value:
        raise bad_request("Invalid raw: missing")
    try:
        return b64_lenient(value)
    except ValueError:
        raise ApiError(400, "Invalid value for ByteString: %s" % value[:40],
                       "invalidArgument") from None
