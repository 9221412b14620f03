"""The mailbox-wide history log behind users.history.list (gmail-api.md §2.9, §5).

One counter for the whole mailbox.  Every mutation appends a record whose id
becomes the touched messages' ``historyId``.  Ids increase with random gaps
("not contiguous with random gaps", §5).  Records older than the retained
minimum are expired: a ``startHistoryId`` below it gives 404 (§5 "Stale id").
Records live in a list kept in id order and are found by bisection.
"""
import bisect
import random

from .util import ApiError, bad_request

# historyTypes value -> field of the History object (§2.9 schema).
TYPE_FIELDS = {
    "messageAdded": "messagesAdded",
    "messageDeleted": "messagesDeleted",
    "labelAdded": "labelsAdded",
    "labelRemoved": "labelsRemoved",
}


class Entry:
    """One change inside a record: a message added, deleted or relabelled."""

    __slots__ = ("kind", "msg_id", "thread_id", "labels_after", "changed")

    def __init__(self, kind, msg_id, thread_id, labels_after=(), changed=()):
        self.kind = kind
        self.msg_id = msg_id
        self.thread_id = thread_id
        self.labels_after = tuple(labels_after)
        self.changed = tuple(changed)

    def to_json(self):
        message = {"id": self.msg_id, "threadId": self.thread_id}
        if self.kind == "messageDeleted":
            return {"message": message}
        if self.labels_after:
            message["labelIds"] = list(self.labels_after)
        if self.kind == "messageAdded":
            return {"message": message}
        return {"message": message, "labelIds": list(self.changed)}


class HistoryLog:
    """Append-only list of records, bisected by id."""

    def __init__(self, start=100000, seed=1):
        self.current = int(start)
        self.min_valid = 0
        self.ids = []
        self.records = []
        self._gaps = random.Random(seed)

    def append(self, entries):
        """Store one record made of ``entries``; return its new id."""
        self.current += self._gaps.randint(1, 3)
        self.ids.append(self.current)
        self.records.append(list(entries))
        return self.current

    def expire(self, before=None):
        """Drop records with id < ``before`` (default: everything up to now)."""
        before = self.current if before is None else int(before)
        cut = bisect.bisect_left(self.ids, before)
        del self.ids[:cut]
        del self.records[:cut]
        self.min_valid = max(self.min_valid, before)

    def __len__(self):
        return len(self.ids)

    @staticmethod
    def _record_json(record_id, entries, label_id, types):
        kept = [e for e in entries
                if (not types or e.kind in types)
                and (label_id is None or label_id in e.labels_after or label_id in e.changed)]
        if not kept:
            return None
        out = {"id": str(record_id), "messages": []}
        seen = set()
        for e in kept:
            if e.msg_id not in seen:
                seen.add(e.msg_id)
                out["messages"].append({"id": e.msg_id, "threadId": e.thread_id})
            out.setdefault(TYPE_FIELDS[e.kind], []).append(e.to_json())
        return out

    def page(self, start, page_token, max_results, label_id=None, types=()):
        """One page of ``history.list``: (records, nextPageToken or None).

        A page covers up to ``max_results`` stored records after the start (or
        after the page token); filters (``labelId``, ``historyTypes``) are
        applied afterwards, so a filtered page may hold no record but still
        carry a ``nextPageToken`` (the gauteh/lieer#24 case, §9.1).
        """
        for t in types:
            if t not in TYPE_FIELDS:
                raise bad_request("Invalid historyTypes: %s" % t)
        if start < self.min_valid:
            raise ApiError(404, reason="notFound")
        after = start
        if page_token:
            try:
                after = int(page_token)
            except ValueError:
                raise bad_request("Invalid pageToken") from None
            if after < start:
                raise bad_request("Invalid pageToken")
            if after < self.min_valid:
                raise ApiError(404, reason="notFound")
        i = bisect.bisect_right(self.ids, after)
        chunk = range(i, min(i + max_results, len(self.ids)))
        out = []
        for j in chunk:
            rec = self._record_json(self.ids[j], self.records[j], label_id, set(types))
            if rec is not None:
                out.append(rec)
        token = None
        if chunk and chunk[-1] + 1 < len(self.ids):
            token = "%020d" % self.ids[chunk[-1]]
        return out, token
