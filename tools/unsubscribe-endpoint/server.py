#!/usr/bin/env python3
"""A sender's one-click unsubscribe endpoint on 127.0.0.1, for hd-unsubscribe's tests.

Prints its port on the first line of standard output, then appends every request it
receives to LOG (argument 1) as one JSON object a line: method, path, headers, body
(base64), before answering. What it answers depends on the path:

  /ok       200            /gone     404          /fail   500
  /redirect 302 to another host       /same-redirect 303 to /ok on this host
  /slow     waits 60 s before answering (the client's bound must cut it off)
  /drip     a 200 whose body comes one byte a second, forever
  /big      a 200 with a 20 MB body
  /drop     records the request, then closes the connection without an answer
  /status/N answers status N (100-599) with a body of ?size=BYTES bytes
"""
import base64
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        entry = {"method": self.command, "path": self.path,
                 "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": base64.b64encode(body).decode()}
        with lock, open(LOG, "a") as log:
            log.write(json.dumps(entry) + "\n")

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "tracking=1; Path=/")
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        self.record()
        path = self.path.split("?")[0]
        if path == "/ok":
            self.answer(200, b"unsubscribed")
        elif path == "/gone":
            self.answer(404, b"no such list")
        elif path == "/fail":
            self.answer(500, b"oops")
        elif path == "/redirect":
            self.answer(302, headers=[("Location", "http://other.example/steal")])
        elif path == "/same-redirect":
            self.answer(303, headers=[("Location", "/ok")])
        elif path == "/slow":
            time.sleep(60)
            self.answer(200)
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(1000000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        elif path == "/big":
            self.answer(200, b"x" * (20 * 1024 * 1024))
        elif path.startswith("/status/"):
            code = int(path.split("/")[2])
            size = int(self.path.split("size=")[1]) if "size=" in self.path else 0
            if code < 200 or code in (204, 304):
                self.answer(code)
            else:
                self.answer(code, b"y" * size)
        elif path == "/drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.connection.close()
        else:
            self.answer(400, b"unknown path")

    do_GET = do_POST = do_PUT = do_HEAD = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
