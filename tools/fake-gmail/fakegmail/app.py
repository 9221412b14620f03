"""Request dispatch: OAuth endpoints, the Gmail API, batch, admin; plus auth,
scopes, per-user quota, fault injection and the request log.

Order for a Gmail API call: fault rules -> bearer token (401 authError, §4)
-> route (404) -> userId -> scope (403 insufficientPermissions) -> quota
(429 rateLimitExceeded + Retry-After, §3, §4) -> handler.  Batch sub-requests
go through the same ``dispatch``.
"""
import collections
import json
import math
import random
import re
import sys
import threading
import time
import traceback
import urllib.parse

from . import admin, api, batch
from .faults import FaultRules
from .plumbing import JSON_TYPE, Request, Response, error_response, json_response  # noqa: F401 (re-exported)
from .util import ApiError, auth_error, json_bytes, not_found
_API_PATH = re.compile(r"^/(upload/)?gmail/v1/users/([^/]+)/(.+)$")
AUTH_PATHS = ("/auth", "/o/oauth2/auth", "/o/oauth2/v2/auth")
TOKEN_PATHS = ("/token", "/o/oauth2/token", "/oauth2/v4/token")
REVOKE_PATHS = ("/revoke", "/o/oauth2/revoke")
BATCH_PATHS = ("/batch/gmail/v1", "/batch")
MAX_LOG = 100000


class Quota:
    """Per-user units in a rolling 60-second window (§3); 0 = unlimited.

    The window's total is kept as entries come and go, so charging is O(1): summing the
    window on every call made a fast client's sync quadratic (a 100,000-message
    catch-up sends that many sub-requests within a few minutes).
    """

    def __init__(self, limit=0):
        self.limit = int(limit)
        self.lock = threading.Lock()
        self.window = collections.deque()
        self.total = 0

    def _trim(self, now):
        while self.window and self.window[0][0] <= now - 60:
            self.total -= self.window.popleft()[1]

    def used(self):
        with self.lock:
            self._trim(time.monotonic())
            return self.total

    def charge(self, units):
        """Record ``units``; returns None, or the seconds to wait when over the limit."""
        with self.lock:
            now = time.monotonic()
            self._trim(now)
            used = self.total
            if self.limit and used + units > self.limit:
                need, wait = used + units - self.limit, 1
                for stamp, u in self.window:
                    need -= u
                    if need <= 0:
                        wait = max(1, math.ceil(stamp + 60 - now))
                        break
                return wait
            self.window.append((now, units))
            self.total += units
            return None

    def reset(self):
        with self.lock:
            self.window.clear()
            self.total = 0


class App:
    """Everything one server instance serves."""

    def __init__(self, mailbox, oauth, latency_ms=0, quota_per_minute=0,
                 shuffle_batch=False, verbose=False, latency_ms_max=0):
        self.mailbox = mailbox
        self.oauth = oauth
        self.faults = FaultRules()
        self.quota = Quota(quota_per_minute)
        self.latency_ms = int(latency_ms)
        # With a maximum above latency_ms, each request waits a time drawn uniformly
        # from [latency_ms, latency_ms_max] (a real server's answers vary).
        self.latency_ms_max = int(latency_ms_max)
        self.latency_random = random.Random()
        # Running totals since start, never cleared (the request log keeps only the last
        # MAX_LOG entries, and clearing it races with a reader): a long run's quota use.
        self.totals = {"units": 0, "requests": 0, "status": {}, "api": {}}
        self.shuffle_batch = shuffle_batch
        self.verbose = verbose
        self.log = collections.deque(maxlen=MAX_LOG)
        self.log_lock = threading.Lock()
        self.stopping = threading.Event()
        self.shutdown_hook = None

    # ------------------------------------------------------------ entry points

    def handle(self, req):
        """A top-level HTTP request."""
        if req.path.startswith("/_admin/") or req.path == "/_admin":
            return admin.handle_admin(self, req)
        delay = self.latency()
        if delay:
            time.sleep(delay)
        return self.dispatch(req)

    def latency(self):
        """The seconds the next request waits before it is served."""
        low, high = self.latency_ms, self.latency_ms_max
        if high > low:
            with self.log_lock:
                return self.latency_random.uniform(low, high) / 1000.0
        return low / 1000.0

    def dispatch(self, req):
        """Faults, routing and logging of one request or batch sub-request."""
        started = time.time()
        rule = self.faults.pick(req.method, req.path)
        if rule is not None and rule.delay_ms:
            time.sleep(rule.delay_ms / 1000.0)
        mode = rule.mode if rule is not None else None
        units, name = 0, None
        if mode in ("drop", "hang"):
            resp = Response(0, action=mode)
        elif mode == "status":
            if req.path in TOKEN_PATHS:
                extra = [("Retry-After", str(rule.retry_after))] if rule.retry_after else []
                resp = json_response(rule.status, rule.oauth_error(), extra)
            else:
                resp = error_response(rule.api_error())
        elif mode == "invalid_json":
            resp = json_response(200, b'{"id": "18c9a4f0e2b1d3c7", "threadId": [unterminated')
        elif mode == "wrong_shape":
            resp = json_response(200, [{"unexpected": "shape"}, 42])
        elif mode == "wrong_type":
            if req.path in TOKEN_PATHS:
                resp = json_response(200, {"access_token": 1234567, "expires_in": "soon",
                                           "scope": ["gmail.modify"], "token_type": "Bearer"})
            else:
                resp = json_response(200, {"id": 42, "threadId": False, "labelIds": "INBOX"})
        elif mode == "body":
            # Encoded here, so that a body of null or [] is sent as such.
            resp = json_response(rule.status, json_bytes(rule.body))
        elif mode == "oversized":
            filler = b"y" * rule.size
            if req.path in TOKEN_PATHS:
                body = b'{"access_token": "ya29.' + filler + b'", "expires_in": 3599, ' \
                    b'"scope": "https://www.googleapis.com/auth/gmail.modify", "token_type": "Bearer"}'
            else:
                body = b'{"filler": "' + filler + b'"}'
            resp = json_response(200, body)
        else:
            resp, units, name = self._route(req)
            if mode == "apply_then_status":
                resp = error_response(rule.api_error())
            elif mode == "apply_then_drop":
                resp.action = "drop"
            elif mode == "truncate":
                resp.action = "truncate"
        self._log(req, resp.status, units, name, mode, started)
        return resp

    # ------------------------------------------------------------ routing

    def _route(self, req):
        path = req.path
        try:
            if path in AUTH_PATHS and req.method == "GET":
                status, headers, body = self.oauth.authorize(urllib.parse.parse_qs(req.query))
                return Response(status, list(headers.items()), body), 0, "oauth.auth"
            if path in TOKEN_PATHS and req.method == "POST":
                status, obj = self.oauth.token(self._form(req), req.headers.get("Authorization"))
                resp = json_response(status, obj, [("Cache-Control", "no-store")])
                return resp, 0, "oauth.token"
            if path in REVOKE_PATHS and req.method in ("POST", "GET"):
                form = self._form(req) if req.method == "POST" else {}
                token = (urllib.parse.parse_qs(req.query).get("token") or
                         form.get("token") or [""])[0]
                status, obj = self.oauth.revoke(token)
                return json_response(status, obj), 0, "oauth.revoke"
            if path in BATCH_PATHS and req.method == "POST":
                return batch.handle_batch(self, req), 0, "batch"
            match = _API_PATH.match(path)
            if match:
                return self._api(req, match)
            raise not_found()
        except ApiError as err:
            return error_response(err), 0, None
        except Exception:  # a bug in the fake: answer like Google's backendError
            traceback.print_exc(file=sys.stderr)
            return error_response(ApiError(500, reason="backendError")), 0, None

    @staticmethod
    def _form(req):
        ctype = (req.headers.get("Content-Type") or "").lower()
        if "json" in ctype:
            try:
                data = json.loads(req.body or b"{}")
                return {k: [str(v)] for k, v in data.items()} if isinstance(data, dict) else {}
            except ValueError:
                return {}
        return urllib.parse.parse_qs(req.body.decode("utf-8", "replace"))

    def _api(self, req, match):
        upload, user, rest = bool(match.group(1)), urllib.parse.unquote(match.group(2)), \
            match.group(3)
        auth = req.headers.get("Authorization") or ""
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        scopes = self.oauth.check(token)
        if scopes is None:
            raise auth_error()
        handler, units, scope_kind, name, args = api.find_route(req.method, rest, upload)
        if user != "me" and user.lower() != self.mailbox.account.lower():
            raise ApiError(403, "Delegation denied for %s" % user, "forbidden")
        ctx = api.Ctx(self.mailbox, urllib.parse.parse_qs(req.query, keep_blank_values=True),
                      req.body, req.headers, scopes)
        ctx.require(scope_kind)
        wait = self.quota.charge(units)
        if wait is not None:
            raise ApiError(429, "Quota exceeded for quota metric 'Queries' and limit 'Queries "
                           "per minute per user' of service 'gmail.googleapis.com' for "
                           "consumer 'project_number:000000000000'.", "rateLimitExceeded",
                           retry_after=wait)
        try:
            status, obj = handler(ctx, *args)
        except ApiError as err:
            return error_response(err), units, name
        return json_response(status, obj), units, name

    # ------------------------------------------------------------ log

    def _log(self, req, status, units, name, fault, started):
        entry = {"method": req.method, "path": req.path, "query": req.query, "status": status,
                 "units": units, "batch": req.batch, "time": round(started, 3)}
        if name:
            entry["api"] = name
        if fault:
            entry["fault"] = fault
        with self.log_lock:
            self.log.append(entry)
            totals = self.totals
            totals["units"] += units
            totals["requests"] += 1
            key = str(status)
            totals["status"][key] = totals["status"].get(key, 0) + 1
            if name:
                totals["api"][name] = totals["api"].get(name, 0) + 1
        if self.verbose:
            print("%s %s%s%s -> %s (%d units)%s%s" % (
                req.method, req.path, "?" if req.query else "", req.query, status or "-",
                units, " [batch]" if req.batch else "", " [fault %s]" % fault if fault else ""),
                file=sys.stderr, flush=True)

    def total_counts(self):
        with self.log_lock:
            return {"units": self.totals["units"], "requests": self.totals["requests"],
                    "status": dict(self.totals["status"]), "api": dict(self.totals["api"])}

    def requests(self):
        with self.log_lock:
            return list(self.log)

    def clear_requests(self):
        with self.log_lock:
            self.log.clear()
