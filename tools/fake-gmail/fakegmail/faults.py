"""Fault-injection rules (``POST /_admin/faults``), to test retries and backoff.

A rule matches a request by ``method`` and by ``path`` (a regex searched in
the path; batch sub-requests and /token, /auth, /revoke are matched too).
Fields: ``status`` (default 500), ``reason``, ``message``, ``retry_after``
(seconds, sent as ``Retry-After``), ``times`` (default 1; -1 = forever),
``every`` (fault only every K-th match), ``probability`` (fire a due match only with
this chance, drawn from a generator seeded by ``seed`` when given: occasional faults
for a long run), ``delay_ms`` and ``mode``:

- ``status``: answer with Google's error envelope (§4) or, for /token, the
  OAuth error shape (§7);
- ``drop``: close the connection without answering;
- ``hang``: never answer; the connection stays open until the client gives up;
- ``truncate``: the request is carried out, then headers and half the body are
  sent and the connection closed;
- ``invalid_json``: 200 with a body that is not JSON;
- ``wrong_shape``: 200 with valid JSON of the wrong shape (a list);
- ``wrong_type``: 200 with a JSON object whose members have the wrong types (for
  /token, an ``access_token`` that is a number);
- ``body``: the rule's ``body`` (any JSON value) as the answer, with status 200 or
  the rule's ``status`` when given: an answer a test writes itself (a history page
  whose ids are out of range, a list of ids of a wrong shape, ...);
- ``oversized``: 200 with a well-formed answer of about ``size`` bytes (default
  64 MiB): for /token a token answer whose ``access_token`` is that long, elsewhere
  an object with one long ``filler`` string;
- ``apply_then_drop``: the request is carried out (a message is stored, a
  modify applied), then the connection is closed without an answer;
- ``apply_then_status``: the request is carried out, then answered with the
  rule's error (a backend that commits and then times out: a 5xx or 429 does
  not prove that nothing happened);
- ``delay``: only wait ``delay_ms``, then serve normally (the default mode of
  a rule that gives ``delay_ms`` and neither ``status`` nor ``mode``).

Default reasons per status follow gmail-api.md §4 (e.g. 429 rateLimitExceeded,
500/503 backendError).
"""
import random
import re
import threading

from .util import ApiError

MODES = {"status", "drop", "hang", "truncate", "invalid_json", "wrong_shape", "wrong_type", "oversized",
         "body", "apply_then_drop", "apply_then_status", "delay"}
FIELDS = {"method", "path", "status", "reason", "message", "retry_after", "times",
          "every", "delay_ms", "mode", "size", "body", "probability", "seed"}
# Modes after which the request itself is still carried out.
APPLYING_MODES = {"truncate", "apply_then_drop", "apply_then_status", "delay"}
# OAuth error codes used when a /token request is faulted with a status.
OAUTH_ERRORS = {400: "invalid_grant", 401: "invalid_client", 429: "rate_limit_exceeded",
                503: "temporarily_unavailable"}


class Rule:
    """One fault rule plus its match/fire counters."""

    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise ValueError("a rule must be a JSON object")
        unknown = set(spec) - FIELDS
        if unknown:
            raise ValueError("unknown rule field(s): %s" % ", ".join(sorted(unknown)))
        self.spec = dict(spec)
        self.method = (spec.get("method") or "").upper() or None
        try:
            self.path = re.compile(spec["path"]) if spec.get("path") else None
        except re.error as exc:
            raise ValueError("bad path regex: %s" % exc) from None
        mode = spec.get("mode")
        if mode is None:
            mode = "delay" if spec.get("delay_ms") and "status" not in spec else "status"
        if mode not in MODES:
            raise ValueError("unknown mode: %s" % mode)
        self.mode = mode
        self.status = _int(spec.get("status", 200 if mode == "body" else 500), "status", 100, 599)
        if mode == "body" and "body" not in spec:
            raise ValueError('mode "body" needs a "body" (the JSON answer)')
        self.body = spec.get("body")
        self.reason = spec.get("reason")
        self.message = spec.get("message")
        self.retry_after = spec.get("retry_after")
        if self.retry_after is not None:
            _int(self.retry_after, "retry_after", 0, 10 ** 6)
        self.times = _int(spec.get("times", 1), "times", -1, 10 ** 9)
        self.every = _int(spec.get("every", 1) or 1, "every", 1, 10 ** 9)
        self.delay_ms = _int(spec.get("delay_ms", 0) or 0, "delay_ms", 0, 10 ** 7)
        self.size = _int(spec.get("size", 64 << 20), "size", 1, 256 << 20)
        probability = spec.get("probability", 1)
        if isinstance(probability, bool) or not isinstance(probability, (int, float)) \
                or not 0 <= probability <= 1:
            raise ValueError("probability must be a number in [0, 1]")
        self.probability = float(probability)
        seed = spec.get("seed")
        if seed is not None:
            _int(seed, "seed", 0, 2 ** 63)
        self.random = random.Random(seed)
        self.matched = 0
        self.fired = 0

    def matches(self, method, path):
        return (self.method is None or self.method == method.upper()) and \
            (self.path is None or self.path.search(path) is not None)

    def due(self):
        """Count a match; True when the fault fires for it."""
        self.matched += 1
        if self.times == 0 or self.matched % self.every != 0:
            return False
        if self.probability < 1 and self.random.random() >= self.probability:
            return False
        if self.times > 0:
            self.times -= 1
        self.fired += 1
        return True

    def api_error(self):
        return ApiError(self.status, self.message, self.reason, retry_after=self.retry_after)

    def oauth_error(self):
        error = self.reason or OAUTH_ERRORS.get(self.status, "server_error")
        return {"error": error, "error_description": self.message or "Injected fault"}

    def describe(self):
        out = dict(self.spec)
        out.update({"mode": self.mode, "remaining": self.times, "matched": self.matched,
                    "fired": self.fired})
        return out


def _int(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError("%s must be an integer in [%d, %d]" % (name, low, high))
    return value


class FaultRules:
    """The active rule list (replaced as a whole by POST /_admin/faults)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def replace(self, specs):
        if not isinstance(specs, list):
            raise ValueError('"rules" must be a list')
        rules = [Rule(s) for s in specs]
        with self.lock:
            self.rules = rules

    def clear(self):
        with self.lock:
            self.rules = []

    def pick(self, method, path):
        """The first matching rule that fires for this request, or None."""
        with self.lock:
            for rule in self.rules:
                if rule.matches(method, path) and rule.due():
                    return rule
        return None

    def describe(self):
        with self.lock:
            return [r.describe() for r in self.rules]
