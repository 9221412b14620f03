"""The HTTP server and the command line of the fake Gmail server.

``ThreadingHTTPServer`` with HTTP/1.1 keep-alive and exact Content-Length on
every answer.  Fault actions decided by ``App`` (drop, hang, truncate) are
carried out here, on the socket.  Run ``fake_gmail.py --help`` for options.
"""
import argparse
import os
import pickle
import select
import signal
import socket
import socketserver
import sys
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import demo, loaders
from .app import App
from .plumbing import Request
from .batch import Headers
from .mailbox import Mailbox
from .oauth import OAuthServer
from .util import Clock

QUIET_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ESF"
    sys_version = ""
    # The headers and the body go out in separate writes; with Nagle's algorithm on, the
    # body waits for the client to ACK the headers, and a client that delays its ACK
    # (40 ms on Linux) adds that to every answer. --latency-ms is the only delay wanted.
    disable_nagle_algorithm = True

    def do_GET(self):
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _serve(self):
        app = self.server.app
        try:
            target = urllib.parse.urlsplit(self.path)
            body = self._read_body()
            resp = app.handle(Request(self.command, target.path, target.query,
                                      Headers(self.headers.items()), body))
            if resp.action == "drop":
                self._abort()
                return
            if resp.action == "hang":
                self._hang(app)
                return
            self.send_response(resp.status)
            for name, value in resp.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(resp.body)))
            self.end_headers()
            if resp.action == "truncate":
                self.wfile.write(resp.body[:len(resp.body) // 2])
                self.wfile.flush()
                self._abort()
                return
            self.wfile.write(resp.body)
        except QUIET_ERRORS:
            self.close_connection = True

    def _abort(self):
        """Close the connection at once, without (the rest of) an answer."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _hang(self, app):
        """Never answer; return once the client closes or the server stops."""
        self.close_connection = True
        sock = self.connection
        while not app.stopping.is_set():
            ready, _, _ = select.select([sock], [], [], 0.2)
            if ready:
                try:
                    if not sock.recv(65536):
                        return
                except OSError:
                    return

    def log_message(self, fmt, *args):
        if self.server.app.verbose:
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, app):
        self.app = app
        super().__init__(address, Handler)

    def server_bind(self):
        # Skip HTTPServer.server_bind's getfqdn(): a reverse lookup can be slow.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class Server6(Server):
    address_family = socket.AF_INET6


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="fake_gmail.py", description="Hudson's fake Gmail "
                                "REST API v1 server (Python stdlib only).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 = a random free port")
    p.add_argument("--port-file", help="also write the base URL to this file (atomically)")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    p.add_argument("--state", help="keep the mailbox in this file: loaded at start when it exists "
                   "(the mailbox sources are then not read), saved when the server stops")
    g = p.add_argument_group("mailbox sources (combinable; default --demo)")
    g.add_argument("--demo", action="store_true", help="the embedded demo mailbox")
    g.add_argument("--demo-count", type=int, default=300)
    g.add_argument("--demo-seed", type=int, default=1)
    g.add_argument("--demo-span-days", type=float, default=730)
    g.add_argument("--now", type=float, help="pin the current time (epoch seconds)")
    g.add_argument("--eml-dir", action="append", default=[], help="eml files / Maildir")
    g.add_argument("--mbox", action="append", default=[], help="mbox file (e.g. Takeout)")
    g.add_argument("--gmail-ndjson", action="append", default=[],
                   help="one messages.get(format=full) JSON per line")
    g.add_argument("--labels-json", help="labels.list JSON naming user labels")
    g.add_argument("--account", default="demo@hudson.test")
    o = p.add_argument_group("OAuth")
    o.add_argument("--client-id", default="hudson-demo-client")
    o.add_argument("--client-secret", default="hudson-demo-secret")
    o.add_argument("--refresh-token", default="demo-refresh-token")
    o.add_argument("--access-token-ttl", type=int, default=3600)
    b = p.add_argument_group("behaviour")
    b.add_argument("--latency-ms", type=int, default=0)
    b.add_argument("--latency-ms-max", type=int, default=0,
                   help="above --latency-ms: each request waits a uniform draw between the two")
    b.add_argument("--quota-per-minute", type=int, default=0, help="0 = unlimited")
    b.add_argument("--history-start", type=int, default=100000,
                   help="lowest starting value of the history counter")
    b.add_argument("--history-min-id", type=int, default=0,
                   help="startHistoryId below this gives 404 (expired)")
    b.add_argument("--shuffle-batch", action="store_true",
                   help="return batch sub-responses in random order")
    return p.parse_args(argv)


def build_app(args):
    """Load the mailbox and create the App described by parsed ``args``."""
    oauth = OAuthServer(args.client_id, args.client_secret, args.refresh_token,
                        args.access_token_ttl)
    if args.state and os.path.exists(args.state):
        try:
            with open(args.state, "rb") as f:
                mailbox = pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
            raise ValueError("%s: not a saved mailbox (%s)" % (args.state, exc))
        if not isinstance(mailbox, Mailbox) or mailbox.account != args.account:
            raise ValueError("%s: not a saved mailbox of %s" % (args.state, args.account))
        return App(mailbox, oauth, args.latency_ms, args.quota_per_minute, args.shuffle_batch,
                   args.verbose, args.latency_ms_max)
    clock = Clock(args.now)
    mailbox = Mailbox(args.account, clock, args.history_start, args.demo_seed)
    messages = []
    if args.labels_json:
        loaders.load_labels_json(args.labels_json, mailbox.labels)
    if args.demo or not (args.eml_dir or args.mbox or args.gmail_ndjson):
        messages += demo.generate(mailbox.labels, args.account, args.demo_count,
                                  args.demo_seed, clock.now(), args.demo_span_days)
    for path in args.eml_dir:
        messages += loaders.load_eml_dir(path, mailbox.labels)
    for path in args.mbox:
        messages += loaders.load_mbox(path, mailbox.labels)
    for path in args.gmail_ndjson:
        messages += loaders.load_ndjson(path, mailbox.labels)
    mailbox.load(messages)
    mailbox.history.min_valid = args.history_min_id
    return App(mailbox, oauth, args.latency_ms, args.quota_per_minute, args.shuffle_batch,
               args.verbose, args.latency_ms_max)


def make_server(app, host="127.0.0.1", port=0):
    """Bind a server for ``app``; returns (server, base URL)."""
    cls = Server6 if ":" in host else Server
    server = cls((host, port), app)
    shown = "[%s]" % host if ":" in host else host
    app.shutdown_hook = server.shutdown
    return server, "http://%s:%d" % (shown, server.server_address[1])


def save_state(path, mailbox):
    """The mailbox, written to ``path`` atomically (a new file renamed over the old)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fake-gmail-state-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            with mailbox.lock:
                pickle.dump(mailbox, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_port_file(path, url):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fake-gmail-", dir=folder)
    with os.fdopen(fd, "w") as f:
        f.write(url + "\n")
    os.replace(tmp, path)


def main(argv=None):
    args = parse_args(argv)
    try:
        app = build_app(args)
    except (OSError, ValueError) as exc:
        print("fake_gmail.py: %s" % exc, file=sys.stderr)
        return 2
    server, url = make_server(app, args.host, args.port)

    def stop(signum=None, frame=None):
        app.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.verbose:
        print("fake-gmail: %d messages, %d threads, historyId %d, account %s" % (
            len(app.mailbox.messages), len(app.mailbox.threads), app.mailbox.history.current,
            args.account), file=sys.stderr, flush=True)
    if args.port_file:
        write_port_file(args.port_file, url)
    print("listening %s" % url, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        app.stopping.set()
        server.server_close()
        if args.state:
            save_state(args.state, app.mailbox)
    return 0
