"""Shared helpers for the fake Gmail server's tests (not a test module itself).

``LiveServer`` runs the real HTTP server in a thread of the test process
(fast, and still real HTTP over 127.0.0.1).  ``check_schema`` compares a
response with the field names and types of Gmail's discovery document
(``gmail-schemas.json``).  ``MKCORPUS`` is the project's mailbox generator.
"""
import http.client
import json
import os
import threading
import unittest
import urllib.parse

from fakegmail import server

HERE = os.path.dirname(os.path.abspath(__file__))
# The schemas of Gmail's discovery document, field names and JSON types only.
DISCOVERY = os.path.join(HERE, "gmail-schemas.json")
MKCORPUS = os.path.join(HERE, "..", "..", "bench", "mkcorpus.py")
NOW = 1767225600            # 2026-01-01T00:00:00Z, pinned for determinism
API = "/gmail/v1/users/me/"


class LiveServer:
    """A fake Gmail server on a random port, in a background thread."""

    def __init__(self, *argv):
        argv = list(argv)
        if "--now" not in argv:
            argv += ["--now", str(NOW)]
        self.app = server.build_app(server.parse_args(argv))
        self.httpd, self.url = server.make_server(self.app)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self._token = None

    def stop(self):
        self.app.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------ raw HTTP

    def request(self, method, path, body=None, headers=None, timeout=10):
        """(status, headers dict lower-cased, body bytes); a new connection each time."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode("utf-8")
                headers = dict(headers or {}, **{"Content-Type": "application/json"})
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def token(self, fresh=False):
        if self._token is None or fresh:
            status, _, body = self.request(
                "POST", "/token", urllib.parse.urlencode({
                    "grant_type": "refresh_token", "refresh_token": "demo-refresh-token",
                    "client_id": "hudson-demo-client",
                    "client_secret": "hudson-demo-secret"}).encode(),
                {"Content-Type": "application/x-www-form-urlencoded"})
            assert status == 200, body
            self._token = json.loads(body)["access_token"]
        return self._token

    def api(self, method, rest, params=None, body=None, token=None, expect=None):
        """Call a Gmail method under /gmail/v1/users/me/; returns (status, JSON or None)."""
        path = API + rest
        if params:
            path += "?" + urllib.parse.urlencode(params, doseq=True)
        hdrs = {"Authorization": "Bearer %s" % (token or self.token())}
        status, headers, data = self.request(method, path, body, hdrs)
        if expect is not None and status != expect:
            raise AssertionError("%s %s -> %d %s" % (method, path, status, data[:300]))
        return status, (json.loads(data) if data else None)

    def get(self, rest, params=None, **kw):
        return self.api("GET", rest, params, **kw)[1]

    def admin(self, method, rest, body=None):
        status, _, data = self.request(method, "/_admin/" + rest, body)
        assert status == 200, (status, data)
        return json.loads(data)


class ServerTestCase(unittest.TestCase):
    """One demo server per test class."""

    server_args = ("--demo",)
    srv = None

    @classmethod
    def setUpClass(cls):
        cls.srv = LiveServer(*cls.server_args)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def setUp(self):
        self.srv.admin("DELETE", "faults")


def assert_no_empty(test, obj, where="$"):
    """Google leaves empty fields out: no null, no [] and no {} anywhere (§1)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            test.assertIsNotNone(v, "%s.%s is null" % (where, k))
            test.assertNotEqual(v, [], "%s.%s is []" % (where, k))
            assert_no_empty(test, v, "%s.%s" % (where, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            assert_no_empty(test, v, "%s[%d]" % (where, i))


_DISCOVERY = None


def discovery():
    global _DISCOVERY
    if _DISCOVERY is None:
        with open(DISCOVERY, encoding="utf-8") as f:
            _DISCOVERY = json.load(f)
    return _DISCOVERY


def check_schema(test, obj, schema_name, where="$"):
    """Every field of ``obj`` exists in the discovery schema with the right JSON type.

    int64/uint64 must be strings, int32/uint32 numbers (§1).
    """
    doc = discovery()
    props = doc["schemas"][schema_name]["properties"]
    test.assertIsInstance(obj, dict, where)
    for key, value in obj.items():
        test.assertIn(key, props, "%s.%s is not a field of %s" % (where, key, schema_name))
        _check_value(test, value, props[key], "%s.%s" % (where, key))


def _check_value(test, value, prop, where):
    if "$ref" in prop:
        check_schema(test, value, prop["$ref"], where)
    elif prop.get("type") == "array":
        test.assertIsInstance(value, list, where)
        for i, item in enumerate(value):
            _check_value(test, item, prop["items"], "%s[%d]" % (where, i))
    elif prop.get("type") == "string":
        test.assertIsInstance(value, str, "%s should be a string (%s)" % (
            where, prop.get("format", "")))
    elif prop.get("type") == "integer":
        test.assertIsInstance(value, int, where)
        test.assertNotIsInstance(value, bool, where)
    elif prop.get("type") == "boolean":
        test.assertIsInstance(value, bool, where)
