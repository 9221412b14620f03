"""OAuth endpoints: consent redirect, PKCE code exchange, refresh, revoke (gmail-api.md §7)."""
import base64
import hashlib
import json
import secrets
import urllib.parse

from fgtestlib import API, ServerTestCase

REDIRECT = "http://127.0.0.1:53682/callback"
MODIFY = "https://www.googleapis.com/auth/gmail.modify"


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(
        b"=").decode()
    return verifier, challenge


def token_call(srv, **form):
    """POST /token with the demo client credentials plus ``form``."""
    base = {"client_id": "hudson-demo-client", "client_secret": "hudson-demo-secret"}
    base.update(form)
    status, _, body = srv.request("POST", "/token", urllib.parse.urlencode(base).encode(),
                                  {"Content-Type": "application/x-www-form-urlencoded"})
    return status, json.loads(body)


class OAuthTests(ServerTestCase):
    def tearDown(self):
        self.srv.admin("POST", "set", {"consent": "allow", "narrow_scope": False})

    def authorize(self, **over):
        verifier, challenge = pkce()
        params = {"client_id": "hudson-demo-client", "redirect_uri": REDIRECT,
                  "response_type": "code", "scope": MODIFY, "code_challenge": challenge,
                  "code_challenge_method": "S256", "state": "st-123", "access_type": "offline"}
        params.update(over)
        status, headers, body = self.srv.request("GET", "/auth?" + urllib.parse.urlencode(params))
        return status, headers, body, verifier

    def token(self, **form):
        return token_call(self.srv, **form)

    def code_from(self, headers):
        loc = urllib.parse.urlsplit(headers["location"])
        return loc, dict(urllib.parse.parse_qsl(loc.query))

    def test_consent_redirect_and_pkce_exchange(self):
        status, headers, _, verifier = self.authorize()
        self.assertEqual(status, 302)
        loc, query = self.code_from(headers)
        self.assertEqual("%s://%s%s" % (loc.scheme, loc.netloc, loc.path), REDIRECT)
        self.assertEqual(query["state"], "st-123")
        self.assertEqual(query["scope"], MODIFY)
        status, tok = self.token(grant_type="authorization_code", code=query["code"],
                                 redirect_uri=REDIRECT, code_verifier=verifier)
        self.assertEqual(status, 200, tok)
        self.assertEqual(set(tok), {"access_token", "expires_in", "refresh_token", "scope",
                                    "token_type"})
        self.assertEqual(tok["token_type"], "Bearer")
        self.assertEqual(tok["expires_in"], 3600)
        self.assertEqual(self.srv.api("GET", "profile", token=tok["access_token"])[0], 200)
        # the code is single-use
        status, err = self.token(grant_type="authorization_code", code=query["code"],
                                 redirect_uri=REDIRECT, code_verifier=verifier)
        self.assertEqual((status, err["error"]), (400, "invalid_grant"))
        # the new refresh token works, and dies once revoked
        status, fresh = self.token(grant_type="refresh_token", refresh_token=tok["refresh_token"])
        self.assertEqual(status, 200)
        self.assertEqual(set(fresh), {"access_token", "expires_in", "scope", "token_type"})
        status, _, _ = self.srv.request("POST", "/revoke?token=" + tok["refresh_token"])
        self.assertEqual(status, 200)
        status, err = self.token(grant_type="refresh_token", refresh_token=tok["refresh_token"])
        self.assertEqual(err, {"error": "invalid_grant",
                               "error_description": "Token has been expired or revoked."})
        self.assertEqual(status, 400)
        self.assertEqual(self.srv.api("GET", "profile", token=fresh["access_token"])[0], 401)

    def test_wrong_verifier_and_redirect(self):
        _, headers, _, verifier = self.authorize()
        _, query = self.code_from(headers)
        status, err = self.token(grant_type="authorization_code", code=query["code"],
                                 redirect_uri=REDIRECT, code_verifier=pkce()[0])
        self.assertEqual((status, err["error"]), (400, "invalid_grant"))
        status, err = self.token(grant_type="authorization_code", code=query["code"],
                                 redirect_uri="http://127.0.0.1:1/other", code_verifier=verifier)
        self.assertEqual(status, 400)
        status, _ = self.token(grant_type="authorization_code", code=query["code"],
                               redirect_uri=REDIRECT, code_verifier=verifier)
        self.assertEqual(status, 200)

    def test_loopback_variants(self):
        for uri in ("http://127.0.0.1:8080", "http://localhost:9999/", "http://[::1]:4321/cb"):
            status, headers, _, _ = self.authorize(redirect_uri=uri)
            self.assertEqual(status, 302, uri)
            self.assertTrue(headers["location"].startswith(uri.rstrip("/")))

    def test_auth_errors(self):
        status, headers, body, _ = self.authorize(client_id="someone-else")
        self.assertEqual(status, 400)
        self.assertIn(b"invalid_client", body)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        for uri in ("https://evil.example/cb", "urn:ietf:wg:oauth:2.0:oob"):
            self.assertEqual(self.authorize(redirect_uri=uri)[0], 400)
        status, headers, _, _ = self.authorize(code_challenge_method="plain")
        self.assertEqual(self.code_from(headers)[1]["error"], "invalid_request")
        status, headers, _, _ = self.authorize(response_type="token")
        self.assertEqual(self.code_from(headers)[1]["error"], "unsupported_response_type")

    def test_consent_denied(self):
        self.srv.admin("POST", "set", {"consent": "deny"})
        status, headers, _, _ = self.authorize()
        self.assertEqual(status, 302)
        _, query = self.code_from(headers)
        self.assertEqual(query, {"error": "access_denied", "state": "st-123"})

    def test_narrow_scope(self):
        self.srv.admin("POST", "set", {"narrow_scope": True})
        _, headers, _, verifier = self.authorize()
        _, query = self.code_from(headers)
        self.assertEqual(query["scope"], "https://www.googleapis.com/auth/gmail.readonly")
        _, tok = self.token(grant_type="authorization_code", code=query["code"],
                            redirect_uri=REDIRECT, code_verifier=verifier)
        self.assertEqual(tok["scope"], "https://www.googleapis.com/auth/gmail.readonly")
        access = tok["access_token"]
        self.assertEqual(self.srv.api("GET", "messages", {"maxResults": 1}, token=access)[0], 200)
        mid = self.srv.get("messages", {"maxResults": 1})["messages"][0]["id"]
        status, err = self.srv.api("POST", "messages/%s/modify" % mid,
                                   body={"addLabelIds": ["STARRED"]}, token=access)
        self.assertEqual(status, 403)
        self.assertEqual(err["error"]["errors"][0]["reason"], "insufficientPermissions")

    def test_token_errors(self):
        status, err = self.token(grant_type="refresh_token", refresh_token="demo-refresh-token",
                                 client_secret="wrong")
        self.assertEqual((status, err["error"]), (401, "invalid_client"))
        status, err = self.token(grant_type="password")
        self.assertEqual((status, err["error"]), (400, "unsupported_grant_type"))
        status, err = self.token()
        self.assertEqual((status, err["error"]), (400, "invalid_request"))
        status, err = self.token(grant_type="refresh_token", refresh_token="never-issued")
        self.assertEqual((status, err["error_description"]),
                         (400, "Token has been expired or revoked."))
        basic = base64.b64encode(b"hudson-demo-client:hudson-demo-secret").decode()
        status, _, body = self.srv.request(
            "POST", "/token", b"grant_type=refresh_token&refresh_token=demo-refresh-token",
            {"Authorization": "Basic " + basic,
             "Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 200, body)


class IssuedTokensTests(ServerTestCase):
    def test_every_issued_token_is_listed_even_after_revocation(self):
        first = self.srv.token(fresh=True)
        second = self.srv.token(fresh=True)
        self.srv.admin("POST", "expire-access-tokens")
        listed = self.srv.admin("GET", "tokens")["tokens"]
        self.assertIn("demo-refresh-token", listed)
        self.assertIn(first, listed)
        self.assertIn(second, listed)


class AuthLogTests(ServerTestCase):
    def test_auth_and_token_are_logged(self):
        self.srv.admin("DELETE", "requests")
        self.srv.request("GET", "/auth?client_id=x")
        self.srv.token(fresh=True)
        self.srv.request("GET", API + "profile")
        paths = [(e["path"], e["status"]) for e in self.srv.admin("GET", "requests")]
        self.assertEqual(paths, [("/auth", 400), ("/token", 200), (API + "profile", 401)])


class RevokeTests(ServerTestCase):
    """Own server: revoking the pre-registered refresh token breaks later tests."""

    def test_admin_revoke_of_the_preregistered_token(self):
        status, _ = token_call(self.srv, grant_type="refresh_token",
                                  refresh_token="demo-refresh-token")
        self.assertEqual(status, 200)
        log = self.srv.admin("GET", "requests")
        self.assertEqual(log[-1]["path"], "/token")
        self.srv.admin("POST", "revoke", {"refresh_token": "demo-refresh-token"})
        status, err = token_call(self.srv, grant_type="refresh_token",
                                  refresh_token="demo-refresh-token")
        self.assertEqual((status, err["error"]), (400, "invalid_grant"))


class ScopeTests(ServerTestCase):
    """Own server: narrowing the pre-registered grant would break later tests."""

    def test_admin_scope_narrows_the_grant_of_a_refresh_token(self):
        readonly = "https://www.googleapis.com/auth/gmail.readonly"
        status, before = token_call(self.srv, grant_type="refresh_token", refresh_token="demo-refresh-token")
        self.assertEqual((status, before["scope"]), (200, MODIFY))
        self.assertEqual(self.srv.admin("POST", "scope", {"refresh_token": "demo-refresh-token",
                                                          "scope": readonly}), {"scope": readonly})
        status, after = token_call(self.srv, grant_type="refresh_token", refresh_token="demo-refresh-token")
        self.assertEqual((status, after["scope"]), (200, readonly))
        # The access token made before the change lost the permission too.
        status, _ = self.srv.api("POST", "messages/batchModify", body={"ids": [], "addLabelIds": ["STARRED"]},
                                 token=before["access_token"])
        self.assertEqual(status, 403)
        with self.assertRaises(AssertionError):
            self.srv.admin("POST", "scope", {"refresh_token": "no-such-token", "scope": readonly})
