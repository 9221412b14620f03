"""The Gmail endpoints: one function per method (gmail-api.md §2).

Paths are relative to ``/gmail/v1/users/{userId}/`` (``me`` or the account
address).  ``ROUTES`` maps (HTTP method, path regex) to the handler, its quota
cost in units (§3) and the OAuth scope class it needs (§7).  A handler gets a
``Ctx`` and the path groups, and returns ``(status, body)``: body is a dict
(JSON-encoded), pre-encoded JSON bytes, or None for an empty 204.
"""
import json
import re
import urllib.parse

from . import filters, importing, mime
from .drafts import draft_json
from .mailbox import decode_raw_field
from .message import FORMATS
from .oauth import scope_allows
from .query import Query
from .sending import check_sendable
from .util import ApiError, bad_request, json_bytes, not_found

MAX_PAGE = 500              # maxResults ceiling (§2.2, §2.9)
MAX_BATCH_MODIFY_IDS = 1000  # §2.6


class Ctx:
    """What a handler sees of one request."""

    def __init__(self, mailbox, params, body, headers, scopes):
        self.mailbox = mailbox
        self.params = params
        self.body = body or b""
        self.headers = headers
        self.scopes = scopes

    def param(self, name, default=None):
        values = self.params.get(name)
        return values[0] if values else default

    def int_param(self, name, default, high):
        value = self.param(name)
        if value is None or value == "":
            return default
        try:
            number = int(value)
        except ValueError:
            raise bad_request("Invalid value for %s: %s" % (name, value)) from None
        if not 1 <= number <= high:
            raise bad_request("Invalid value for %s: %s (must be between 1 and %d)" % (
                name, value, high))
        return number

    def bool_param(self, name):
        return (self.param(name) or "").lower() in ("true", "1")

    def json_body(self):
        if not self.body.strip():
            return {}
        try:
            data = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise bad_request("Invalid JSON payload received.") from None
        if not isinstance(data, dict):
            raise bad_request("Invalid JSON payload received. Expected an object.")
        return data

    def require(self, kind):
        """403 insufficientPermissions unless a granted scope allows ``kind`` (§4)."""
        if self.scopes is not None and not scope_allows(self.scopes, kind):
            raise ApiError(403, reason="insufficientPermissions", status="PERMISSION_DENIED")


# ------------------------------------------------------------------ users (§2.1)

def get_profile(ctx):
    return 200, ctx.mailbox.profile()


# ------------------------------------------------------------------ messages (§2.2-2.8)

def list_messages(ctx):
    q = ctx.param("q")
    if q:
        ctx.require("read_full")   # q is not allowed with gmail.metadata (§2.2)
    mb = ctx.mailbox
    query = Query(q, mb.labels, mb.account)
    return 200, mb.list_messages(query, ctx.params.get("labelIds", []),
                                 ctx.bool_param("includeSpamTrash"),
                                 ctx.int_param("maxResults", 100, MAX_PAGE),
                                 ctx.param("pageToken"))


def _format(ctx, allowed=FORMATS):
    fmt = ctx.param("format", "full")
    if fmt not in allowed:
        raise bad_request("Invalid format: %s" % fmt)
    if fmt in ("full", "raw"):
        ctx.require("read_full")
    return fmt


def get_message(ctx, msg_id):
    fmt = _format(ctx)
    with ctx.mailbox.lock:
        return 200, ctx.mailbox.get(msg_id).render(fmt, ctx.params.get("metadataHeaders"))


def get_attachment(ctx, msg_id, att_id):
    with ctx.mailbox.lock:
        data = ctx.mailbox.get(msg_id).attachment(att_id)
    if data is None:
        raise not_found()
    return 200, {"size": len(data), "data": mime.b64url_nopad(data)}


def _label_lists(ctx, body):
    mb = ctx.mailbox
    return (mb.check_label_ids(body.get("addLabelIds")),
            mb.check_label_ids(body.get("removeLabelIds")))


def modify_message(ctx, msg_id):
    add, remove = _label_lists(ctx, ctx.json_body())
    with ctx.mailbox.lock:
        return 200, ctx.mailbox.modify(msg_id, add, remove).modify_answer()


def batch_modify(ctx):
    body = ctx.json_body()
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise bad_request("ids must be a non-empty list of message ids")
    if len(ids) > MAX_BATCH_MODIFY_IDS:
        raise bad_request("Too many ids: %d (at most %d)" % (len(ids), MAX_BATCH_MODIFY_IDS))
    add, remove = _label_lists(ctx, body)
    ctx.mailbox.batch_modify(ids, add, remove)
    return 204, None


def trash_message(ctx, msg_id):
    with ctx.mailbox.lock:
        return 200, ctx.mailbox.trash(msg_id).modify_answer()


def untrash_message(ctx, msg_id):
    with ctx.mailbox.lock:
        return 200, ctx.mailbox.untrash(msg_id).modify_answer()


def delete_message(ctx, msg_id):
    ctx.mailbox.delete(msg_id)
    return 204, None


def _store_sent(ctx, raw, thread_id):
    """Validate and store an outgoing message with SENT (§2.7)."""
    check_sendable(raw)
    m = ctx.mailbox.add_raw(raw, ["SENT"], thread_id, mode="send")
    return 200, {"id": m.id, "threadId": m.thread_id, "labelIds": list(m.labels)}


def send_message(ctx):
    body = ctx.json_body()
    thread_id = body.get("threadId")
    if thread_id is not None and not isinstance(thread_id, str):
        raise bad_request("Invalid threadId")
    return _store_sent(ctx, decode_raw_field(body.get("raw")), thread_id)


def upload_send(ctx):
    """POST /upload/gmail/v1/users/me/messages/send (uploadType media or multipart)."""
    kind = ctx.param("uploadType", "media")
    ctype = ctx.headers.get("Content-Type", "")
    if kind == "media":
        return _store_sent(ctx, ctx.body, None)
    if kind == "multipart" and ctype.lower().startswith("multipart/"):
        parsed = mime._PARSER.parsebytes(b"Content-Type: " + ctype.encode("latin-1") +
                                         b"\r\n\r\n" + ctx.body)
        parts = parsed.get_payload() if parsed.is_multipart() else []
        if len(parts) == 2:
            try:
                meta = json.loads(parts[0].get_payload(decode=True) or b"{}")
            except ValueError:
                raise bad_request("Invalid metadata part") from None
            media = parts[1].get_payload(decode=True)
            if media is None:   # a message/rfc822 part parses into a Message
                media = parts[1].get_payload(0).as_bytes()
            return _store_sent(ctx, media, meta.get("threadId"))
    raise bad_request("Unsupported uploadType: %s" % kind)


# ------------------------------------------------------------------ drafts (§2.12)

def _draft_message(body, required=True):
    """The ``message`` of a Draft request body: (raw bytes or None, threadId or None)."""
    message = body.get("message")
    if message is None and not required:
        return None, None
    if not isinstance(message, dict):
        raise bad_request("Missing draft message")
    thread_id = message.get("threadId")
    if thread_id is not None and not isinstance(thread_id, str):
        raise bad_request("Invalid threadId")
    raw = message.get("raw")
    if raw is None:
        if required:
            raise bad_request("Missing draft message")
        return None, thread_id
    return decode_raw_field(raw), thread_id


def create_draft(ctx):
    raw, thread_id = _draft_message(ctx.json_body())
    draft_id, m = ctx.mailbox.drafts.create(raw, thread_id)
    with ctx.mailbox.lock:
        return 200, draft_json(draft_id, m)


def update_draft(ctx, draft_id):
    body = ctx.json_body()
    if body.get("id") not in (None, draft_id):
        raise bad_request("The draft id in the body does not match the URL")
    raw, thread_id = _draft_message(body)
    m = ctx.mailbox.drafts.replace(draft_id, raw, thread_id)
    with ctx.mailbox.lock:
        return 200, draft_json(draft_id, m)


def get_draft(ctx, draft_id):
    fmt = _format(ctx)
    with ctx.mailbox.lock:
        return 200, draft_json(draft_id, ctx.mailbox.drafts.get(draft_id), fmt,
                               ctx.params.get("metadataHeaders"))


def list_drafts(ctx):
    q = ctx.param("q")
    if q:
        ctx.require("read_full")
    mb = ctx.mailbox
    query = Query(q, mb.labels, mb.account)
    include = ctx.bool_param("includeSpamTrash") or query.allow_spam_trash
    size = ctx.int_param("maxResults", 100, MAX_PAGE)
    token = ctx.param("pageToken")
    start = 0
    if token:
        if not token.startswith("d") or not token[1:].isdigit():
            raise bad_request("Invalid pageToken")
        start = int(token[1:])
    with mb.lock:
        found = [(d, m) for d, m in mb.drafts.listing()
                 if (include or not {"SPAM", "TRASH"} & set(m.labels)) and query.match(m)]
        page = found[start:start + size]
        out = b'{"drafts":[' + b",".join(draft_json(d, m, None) for d, m in page) + b"]" if page else b"{"
        if start + size < len(found):
            out += (b"," if page else b"") + b'"nextPageToken":' + json_bytes("d%d" % (start + size))
        out += (b"," if page or start + size < len(found) else b"") + \
            b'"resultSizeEstimate":' + str(len(found)).encode("ascii") + b"}"
        return 200, out


def send_draft(ctx):
    body = ctx.json_body()
    draft_id = body.get("id")
    if not isinstance(draft_id, str) or not draft_id:
        raise bad_request("Missing draft id")
    raw, thread_id = _draft_message(body, required=False)
    m = ctx.mailbox.drafts.send(draft_id, raw, thread_id)
    return 200, {"id": m.id, "threadId": m.thread_id, "labelIds": list(m.labels)}


def delete_draft(ctx, draft_id):
    ctx.mailbox.drafts.delete(draft_id)
    return 204, None


# ------------------------------------------------------------------ history (§2.9)

def list_history(ctx):
    start = ctx.param("startHistoryId")
    if start is None or not start.isdigit():
        raise bad_request("Missing/invalid parameter: startHistoryId")
    mb = ctx.mailbox
    with mb.lock:
        records, token = mb.history.page(
            int(start), ctx.param("pageToken"), ctx.int_param("maxResults", 100, MAX_PAGE),
            ctx.param("labelId"), ctx.params.get("historyTypes", []))
        out = {}
        if records:
            out["history"] = records
        if token:
            out["nextPageToken"] = token
        out["historyId"] = str(mb.history.current)   # on every page (§2.9, §10)
    return 200, out


# ------------------------------------------------------------------ labels (§2.10)

def _list_entry(entry):
    return {k: v for k, v in entry.items()
            if k in ("id", "name", "messageListVisibility", "labelListVisibility", "type",
                     "color")}


def list_labels(ctx):
    with ctx.mailbox.lock:
        return 200, {"labels": [_list_entry(e) for e in ctx.mailbox.labels.all()]}


def get_label(ctx, label_id):
    mb = ctx.mailbox
    with mb.lock:
        entry = mb.labels.get(label_id)
        if entry is None:
            raise not_found()
        out = dict(entry)
        out.update(mb.label_counts(label_id))
        return 200, out


def create_label(ctx):
    body = ctx.json_body()
    with ctx.mailbox.lock:
        entry = ctx.mailbox.labels.create(body)
        ctx.mailbox.version += 1
        return 200, dict(entry)


def _update_label(ctx, label_id, replace):
    body = ctx.json_body()
    with ctx.mailbox.lock:
        entry = ctx.mailbox.labels.update(label_id, body, replace)
        ctx.mailbox.version += 1
        return 200, dict(entry)


def patch_label(ctx, label_id):
    return _update_label(ctx, label_id, False)


def update_label(ctx, label_id):
    return _update_label(ctx, label_id, True)


def delete_label(ctx, label_id):
    ctx.mailbox.delete_label(label_id)
    return 204, None


# ------------------------------------------------------------------ threads (§2.11)

def list_threads(ctx):
    q = ctx.param("q")
    if q:
        ctx.require("read_full")
    mb = ctx.mailbox
    return 200, mb.list_threads(Query(q, mb.labels, mb.account), ctx.params.get("labelIds", []),
                                ctx.bool_param("includeSpamTrash"),
                                ctx.int_param("maxResults", 100, MAX_PAGE), ctx.param("pageToken"))


def _thread_json(mb, thread_id, render):
    msgs = mb.thread_messages(thread_id)
    head = json_bytes({"id": thread_id, "historyId": str(mb.thread_history_id(thread_id))})
    return head[:-1] + b',"messages":[' + b",".join(render(m) for m in msgs) + b"]}"


def get_thread(ctx, thread_id):
    fmt = _format(ctx, ("full", "metadata", "minimal"))
    hdrs = ctx.params.get("metadataHeaders")
    with ctx.mailbox.lock:
        return 200, _thread_json(ctx.mailbox, thread_id, lambda m: m.render(fmt, hdrs))


def _thread_relabel(ctx, thread_id, add, remove):
    mb = ctx.mailbox
    with mb.lock:
        for m in mb.thread_messages(thread_id):
            mb.modify(m.id, add, remove)
        return 200, _thread_json(mb, thread_id, lambda m: m.render("minimal"))


def modify_thread(ctx, thread_id):
    add, remove = _label_lists(ctx, ctx.json_body())
    return _thread_relabel(ctx, thread_id, add, remove)


def trash_thread(ctx, thread_id):
    return _thread_relabel(ctx, thread_id, ["TRASH"], ["INBOX"])


def untrash_thread(ctx, thread_id):
    return _thread_relabel(ctx, thread_id, [], ["TRASH"])


# ------------------------------------------------------------------ routing

_ID = r"([^/]+)"
# (HTTP method, path regex, handler, quota units (§3), scope class (§7), method name)
ROUTES = [
    ("GET", r"profile", get_profile, 1, "profile", "users.getProfile"),
    ("GET", r"messages", list_messages, 5, "read", "messages.list"),
    ("POST", r"messages/batchModify", batch_modify, 50, "modify", "messages.batchModify"),
    ("POST", r"messages/send", send_message, 100, "send", "messages.send"),
    ("GET", r"messages/" + _ID, get_message, 5, "read", "messages.get"),
    ("DELETE", r"messages/" + _ID, delete_message, 10, "delete", "messages.delete"),
    ("GET", r"messages/%s/attachments/%s" % (_ID, _ID), get_attachment, 5, "read_full",
     "messages.attachments.get"),
    ("POST", r"messages/%s/modify" % _ID, modify_message, 5, "modify", "messages.modify"),
    ("POST", r"messages/%s/trash" % _ID, trash_message, 5, "modify", "messages.trash"),
    ("POST", r"messages/%s/untrash" % _ID, untrash_message, 5, "modify", "messages.untrash"),
    ("GET", r"history", list_history, 2, "read", "history.list"),
    ("GET", r"labels", list_labels, 1, "labels_read", "labels.list"),
    ("POST", r"labels", create_label, 5, "labels_write", "labels.create"),
    ("GET", r"labels/" + _ID, get_label, 1, "labels_read", "labels.get"),
    ("PATCH", r"labels/" + _ID, patch_label, 5, "labels_write", "labels.patch"),
    ("PUT", r"labels/" + _ID, update_label, 5, "labels_write", "labels.update"),
    ("DELETE", r"labels/" + _ID, delete_label, 5, "labels_write", "labels.delete"),
    ("POST", r"drafts/send", send_draft, 100, "send", "drafts.send"),
    ("POST", r"drafts", create_draft, 10, "compose", "drafts.create"),
    ("GET", r"drafts", list_drafts, 5, "drafts_read", "drafts.list"),
    ("GET", r"drafts/" + _ID, get_draft, 5, "drafts_read", "drafts.get"),
    ("PUT", r"drafts/" + _ID, update_draft, 15, "compose", "drafts.update"),
    ("DELETE", r"drafts/" + _ID, delete_draft, 10, "compose", "drafts.delete"),
    ("GET", r"threads", list_threads, 10, "read", "threads.list"),
    ("GET", r"threads/" + _ID, get_thread, 10, "read", "threads.get"),
    ("POST", r"threads/%s/modify" % _ID, modify_thread, 10, "modify", "threads.modify"),
    ("POST", r"threads/%s/trash" % _ID, trash_thread, 10, "modify", "threads.trash"),
    ("POST", r"threads/%s/untrash" % _ID, untrash_thread, 10, "modify", "threads.untrash"),
]
ROUTES += filters.ROUTES  # users.settings.filters (§2.14), in filters.py
UPLOAD_ROUTES = [("POST", r"messages/send", upload_send, 100, "send", "messages.send")]
ROUTES += importing.ROUTES            # messages.import (importing.py)
UPLOAD_ROUTES += importing.UPLOAD_ROUTES
_COMPILED = [(m, re.compile("^%s$" % p), h, u, s, n) for m, p, h, u, s, n in ROUTES]
_COMPILED_UPLOAD = [(m, re.compile("^%s$" % p), h, u, s, n) for m, p, h, u, s, n in UPLOAD_ROUTES]


def find_route(method, rest, upload=False):
    """(handler, units, scope class, name, path args); 404 when nothing matches."""
    for m, rx, handler, units, scope, name in (_COMPILED_UPLOAD if upload else _COMPILED):
        match = rx.match(rest)
        if match and m == method:
            return handler, units, scope, name, [urllib.parse.unquote(g) for g in match.groups()]
    raise not_found()
