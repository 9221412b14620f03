"""Small shared helpers: base64url, JSON, Google error envelopes, ids, clock.

References ("gmail-api.md §N") are to the developers' notes on Google's Gmail API
documentation, which are not part of this repository.
"""
import base64
import binascii
import hashlib
import json
import re
import time

# ---------------------------------------------------------------- base64 (§8)


def b64url_nopad(data):
    """base64url without padding: the form of ``MessagePartBody.data`` (§8)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_pad(data):
    """base64url with padding: the form of ``Message.raw`` (§8)."""
    return base64.urlsafe_b64encode(data).decode("ascii")


_B64_JUNK = re.compile(r"\s+")


def b64_lenient(text):
    """Decode base64 or base64url, padded or not (§8 "Decode leniently").

    Raises ValueError when the text is not base64 at all.
    """
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    s = _B64_JUNK.sub("", text).replace("-", "+").replace("_", "/").rstrip("=")
    if len(s) % 4 == 1:
        raise ValueError("impossible base64 length")
    s += "=" * (-len(s) % 4)
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(str(exc)) from None


# ---------------------------------------------------------------- JSON (§1)


def json_bytes(obj):
    """Compact UTF-8 JSON (the server ignores ``prettyPrint``; see README)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def prune(obj):
    """Drop None, [] and {} values: Google leaves empty fields out (§1)."""
    return {k: v for k, v in obj.items() if v is not None and v != [] and v != {}}


# ---------------------------------------------------------------- errors (§4)

STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
    404: "NOT_FOUND", 409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
    413: "OUT_OF_RANGE", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
    501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
DEFAULT_REASONS = {
    400: "badRequest", 401: "authError", 403: "forbidden", 404: "notFound",
    409: "alreadyExists", 429: "rateLimitExceeded", 500: "backendError",
    502: "backendError", 503: "backendError", 504: "backendError",
}
# Messages Google uses for well-known reasons (§4 table).
REASON_MESSAGES = {
    "authError": "Request had invalid authentication credentials.",
    "insufficientPermissions": "Request had insufficient authentication scopes.",
    "notFound": "Requested entity was not found.",
    "rateLimitExceeded": "Too many concurrent requests for user.",
    "userRateLimitExceeded": "User-rate limit exceeded.",
    "dailyLimitExceeded": "Daily Limit Exceeded",
    "domainPolicy": "The domain administrators have disabled Gmail apps.",
    "backendError": "Backend Error",
    "failedPrecondition": "Precondition check failed.",
    "alreadyExists": "Label name exists or conflicts",
    "badRequest": "Bad Request",
    "invalidArgument": "Invalid argument",
    "forbidden": "Forbidden",
}
REASON_DETAILS = {
    "authError": "Invalid Credentials",
    "insufficientPermissions": "Insufficient Permission",
}
USAGE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded",
                       "dailyLimitExceeded", "quotaExceeded"}
HTTP_PHRASES = {
    200: "OK", 204: "No Content", 302: "Found", 400: "Bad Request",
    401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large",
    429: "Too Many Requests", 500: "Internal Server Error",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}


class ApiError(Exception):
    """An error answered with Google's JSON error envelope (§4)."""

    def __init__(self, code, message=None, reason=None, domain=None,
                 status=None, location=None, location_type=None,
                 retry_after=None, detail=None):
        self.code = int(code)
        self.reason = reason or DEFAULT_REASONS.get(self.code, "backendError")
        self.message = message or REASON_MESSAGES.get(self.reason) or \
            HTTP_PHRASES.get(self.code, "Error")
        self.domain = domain or ("usageLimits" if self.reason in USAGE_LIMIT_REASONS
                                 else "global")
        self.status = status or STATUS_NAMES.get(self.code, "UNKNOWN")
        self.location = location
        self.location_type = location_type
        self.retry_after = retry_after
        # errors[0].message; Google sometimes words it differently (§4, 401).
        self.detail = detail or REASON_DETAILS.get(self.reason) or self.message
        super().__init__(self.message)

    def envelope(self):
        err = {"message": self.detail, "domain": self.domain, "reason": self.reason}
        if self.location:
            err["location"] = self.location
            err["locationType"] = self.location_type or "parameter"
        return {"error": {"code": self.code, "message": self.message,
                          "errors": [err], "status": self.status}}


def bad_request(message, reason="invalidArgument"):
    """400 INVALID_ARGUMENT (§4 first row)."""
    return ApiError(400, message, reason)


def not_found():
    """404 notFound: "Requested entity was not found." (§4)."""
    return ApiError(404, reason="notFound")


def auth_error():
    """401 authError with location Authorization/header (§4, brief)."""
    return ApiError(401, "Request had invalid authentication credentials.",
                    "authError", location="Authorization", location_type="header")


# ---------------------------------------------------------------- ids and time


def gmail_id(ms, salt, taken=None):
    """A 16-hex-digit id that grows with time like Gmail's (§1 "IDs").

    ``ms`` is the message's internalDate in milliseconds; ``salt`` makes ids
    unique and deterministic.  When ``taken`` (a container) already holds the
    id, the next free one is used.
    """
    low = int(hashlib.sha1(str(salt).encode("utf-8")).hexdigest()[:5], 16)
    value = ((max(int(ms), 0) << 20) | low) & 0xFFFFFFFFFFFFFFFF
    ident = "%016x" % value
    while taken is not None and ident in taken:
        value = (value + 1) & 0xFFFFFFFFFFFFFFFF
        ident = "%016x" % value
    return ident


class Clock:
    """Wall clock that can be pinned: ``now`` = pinned start + elapsed time."""

    def __init__(self, now=None):
        self.pinned = now is not None
        self.start_wall = float(now) if now is not None else time.time()
        self.start_mono = time.monotonic()

    def __getstate__(self):
        """For ``--state``: a monotonic reading means nothing to another process; a clock
        that followed the wall clock follows it again, a pinned one goes on from where it
        stopped."""
        return {"pinned": self.pinned, "now": self.now()}

    def __setstate__(self, state):
        self.pinned = state["pinned"]
        self.start_wall = state["now"] if self.pinned else time.time()
        self.start_mono = time.monotonic()

    def now(self):
        """Current (possibly pinned) epoch time in seconds."""
        return self.start_wall + (time.monotonic() - self.start_mono)

    def now_ms(self):
        return int(self.now() * 1000)
