"""One stored message and its cached JSON renderings (gmail-api.md §2.3).

A message comes either from RFC 822 bytes (demo, eml, mbox, send, admin
insert) or from a Gmail ``format=full`` JSON object (NDJSON loader).  The
other representation is built lazily on first use: parsing 100,000 messages
up front would make start-up slow.

Renderings: the parts that never change (``payload`` JSON per format and
metadataHeaders, the ``raw`` base64 string) are encoded once and cached; the
small mutable prefix (labelIds, historyId) is encoded per call and spliced in.
"""
import json

from . import mime
from .util import b64url_pad, json_bytes

FORMATS = ("minimal", "metadata", "full", "raw")


class Message:
    """A message in the mailbox.  Mutable state: ``labels``, ``history_id``."""

    __slots__ = ("id", "thread_id", "labels", "internal_date", "history_id",
                 "message_id", "from_text", "subject", "references",
                 "_raw", "_payload", "_attachments", "_snippet", "_size",
                 "_cache")

    def __init__(self, msg_id, thread_id, labels, internal_date, raw=None,
                 payload=None, snippet=None, size=None, history_id=0):
        self.id = msg_id
        self.thread_id = thread_id
        self.labels = list(dict.fromkeys(labels))
        self.internal_date = int(internal_date)
        self.history_id = int(history_id)
        self._raw = raw
        self._payload = payload
        self._attachments = None
        self._snippet = snippet
        self._size = size
        self._cache = {}
        self.message_id = ""
        self.from_text = ""
        self.subject = ""
        self.references = []
        if raw is not None:
            self._index_headers(mime.parse_headers(raw).items())
        elif payload is not None:
            self._index_headers((h.get("name", ""), h.get("value", ""))
                                for h in payload.get("headers") or ())

    def _index_headers(self, items):
        """Remember the few headers that search and threading need."""
        refs, reply = [], []
        for name, value in items:
            lname = name.lower()
            if lname == "message-id" and not self.message_id:
                self.message_id = mime.header_text(value).strip()
            elif lname == "from" and not self.from_text:
                self.from_text = mime.header_text(value)
            elif lname == "subject" and not self.subject:
                self.subject = mime.header_text(value)
            elif lname == "references":
                refs = mime.message_ids(value)
            elif lname == "in-reply-to":
                reply = mime.message_ids(value)
        self.references = list(dict.fromkeys(refs + reply))

    # ---------------------------------------------------------- lazy data

    def raw(self):
        """The whole RFC 822 message as bytes."""
        if self._raw is None:
            self._raw = mime.payload_to_raw(self._payload, self.id)
        return self._raw

    def _parse(self):
        """Parse the raw bytes once: payload (unless given), attachments, snippet."""
        parsed = mime.parse(self.raw(), self.id)
        if self._payload is None:
            self._payload = parsed.payload
        self._attachments = parsed.attachments
        if self._snippet is None:
            self._snippet = parsed.snippet

    def payload(self):
        if self._payload is None:
            self._parse()
        return self._payload

    def snippet(self):
        if self._snippet is None:
            if self._payload is None:
                self._parse()
            else:
                self._snippet = mime.payload_snippet(self._payload)
        return self._snippet

    def size_estimate(self):
        """sizeEstimate = length of the raw bytes (§2.3)."""
        if self._size is None:
            self._size = len(self.raw())
        return self._size

    def attachment(self, att_id):
        """Decoded bytes of one attachment, or None (§2.4).

        For a payload given as JSON the id is looked up in that payload; its
        bytes come from the raw message when there is one, else from
        ``body.data``, else from deterministic filler of the declared size.
        """
        if self._attachments is None:
            if self._raw is not None or self._payload is None:
                self._parse()
            else:
                self._attachments = {}
        data = self._attachments.get(att_id)
        if data is not None:
            return data
        node = mime.payload_attachments(self.payload()).get(att_id)
        if node is None:
            return None
        own = self._attachments.get(mime.attachment_id(self.id, node.get("partId", "")))
        if own is not None:
            return own
        body = node.get("body") or {}
        if body.get("data"):
            return mime.b64_lenient(body["data"])
        return mime.filler(att_id, int(body.get("size") or 0))

    # ---------------------------------------------------------- rendering

    def forget_renderings(self):
        self._cache.clear()

    def modify_answer(self):
        """What modify, trash and untrash answer: the minimal Message with only the
        fields Gmail documents for it (§2.5: "don't rely on anything beyond id,
        threadId and labelIds"), so a client that needs more fails here first."""
        out = {"id": self.id, "threadId": self.thread_id}
        if self.labels:
            out["labelIds"] = list(self.labels)
        return out

    def minimal(self):
        """The ``format=minimal`` object (§2.3); empty fields omitted (§1)."""
        out = {"id": self.id, "threadId": self.thread_id}
        if self.labels:
            out["labelIds"] = list(self.labels)
        snippet = self.snippet()
        if snippet:
            out["snippet"] = snippet
        out["historyId"] = str(self.history_id)
        out["internalDate"] = str(self.internal_date)
        out["sizeEstimate"] = self.size_estimate()
        return out

    def ref(self, with_labels=False):
        """``{id, threadId[, labelIds]}`` as used in list and history responses."""
        out = {"id": self.id, "threadId": self.thread_id}
        if with_labels and self.labels:
            out["labelIds"] = list(self.labels)
        return out

    def render(self, fmt="full", metadata_headers=None):
        """UTF-8 JSON of ``messages.get`` in the given format."""
        head = json_bytes(self.minimal())
        key = self._tail_key(fmt, metadata_headers)
        if key is None:
            return head
        tail = self._cache.get(key)
        if tail is None:
            tail = self._tail(fmt, metadata_headers)
            self._cache[key] = tail
        return head[:-1] + tail

    def as_dict(self, fmt="full", metadata_headers=None):
        return json.loads(self.render(fmt, metadata_headers))

    @staticmethod
    def _tail_key(fmt, metadata_headers):
        if fmt == "minimal":
            return None
        if fmt == "metadata":
            return "metadata:" + "\n".join(h.lower() for h in metadata_headers or ())
        return fmt

    def _tail(self, fmt, metadata_headers):
        if fmt == "raw":
            return b',"raw":' + json_bytes(b64url_pad(self.raw())) + b"}"
        payload = self.payload()
        if fmt == "metadata":
            headers = payload.get("headers") or []
            if metadata_headers:
                wanted = {h.lower() for h in metadata_headers}
                headers = [h for h in headers if h.get("name", "").lower() in wanted]
            payload = {"partId": payload.get("partId", ""),
                       "mimeType": payload.get("mimeType", ""),
                       "filename": payload.get("filename", "")}
            if headers:
                payload["headers"] = headers
        return b',"payload":' + json_bytes(payload) + b"}"
