"""The admin interface: JSON under ``/_admin/``, no authentication.

Used by tests and demos to look at the mailbox, change it "from another
device" (recorded in history like any change), inject faults, read the
request log and quota, and tune the server at run time.  One function per
endpoint; ``ADMIN_ROUTES`` maps (method, path) to them.
"""
import base64
import binascii
import json
import re
import threading

from . import filters
from .plumbing import error_response, json_response
from .util import ApiError, bad_request, json_bytes


def _body(req):
    if not req.body.strip():
        return {}
    try:
        data = json.loads(req.body)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("request body is not JSON") from None
    if not isinstance(data, dict):
        raise bad_request("request body must be a JSON object")
    return data


def _labels(app, names):
    """Label ids for a list of ids or names; 400 on an unknown one."""
    if names is None:
        return []
    if not isinstance(names, list):
        raise bad_request("labels must be a list")
    out = []
    for name in names:
        lid = app.mailbox.labels.resolve(str(name))
        if lid is None:
            raise bad_request("Invalid label: %s" % name)
        out.append(lid)
    return out


def state(app, req):
    """GET /_admin/state: history id, every message (newest first), labels."""
    mb = app.mailbox
    with mb.lock:
        messages = [{"id": m.id, "threadId": m.thread_id, "labelIds": list(m.labels),
                     "historyId": str(m.history_id), "internalDate": str(m.internal_date),
                     "messageId": m.message_id}
                    for m in (mb.messages[i] for _, i in reversed(mb.index))]
        return 200, {"historyId": str(mb.history.current), "messages": messages,
                     "labels": [dict(e) for e in mb.labels.all()],
                     "historyMinId": str(mb.history.min_valid),
                     "historyRecords": len(mb.history)}


def message(app, req, msg_id):
    """GET /_admin/message/{id}: format=full plus raw (padded base64url)."""
    mb = app.mailbox
    with mb.lock:
        m = mb.get(msg_id)
        out = m.as_dict("full")
        out["raw"] = m.as_dict("raw")["raw"]
        out["messageId"] = m.message_id
        return 200, out


def modify(app, req):
    """POST /_admin/modify {"id", "add", "remove"}: a change from another device."""
    body = _body(req)
    mb = app.mailbox
    add, remove = _labels(app, body.get("add")), _labels(app, body.get("remove"))
    with mb.lock:
        m = mb.modify(str(body.get("id")), add, remove)
        return 200, m.minimal()


def insert(app, req):
    """POST /_admin/insert {"raw" | "raw_b64", "labelIds"?, "threadId"?, "internalDate"?}.

    ``raw`` is RFC 822 text (stored as UTF-8); ``raw_b64`` is the message's bytes in
    base64 (standard or URL-safe), stored exactly as given, for messages that are not
    UTF-8 (bare 8-bit bytes, invalid sequences) or that are too large to send as text.
    """
    body = _body(req)
    raw, raw_b64 = body.get("raw"), body.get("raw_b64")
    if raw_b64 is not None:
        if raw is not None:
            raise bad_request('give "raw" or "raw_b64", not both')
        if not isinstance(raw_b64, str):
            raise bad_request('"raw_b64" must be a base64 string')
        try:
            text = raw_b64.strip().replace("-", "+").replace("_", "/")
            data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request('"raw_b64" is not valid base64') from None
        if not data.strip():
            raise bad_request('"raw_b64" holds an empty message')
    else:
        if not isinstance(raw, str) or not raw.strip():
            raise bad_request('"raw" (RFC 822 text) or "raw_b64" is required')
        data = raw.encode("utf-8")
        if b"\r\n" not in data:
            data = data.replace(b"\n", b"\r\n")
    labels = _labels(app, body.get("labelIds", ["INBOX", "UNREAD"]))
    date = body.get("internalDate")
    m = app.mailbox.add_raw(data, labels, body.get("threadId"),
                            int(date) if date is not None else None, mode="insert")
    return 200, {"id": m.id, "threadId": m.thread_id, "historyId": str(m.history_id)}


def _raw_bytes(body):
    """The message of an admin body: "raw" (RFC 822 text) or "raw_b64" (exact bytes)."""
    raw, raw_b64 = body.get("raw"), body.get("raw_b64")
    if raw_b64 is not None:
        if not isinstance(raw_b64, str):
            raise bad_request('"raw_b64" must be a base64 string')
        try:
            text = raw_b64.strip().replace("-", "+").replace("_", "/")
            return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request('"raw_b64" is not valid base64') from None
    if not isinstance(raw, str) or not raw.strip():
        raise bad_request('"raw" (RFC 822 text) or "raw_b64" is required')
    data = raw.encode("utf-8")
    return data if b"\r\n" in data else data.replace(b"\n", b"\r\n")


def drafts(app, req):
    """GET /_admin/drafts: every draft, newest first: {id, messageId (Gmail id), threadId,
    rfc822MessageId, raw (padded base64url)}."""
    from .util import b64url_pad
    mb = app.mailbox
    with mb.lock:
        return 200, {"drafts": [{"id": d, "messageId": m.id, "threadId": m.thread_id,
                                 "rfc822MessageId": m.message_id, "raw": b64url_pad(m.raw())}
                                for d, m in mb.drafts.listing()]}


def edit_draft(app, req):
    """POST /_admin/draft {"id", "raw" | "raw_b64"}: the draft edited on another device
    (a phone): its content replaced as drafts.update would, recorded in history.
    Without "id", a new draft is created there: {"raw"} -> {id, messageId}."""
    body = _body(req)
    data = _raw_bytes(body)
    mb = app.mailbox
    if body.get("id") is None:
        draft_id, m = mb.drafts.create(data, body.get("threadId"))
    else:
        draft_id = str(body.get("id"))
        m = mb.drafts.replace(draft_id, data)
    return 200, {"id": draft_id, "messageId": m.id, "threadId": m.thread_id}


def tokens(app, req):
    """GET /_admin/tokens: every refresh and access token issued so far."""
    return 200, {"tokens": app.oauth.issued_tokens()}


def delete(app, req):
    """POST /_admin/delete {"id"}: permanent delete (messagesDeleted history)."""
    m = app.mailbox.delete(str(_body(req).get("id")))
    return 200, {"id": m.id, "historyId": str(app.mailbox.history.current)}


def delete_label(app, req):
    """POST /_admin/delete-label {"id"}: a label deleted on another device (labels.delete:
    removed from every message, labelRemoved history); later calls naming it get 400."""
    label_id = str(_body(req).get("id"))
    app.mailbox.delete_label(label_id)
    return 200, {"id": label_id, "historyId": str(app.mailbox.history.current)}


def create_label(app, req):
    """POST /_admin/create-label {"name", "color"?}: a label created on another device
    (labels.create: 409 on a name that exists). No history: Gmail records none for labels."""
    mb = app.mailbox
    with mb.lock:
        entry = mb.labels.create(_body(req))
        mb.version += 1
        return 200, dict(entry)


def rename_label(app, req):
    """POST /_admin/rename-label {"id", "name"}: a label renamed on another device
    (labels.patch: every message keeps it). No history."""
    body = _body(req)
    mb = app.mailbox
    with mb.lock:
        entry = mb.labels.update(str(body.get("id")), {"name": body.get("name")})
        mb.version += 1
        return 200, dict(entry)


def expire_history(app, req):
    """POST /_admin/expire-history {"before"?}: older start ids then give 404."""
    before = _body(req).get("before")
    mb = app.mailbox
    with mb.lock:
        try:
            mb.history.expire(int(before) if before is not None else None)
        except (TypeError, ValueError):
            raise bad_request('"before" must be a history id') from None
        return 200, {"historyMinId": str(mb.history.min_valid),
                     "historyId": str(mb.history.current)}


def set_faults(app, req):
    """POST /_admin/faults {"rules": [...]}: replace the fault rules."""
    try:
        app.faults.replace(_body(req).get("rules", []))
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return 200, {"rules": app.faults.describe()}


def get_faults(app, req):
    return 200, {"rules": app.faults.describe()}


def clear_faults(app, req):
    app.faults.clear()
    return 200, {"rules": []}


def get_requests(app, req):
    """GET /_admin/requests: every API call, batch sub-request, /token, /auth."""
    return 200, app.requests()


def clear_requests(app, req):
    app.clear_requests()
    return 200, {}


def quota(app, req):
    """GET /_admin/quota: units spent in the current rolling minute, and the totals since
    the server started (units charged, requests and batch sub-requests, by status and by
    method), which no clearing of the request log resets."""
    return 200, {"units": app.quota.used(), "limit": app.quota.limit, "windowSeconds": 60,
                 "total": app.total_counts()}


def settings(app, req):
    """POST /_admin/set: latency_ms, latency_ms_max, quota_per_minute, access_token_ttl,
    consent, narrow_scope, shuffle_batch (any subset); returns the current settings."""
    body = _body(req)
    oauth = app.oauth
    for key in ("latency_ms", "latency_ms_max", "quota_per_minute", "access_token_ttl"):
        if key in body and (not isinstance(body[key], int) or body[key] < 0):
            raise bad_request("%s must be a non-negative integer" % key)
    if "consent" in body and body["consent"] not in ("allow", "deny"):
        raise bad_request('consent must be "allow" or "deny"')
    if "latency_ms" in body:
        app.latency_ms = body["latency_ms"]
    if "latency_ms_max" in body:
        app.latency_ms_max = body["latency_ms_max"]
    if "quota_per_minute" in body:
        app.quota.limit = body["quota_per_minute"]
    if "access_token_ttl" in body:
        oauth.ttl = body["access_token_ttl"]
    if "consent" in body:
        oauth.consent = body["consent"]
    if "narrow_scope" in body:
        oauth.narrow_scope = bool(body["narrow_scope"])
    if "shuffle_batch" in body:
        app.shuffle_batch = bool(body["shuffle_batch"])
    out = {"latency_ms": app.latency_ms, "latency_ms_max": app.latency_ms_max, "quota_per_minute": app.quota.limit,
           "shuffle_batch": app.shuffle_batch}
    out.update(oauth.settings())
    return 200, out


def revoke(app, req):
    """POST /_admin/revoke {"refresh_token"}: later refreshes get invalid_grant."""
    token = _body(req).get("refresh_token")
    status, obj = app.oauth.revoke(str(token))
    if status != 200:
        raise ApiError(404, "Unknown refresh token", "notFound")
    return 200, {"revoked": True}


def set_scope(app, req):
    """POST /_admin/scope {"refresh_token", "scope": "a b" or [...]}: what the refresh
    token grants from now on; refreshes answer with this scope."""
    body = _body(req)
    scope = body.get("scope")
    if isinstance(scope, str):
        scope = scope.split()
    if not isinstance(scope, list) or not all(isinstance(s, str) for s in scope):
        raise bad_request('"scope" must be a string or a list of strings')
    if not app.oauth.set_scope(str(body.get("refresh_token")), scope):
        raise ApiError(404, "Unknown refresh token", "notFound")
    return 200, {"scope": " ".join(scope)}


def expire_access_tokens(app, req):
    """POST /_admin/expire-access-tokens: every access token now gets 401."""
    app.oauth.expire_access_tokens()
    return 200, {}


def shutdown(app, req):
    """POST /_admin/shutdown: answer, then stop the server."""
    if app.shutdown_hook is not None:
        threading.Timer(0.05, app.shutdown_hook).start()
    return 200, {"stopping": True}


ADMIN_ROUTES = [
    ("GET", r"state", state), ("GET", r"message/([^/]+)", message),
    ("POST", r"modify", modify), ("POST", r"insert", insert), ("POST", r"delete", delete),
    ("POST", r"delete-label", delete_label),
    ("POST", r"create-label", create_label), ("POST", r"rename-label", rename_label),
    ("GET", r"drafts", drafts), ("POST", r"draft", edit_draft),
    ("POST", r"expire-history", expire_history),
    ("GET", r"faults", get_faults), ("POST", r"faults", set_faults),
    ("DELETE", r"faults", clear_faults),
    ("GET", r"requests", get_requests), ("DELETE", r"requests", clear_requests),
    ("GET", r"quota", quota), ("POST", r"set", settings), ("POST", r"revoke", revoke),
    ("POST", r"scope", set_scope),
    ("POST", r"expire-access-tokens", expire_access_tokens), ("GET", r"tokens", tokens),
    ("POST", r"shutdown", shutdown),
]
ADMIN_ROUTES += filters.ADMIN_ROUTES  # GET/POST /_admin/filters (filters.py)
_COMPILED = [(m, re.compile("^/_admin/%s/?$" % p), f) for m, p, f in ADMIN_ROUTES]


def handle_admin(app, req):
    for method, rx, func in _COMPILED:
        match = rx.match(req.path)
        if match and method == req.method:
            try:
                status, obj = func(app, req, *match.groups())
            except ApiError as err:
                return error_response(err)
            return json_response(status, json_bytes(obj))
    return error_response(ApiError(404, "No such admin endpoint: %s %s" % (
        req.method, req.path), "notFound"))
