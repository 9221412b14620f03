"""Drafts (gmail-api.md §2.12; the discovery document's ``users.drafts``).

A draft is an id (``r-`` and digits, opaque to clients) naming one message that
carries the ``DRAFT`` label.  The message is an ordinary mailbox message: it is
listed, searched (``in:drafts``) and recorded in history like any other.
Replacing a draft's content (``drafts.update``, or an edit "on another device"
through the admin API) stores a new message and deletes the old one, so history
shows ``messageDeleted`` then ``messageAdded``, and the draft keeps its id.
``drafts.send`` delivers the draft's message (§2.7 threading rule): the draft
message is deleted and a new message labelled ``SENT`` is stored; the draft is
gone.  ``drafts.delete`` deletes draft and message for good (not to trash).
"""
from .sending import check_sendable
from .util import ApiError, bad_request, json_bytes, not_found

DRAFT = "DRAFT"


class Drafts:
    """The drafts of one mailbox: draft id -> message id.  Uses the mailbox lock."""

    def __init__(self, mailbox):
        self.mailbox = mailbox
        self.by_id = {}
        self._seq = 0

    def _new_id(self):
        self._seq += 1
        return "r-%d" % (7031000000000000000 + self._seq * 7919)

    def _message(self, draft_id):
        msg_id = self.by_id.get(draft_id)
        if msg_id is None or msg_id not in self.mailbox.messages:
            raise not_found()
        return self.mailbox.messages[msg_id]

    @staticmethod
    def _check_raw(raw):
        if raw is None or not raw.strip():
            raise bad_request("Missing draft message")

    def create(self, raw, thread_id=None):
        self._check_raw(raw)
        mb = self.mailbox
        with mb.lock:
            m = mb.add_raw(raw, [DRAFT], thread_id, mode="draft")
            draft_id = self._new_id()
            self.by_id[draft_id] = m.id
            return draft_id, m

    def replace(self, draft_id, raw, thread_id=None):
        """drafts.update: the draft's message is replaced by a new one."""
        self._check_raw(raw)
        mb = self.mailbox
        with mb.lock:
            old = self._message(draft_id)
            mb.delete(old.id)
            m = mb.add_raw(raw, [DRAFT], thread_id or old.thread_id, mode="draft")
            self.by_id[draft_id] = m.id
            return m

    def get(self, draft_id):
        with self.mailbox.lock:
            return self._message(draft_id)

    def send(self, draft_id, raw=None, thread_id=None):
        """drafts.send: the draft's message (or ``raw``, its update) goes out."""
        mb = self.mailbox
        with mb.lock:
            old = self._message(draft_id)
            content = raw if raw is not None else old.raw()
            check_sendable(content)
            sent = mb.add_raw(content, ["SENT"], thread_id or old.thread_id, mode="send")
            mb.delete(old.id)
            self.by_id.pop(draft_id, None)
            return sent

    def delete(self, draft_id):
        mb = self.mailbox
        with mb.lock:
            old = self._message(draft_id)
            mb.delete(old.id)
            self.by_id.pop(draft_id, None)

    def listing(self):
        """(draft id, message) pairs, the newest message first."""
        mb = self.mailbox
        with mb.lock:
            pairs = [(d, mb.messages[m]) for d, m in self.by_id.items() if m in mb.messages]
        pairs.sort(key=lambda p: (p[1].internal_date, p[1].id), reverse=True)
        return pairs

    def forget_message(self, msg_id):
        """A draft whose message was deleted some other way is gone too."""
        for d, m in list(self.by_id.items()):
            if m == msg_id:
                del self.by_id[d]


def draft_json(draft_id, message, fmt="minimal", headers=None):
    """A ``Draft`` as pre-encoded JSON; ``fmt=None``: the list form (id and threadId only)."""
    if fmt is None:
        inner = json_bytes({"id": message.id, "threadId": message.thread_id})
    else:
        inner = message.render(fmt, headers)
    return b'{"id":' + json_bytes(draft_id) + b',"message":' + inner + b"}"


__all__ = ["Drafts", "draft_json", "ApiError"]
