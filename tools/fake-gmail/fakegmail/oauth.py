"""OAuth 2.0 for installed apps: /auth, /token, /revoke (gmail-api.md §7).

Authorization code flow with PKCE (S256 only) and a loopback redirect
(http://127.0.0.1:PORT[/path], http://localhost:PORT, http://[::1]:PORT).
Consent is automatic; the admin API can make it deny (``access_denied``) or
grant a narrower scope than requested.  Token errors use the OAuth shape
``{"error", "error_description"}`` (§7 "Token endpoint errors").
"""
import base64
import hashlib
import html
import re
import secrets
import threading
import time
import urllib.parse

AUTH = "https://www.googleapis.com/auth/"
FULL = "https://mail.google.com/"
MODIFY, READONLY = AUTH + "gmail.modify", AUTH + "gmail.readonly"
METADATA = AUTH + "gmail.metadata"
SEND, COMPOSE, LABELS = AUTH + "gmail.send", AUTH + "gmail.compose", AUTH + "gmail.labels"
# Which scopes allow which kind of call (§7 scope table).
_READ = {FULL, MODIFY, READONLY, METADATA}
SCOPE_RULES = {
    "profile": _READ | {SEND, COMPOSE, LABELS, AUTH + "gmail.insert"},
    "read": _READ,
    "read_full": {FULL, MODIFY, READONLY},
    "modify": {FULL, MODIFY},
    "send": {FULL, MODIFY, SEND, COMPOSE},
    "labels_read": _READ | {LABELS},
    "labels_write": {FULL, MODIFY, LABELS},
    "delete": {FULL},
    "drafts_read": _READ | {COMPOSE},
    "compose": {FULL, MODIFY, COMPOSE},
    "insert": {FULL, MODIFY, AUTH + "gmail.insert"},   # messages.import and insert
}
CODE_TTL = 600            # authorization codes live 10 minutes
_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


def scope_allows(scopes, kind):
    return bool(set(scopes) & SCOPE_RULES[kind])


def is_loopback_redirect(uri):
    """http://127.0.0.1[:PORT][/path], http://localhost[:PORT], http://[::1][:PORT]."""
    try:
        parts = urllib.parse.urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1") \
        and not parts.fragment


def narrow(scopes):
    """A narrower grant than requested (admin switch "narrow_scope")."""
    if any(s in (MODIFY, FULL) for s in scopes):
        return [READONLY if s in (MODIFY, FULL) else s for s in scopes]
    if len(scopes) > 1:
        return scopes[:1]
    return [METADATA if s == READONLY else s for s in scopes]


def _page(status, title, text):
    body = "<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p>" \
           "</body></html>" % (html.escape(title), html.escape(title), html.escape(text))
    return status, {"Content-Type": "text/html; charset=utf-8"}, body.encode("utf-8")


def _redirect(uri, params):
    sep = "&" if "?" in uri else "?"
    query = urllib.parse.urlencode([(k, v) for k, v in params if v is not None],
                                   quote_via=urllib.parse.quote)
    return 302, {"Location": uri + sep + query}, b""


class OAuthServer:
    """State of the fake Google authorization server for one account."""

    def __init__(self, client_id, client_secret, refresh_token, ttl, default_scope=MODIFY):
        self.client_id = client_id
        self.client_secret = client_secret
        self.ttl = int(ttl)
        self.lock = threading.Lock()
        self.codes = {}
        self.refresh = {}
        self.access = {}
        # Every token ever issued, kept after expiry or revocation, so a test can check
        # that none of them leaked into a client's output, logs or files.
        self.issued = []
        self.consent = "allow"
        self.narrow_scope = False
        if refresh_token:
            self.refresh[refresh_token] = {"scope": [default_scope], "revoked": False}
            self.issued.append(refresh_token)

    # ------------------------------------------------------------ /auth

    def authorize(self, params):
        """GET /auth: validate, then 302 to the redirect URI (auto-consent)."""
        get = lambda k: (params.get(k) or [None])[0]  # noqa: E731
        client_id, redirect_uri, state = get("client_id"), get("redirect_uri"), get("state")
        if client_id != self.client_id:
            return _page(400, "Error 401: invalid_client", "The OAuth client was not found.")
        if not redirect_uri or not is_loopback_redirect(redirect_uri):
            return _page(400, "Error 400: redirect_uri_mismatch",
                         "redirect_uri must be a loopback address for a desktop client.")
        if get("response_type") != "code":
            return _redirect(redirect_uri, [("error", "unsupported_response_type"),
                                            ("state", state)])
        scope = (get("scope") or "").split()
        challenge = get("code_challenge")
        if not scope or not challenge or get("code_challenge_method") != "S256":
            return _redirect(redirect_uri, [("error", "invalid_request"), ("state", state)])
        if self.consent == "deny":
            return _redirect(redirect_uri, [("error", "access_denied"), ("state", state)])
        granted = narrow(scope) if self.narrow_scope else scope
        code = "4/0AfJohX" + secrets.token_urlsafe(36)
        with self.lock:
            self.codes[code] = {"redirect_uri": redirect_uri, "challenge": challenge,
                                "scope": granted, "expires": time.monotonic() + CODE_TTL,
                                "used": False}
        return _redirect(redirect_uri, [("state", state), ("code", code),
                                        ("scope", " ".join(granted))])

    # ------------------------------------------------------------ /token

    def _issue_access(self, scope, refresh_token):
        token = "ya29.fake." + secrets.token_urlsafe(48)
        self.access[token] = {"expires": time.monotonic() + self.ttl, "scope": list(scope),
                              "refresh": refresh_token}
        self.issued.append(token)
        return token

    def token(self, form, auth_header=None):
        """POST /token -> (status, JSON dict)."""
        get = lambda k: (form.get(k) or [None])[0]  # noqa: E731
        client_id, secret = get("client_id"), get("client_secret")
        if auth_header and auth_header.lower().startswith("basic "):
            try:
                pair = base64.b64decode(auth_header[6:].strip()).decode("utf-8")
                client_id, _, secret = pair.partition(":")
                client_id, secret = urllib.parse.unquote(client_id), urllib.parse.unquote(secret)
            except (ValueError, UnicodeDecodeError):
                return 401, _err("invalid_client", "Unauthorized")
        grant = get("grant_type")
        if not grant:
            return 400, _err("invalid_request", "Missing required parameter: grant_type")
        if grant not in ("authorization_code", "refresh_token"):
            return 400, _err("unsupported_grant_type", "Invalid grant_type: %s" % grant)
        if not client_id:
            return 400, _err("invalid_request", "Could not determine client ID from request.")
        if client_id != self.client_id or secret != self.client_secret:
            return 401, _err("invalid_client", "Unauthorized")
        with self.lock:
            if grant == "authorization_code":
                return self._grant_code(get("code"), get("redirect_uri"), get("code_verifier"))
            return self._grant_refresh(get("refresh_token"))

    def _grant_code(self, code, redirect_uri, verifier):
        if not code:
            return 400, _err("invalid_request", "Missing required parameter: code")
        entry = self.codes.get(code)
        if entry is None or entry["used"] or entry["expires"] < time.monotonic():
            return 400, _err("invalid_grant", "Malformed auth code.")
        if redirect_uri != entry["redirect_uri"]:
            return 400, _err("redirect_uri_mismatch", "Bad Request")
        if not verifier:
            return 400, _err("invalid_grant", "Missing code verifier.")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace"))
                                          .digest()).rstrip(b"=").decode("ascii")
        if not _VERIFIER.match(verifier) or digest != entry["challenge"]:
            return 400, _err("invalid_grant", "Invalid code verifier.")
        entry["used"] = True
        refresh_token = "1//0fake" + secrets.token_urlsafe(40)
        self.refresh[refresh_token] = {"scope": entry["scope"], "revoked": False}
        self.issued.append(refresh_token)
        return 200, {"access_token": self._issue_access(entry["scope"], refresh_token),
                     "expires_in": self.ttl, "refresh_token": refresh_token,
                     "scope": " ".join(entry["scope"]), "token_type": "Bearer"}

    def _grant_refresh(self, refresh_token):
        if not refresh_token:
            return 400, _err("invalid_request", "Missing required parameter: refresh_token")
        entry = self.refresh.get(refresh_token)
        if entry is None or entry["revoked"]:
            return 400, _err("invalid_grant", "Token has been expired or revoked.")
        return 200, {"access_token": self._issue_access(entry["scope"], refresh_token),
                     "expires_in": self.ttl, "scope": " ".join(entry["scope"]),
                     "token_type": "Bearer"}

    # ------------------------------------------------------------ /revoke and checks

    def revoke(self, token):
        """POST /revoke?token=...: a refresh token also kills its access tokens."""
        with self.lock:
            if token in self.refresh and not self.refresh[token]["revoked"]:
                self.refresh[token]["revoked"] = True
                for key in [k for k, v in self.access.items() if v["refresh"] == token]:
                    del self.access[key]
                return 200, {}
            if token in self.access:
                del self.access[token]
                return 200, {}
        return 400, _err("invalid_token", "Token expired or revoked")

    def set_scope(self, refresh_token, scope):
        """Replace what a refresh token grants (a permission the user took back on their
        Google account page, or a later consent that left a box unticked). Access tokens
        already made from it carry the new scope too. False for an unknown token."""
        with self.lock:
            entry = self.refresh.get(refresh_token)
            if entry is None:
                return False
            entry["scope"] = list(scope)
            for access in self.access.values():
                if access["refresh"] == refresh_token:
                    access["scope"] = list(scope)
            return True

    def check(self, token):
        """Granted scopes of a valid, unexpired access token; None otherwise."""
        with self.lock:
            entry = self.access.get(token or "")
            if entry is None or entry["expires"] <= time.monotonic():
                return None
            return entry["scope"]

    def expire_access_tokens(self):
        with self.lock:
            for entry in self.access.values():
                entry["expires"] = 0

    def issued_tokens(self):
        """Every refresh and access token issued so far, valid or not."""
        with self.lock:
            return list(self.issued)

    def settings(self):
        return {"consent": self.consent, "narrow_scope": self.narrow_scope,
                "access_token_ttl": self.ttl}


def _err(error, description):
    return {"error": error, "error_description": description}
