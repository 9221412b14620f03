"""The batch endpoint: ``POST /batch/gmail/v1`` (gmail-api.md §1 "Batch endpoint", §3).

The request body is ``multipart/mixed``; each part is ``Content-Type:
application/http`` (optional ``Content-ID: <x>``) wrapping one HTTP request
with a path-only URL.  Each call is dispatched like a normal request (own
quota charge, own log entry, own faults) with the outer bearer token, and
answered as one ``application/http`` part with ``Content-ID:
<response-x>``.  At most 100 calls per batch (§3).  A sub-request faulted
with ``drop``, ``hang`` or ``apply_then_drop`` stops the batch and the whole
connection is dropped / hung; ``truncate`` truncates the whole batch answer.
"""
import email.message
import random
import secrets
import urllib.parse

from .plumbing import Request, Response, error_response
from .util import HTTP_PHRASES, bad_request

MAX_CALLS = 100
CRLF = b"\r\n"


class Headers(dict):
    """A case-insensitive header mapping (keys stored lower-case)."""

    def __init__(self, items=()):
        super().__init__()
        for k, v in items:
            self[k.lower()] = v

    def get(self, name, default=None):
        return super().get(name.lower(), default)

    def set(self, name, value):
        self[name.lower()] = value


class SubRequest:
    __slots__ = ("content_id", "method", "path", "query", "headers", "body")


def _split_head(blob):
    """(header lines, body) of a MIME part or an HTTP message."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        pos = blob.find(sep)
        if pos >= 0:
            return blob[:pos].splitlines(), blob[pos + len(sep):]
    return blob.splitlines(), b""


def _header_pairs(lines):
    pairs = []
    for line in lines:
        text = line.decode("utf-8", "replace")
        if text[:1] in (" ", "\t") and pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + " " + text.strip())
        elif ":" in text:
            name, _, value = text.partition(":")
            pairs.append((name.strip(), value.strip()))
    return pairs


def parse_batch(body, content_type):
    """Parse a batch body into SubRequests; ValueError when malformed."""
    msg = email.message.Message()
    msg["Content-Type"] = content_type or ""
    if msg.get_content_type() != "multipart/mixed" or not msg.get_param("boundary"):
        raise ValueError("Content-Type must be multipart/mixed with a boundary")
    delimiter = b"--" + msg.get_param("boundary").encode("latin-1")
    chunks = body.split(delimiter)
    if len(chunks) < 2:
        raise ValueError("no parts in the batch body")
    out = []
    for chunk in chunks[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk[2:] if chunk.startswith(CRLF) else chunk.lstrip(b"\n")
        if chunk.endswith(CRLF):
            chunk = chunk[:-2]
        elif chunk.endswith(b"\n"):
            chunk = chunk[:-1]
        part_lines, inner = _split_head(chunk)
        part_headers = Headers(_header_pairs(part_lines))
        head_lines, sub_body = _split_head(inner.lstrip(b"\r\n"))
        if not head_lines:
            raise ValueError("a batch part holds no HTTP request")
        words = head_lines[0].decode("latin-1").split()
        if len(words) < 2:
            raise ValueError("bad request line in a batch part")
        sub = SubRequest()
        cid = (part_headers.get("Content-ID") or "").strip()
        sub.content_id = cid[1:-1] if cid.startswith("<") and cid.endswith(">") else cid
        sub.method = words[0].upper()
        target = urllib.parse.urlsplit(words[1])
        sub.path, sub.query = target.path, target.query
        sub.headers = Headers(_header_pairs(head_lines[1:]))
        sub.body = sub_body
        out.append(sub)
    return out


def render_part(content_id, resp):
    head = [b"Content-Type: application/http"]
    if content_id:
        head.append(b"Content-ID: <response-%s>" % content_id.encode("utf-8"))
    lines = [b"HTTP/1.1 %d %s" % (resp.status, HTTP_PHRASES.get(resp.status, "OK").encode())]
    for name, value in resp.headers:
        if name.lower() != "content-length":
            lines.append(("%s: %s" % (name, value)).encode("utf-8"))
    lines.append(b"Content-Length: %d" % len(resp.body))
    return CRLF.join(head) + CRLF + CRLF + CRLF.join(lines) + CRLF + CRLF + resp.body


def handle_batch(app, req):
    """Run every call of a batch through ``app.dispatch``; return one Response."""
    if req.batch:
        return error_response(bad_request("Nested batch requests are not allowed"))
    try:
        subs = parse_batch(req.body, req.headers.get("Content-Type"))
    except ValueError as exc:
        return error_response(bad_request("Invalid batch request: %s" % exc))
    if len(subs) > MAX_CALLS:
        return error_response(bad_request(
            "Too many requests in batch: %d (at most %d)" % (len(subs), MAX_CALLS)))
    outer_auth = req.headers.get("Authorization")
    results, action = [], None
    for sub in subs:
        headers = Headers(sub.headers.items())
        if outer_auth:
            headers.set("Authorization", outer_auth)
        resp = app.dispatch(Request(sub.method, sub.path, sub.query, headers, sub.body,
                                    batch=True))
        if resp.action in ("drop", "hang"):
            return Response(0, [], b"", action=resp.action)
        if resp.action == "truncate":
            action = "truncate"
        results.append((sub.content_id, resp))
    if app.shuffle_batch:
        random.shuffle(results)
    boundary = "batch_" + secrets.token_urlsafe(18).replace("-", "x").replace("_", "y")
    bnd = boundary.encode("ascii")
    body = b"".join(b"--" + bnd + CRLF + render_part(cid, r) + CRLF for cid, r in results)
    body += b"--" + bnd + b"--" + CRLF
    return Response(200, [("Content-Type", "multipart/mixed; boundary=%s" % boundary)], body,
                    action=action)
