"""HTTP plumbing shared by the dispatcher, batch and admin: a request, a response, and
Google's JSON error envelope (gmail-api.md §4). Below them all, so the modules that build
responses import it and it imports none of them."""
from .util import json_bytes

JSON_TYPE = "application/json; charset=UTF-8"


class Request:
    __slots__ = ("method", "path", "query", "headers", "body", "batch")

    def __init__(self, method, path, query, headers, body, batch=False):
        self.method = method.upper()
        self.path = path
        self.query = query or ""
        self.headers = headers
        self.body = body or b""
        self.batch = batch


class Response:
    """status, header list, body bytes; ``action`` is None, drop, hang or truncate."""

    __slots__ = ("status", "headers", "body", "action")

    def __init__(self, status, headers=None, body=b"", action=None):
        self.status = status
        self.headers = list(headers or [])
        self.body = body
        self.action = action


def json_response(status, obj, extra=()):
    if obj is None:
        return Response(status, list(extra), b"")
    body = obj if isinstance(obj, bytes) else json_bytes(obj)
    return Response(status, [("Content-Type", JSON_TYPE), ("Vary", "Origin, X-Origin, Referer")]
                    + list(extra), body)


def error_response(err):
    """Google's JSON error envelope (§4), with Retry-After when set."""
    extra = [("Retry-After", str(err.retry_after))] if err.retry_after is not None else []
    if err.code == 401:
        extra.append(("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"'))
    return json_response(err.code, err.envelope(), extra)
