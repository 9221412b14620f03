"""users.messages.import (gmail-api.md §2.13; ``gmail.users.messages.import`` in the
discovery document): a message put into the mailbox as if delivered by SMTP.

- ``POST messages/import`` with a JSON ``Message`` body: ``raw`` (base64url), ``labelIds``,
  ``threadId``;
- ``POST /upload/gmail/v1/users/me/messages/import`` with ``uploadType=media`` (the body is
  the message, ``message/*``; no labels) or ``uploadType=multipart`` (a JSON ``Message``
  part, then the message); ``resumable`` is not served here (400).

Query parameters, checked as Google types them: ``internalDateSource`` (``dateHeader``, the
default: internalDate from the Date header when it parses, else now; ``receivedTime``: now),
``neverMarkSpam``, ``processForCalendar`` and ``deleted`` (booleans). Gmail's spam
classifier is stood in for by one rule: a message with the header ``X-Fake-Spam: yes`` is
put in SPAM (and out of INBOX) unless ``neverMarkSpam=true``. ``deleted=true`` (Vault only)
answers with a message id that no list, get or history ever shows. ``processForCalendar``
is accepted and has no effect (there is no calendar).

Labels are checked like a modify's (400 ``Invalid label``); SENT may be set on import, DRAFT
and CHAT may not. A message without headers is 400 ``Invalid raw message``; one over 150 MB
(``mediaUpload.maxSize``) is 413. Threading follows §2.13/§2.7: the given ``threadId`` or a
thread a References/In-Reply-To names, only when the subject matches. Costs 25 units (§3).
Each import is a ``messagesAdded`` in history, and the stored bytes are exactly those given
(no Message-ID or Date is added).
"""
import email.utils
import json

from . import mime
from .history import Entry
from .mailbox import decode_raw_field
from .message import Message
from .util import ApiError, bad_request

MAX_BYTES = 157286400   # gmail.v1.json mediaUpload.maxSize
NOT_IMPORTABLE = {"DRAFT", "CHAT"}


def _bool(ctx, name):
    value = ctx.param(name)
    if value is None or value == "":
        return False
    if value.lower() not in ("true", "false"):
        raise bad_request("Invalid value at '%s' (TYPE_BOOL), \"%s\"" % (name, value))
    return value.lower() == "true"


def _date_source(ctx):
    value = ctx.param("internalDateSource", "dateHeader")
    if value not in ("dateHeader", "receivedTime"):
        raise bad_request("Invalid value at 'internal_date_source' (TYPE_ENUM), \"%s\"" % value)
    return value


def _header_date_ms(raw):
    value = mime.parse_headers(raw).get("Date")
    if value:
        try:
            parsed = email.utils.parsedate_to_datetime(str(value))
            if parsed is not None:
                return int(parsed.timestamp() * 1000)
        except (TypeError, ValueError, IndexError, OverflowError):
            pass
    return None


def store_import(ctx, raw, label_ids, thread_id):
    """Validate and store one imported message; the Message answer (id, threadId, labelIds)."""
    source = _date_source(ctx)
    never_spam = _bool(ctx, "neverMarkSpam")
    _bool(ctx, "processForCalendar")
    deleted = _bool(ctx, "deleted")
    if thread_id is not None and not isinstance(thread_id, str):
        raise bad_request("Invalid threadId")
    if len(raw) > MAX_BYTES:
        raise ApiError(413, "Request payload size exceeds the limit: %d bytes." % MAX_BYTES, "uploadTooLarge")
    hdrs = mime.parse_headers(raw)
    if not raw.strip() or not hdrs.keys():
        raise bad_request("Invalid raw message")
    mb = ctx.mailbox
    labels = list(mb.check_label_ids(label_ids, user_call=False) or [])
    for lid in labels:
        if lid in NOT_IMPORTABLE:
            raise bad_request("Invalid label: %s" % lid)
    if (hdrs.get("X-Fake-Spam") or "").strip().lower() == "yes" and not never_spam:
        labels = [lid for lid in labels if lid != "INBOX"] + ([] if "SPAM" in labels else ["SPAM"])
    with mb.lock:
        now = mb.clock.now_ms()
        ms = (_header_date_ms(raw) if source == "dateHeader" else None) or now
        msg_id = mb.new_id(ms)
        m = Message(msg_id, msg_id, labels, ms, raw=raw)
        if deleted:   # Vault only: never listed, fetched or in history
            return 200, {"id": msg_id, "threadId": msg_id}
        joined = mb.thread_for_reply(m, thread_id) if thread_id else None
        if joined is None:
            candidate = mb.thread_by_references(m)
            joined = mb.thread_for_reply(m, candidate) if candidate else None
        m.thread_id = joined or msg_id
        m.history_id = mb.history.append([Entry("messageAdded", m.id, m.thread_id, m.labels)])
        mb._insert(m)
        mb.version += 1
        out = {"id": m.id, "threadId": m.thread_id}
        if m.labels:
            out["labelIds"] = list(m.labels)
        return 200, out


def _part_bytes(body, boundary, index):
    """The content of part ``index`` of a multipart body, byte for byte (RFC 2046 §5.1.1: a
    delimiter is CRLF ``--boundary`` at the start of a line; the CRLF before it belongs to it).
    Python's parser would hand back a message/rfc822 part re-serialized (headers refolded), and
    Gmail stores the bytes it was given. None when the body cannot be split so."""
    if not boundary:
        return None
    delimiter = b"--" + boundary.encode("latin-1")
    pieces = body.split(b"\r\n" + delimiter)
    if body.startswith(delimiter):
        pieces.insert(0, b"")   # no preamble: the first delimiter has no CRLF before it
    if len(pieces) < index + 2:
        return None
    part = pieces[index + 1]
    line_end = part.find(b"\r\n")
    if line_end < 0:
        return None
    part = part[line_end + 2:]                # the rest of the delimiter line
    head_end = part.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    return part[head_end + 4:]


def import_message(ctx):
    """POST messages/import: a JSON Message with ``raw``."""
    body = ctx.json_body()
    raw = decode_raw_field(body.get("raw"))
    return store_import(ctx, raw, body.get("labelIds"), body.get("threadId"))


def upload_import(ctx):
    """POST /upload/.../messages/import: ``uploadType`` media or multipart."""
    kind = ctx.param("uploadType", "media")
    ctype = ctx.headers.get("Content-Type", "")
    if kind == "media":
        if ctype and not ctype.lower().startswith("message/"):
            raise bad_request("Media type '%s' is not supported. Valid media types: [message/*]" % ctype)
        return store_import(ctx, ctx.body, None, None)
    if kind == "multipart" and ctype.lower().startswith("multipart/"):
        parsed = mime._PARSER.parsebytes(b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + ctx.body)
        parts = parsed.get_payload() if parsed.is_multipart() else []
        if len(parts) == 2:
            try:
                meta = json.loads(parts[0].get_payload(decode=True) or b"{}")
            except ValueError:
                raise bad_request("Invalid metadata part") from None
            if not isinstance(meta, dict):
                raise bad_request("Invalid metadata part")
            media = parts[1].get_payload(decode=True)
            if media is None:   # a message/rfc822 part: its bytes as sent, not re-serialized
                media = _part_bytes(ctx.body, parsed.get_boundary(), 1)
                if media is None:
                    media = parts[1].get_payload(0).as_bytes()
            return store_import(ctx, media, meta.get("labelIds"), meta.get("threadId"))
        raise bad_request("A multipart upload needs a metadata part and a media part")
    raise bad_request("Unsupported uploadType: %s" % kind)


# (HTTP method, path regex, handler, units (§3), scope class, name), as api.ROUTES
ROUTES = [("POST", r"messages/import", import_message, 25, "insert", "messages.import")]
UPLOAD_ROUTES = [("POST", r"messages/import", upload_import, 25, "insert", "messages.import")]
