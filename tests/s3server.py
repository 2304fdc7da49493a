"""A real S3 server on localhost for the object-store tests: moto's server mode (it performs
conditional PUT: `If-None-Match: *` answers 412 when the key exists) behind a small proxy
of ours that counts requests and injects faults.

Used by tests/test_s3.py and, through connector/core/src/test/resources/pylance/s3_ops.py,
by the Scala suites. Nothing needs to be running beforehand: `S3Server()` starts moto
(`moto_server` from the `moto[server]` package in .venv) on a free port.
"""

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"
REGION = "us-east-1"

_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Faults:
    """What the proxy does to requests: counts them, fails some, refuses conditional PUTs.

    every: fail every n-th request (0 = never) with `status` before it reaches moto;
    ambiguous_puts: the next k PUTs reach moto (and take effect) but answer 500, as if the
    response were lost; refuse_conditional: conditional PUTs answer 501 NotImplemented, like
    a store without them; slow: the next k requests wait `delay` seconds before they are
    forwarded (a client that gives up sooner retries while they are still on their way).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.every = 0
            self.status = 503
            self.ambiguous_puts = 0
            self.refuse_conditional = False
            self.slow = 0
            self.delay = 0.0
            self.seen = 0
            self.requests = []

    def counts(self, prefix=""):
        """Requests by kind (GET, RANGE_GET, HEAD, LIST, PUT, POST, DELETE) whose path
        contains `prefix`."""
        out = {}
        with self.lock:
            for method, path, query, headers in self.requests:
                if prefix not in path and prefix not in query:
                    continue
                kind = method
                if method == "GET" and "list-type" in query:
                    kind = "LIST"
                elif method == "GET" and "range" in headers:
                    kind = "RANGE_GET"
                out[kind] = out.get(kind, 0) + 1
        return out


def _handler(upstream, faults):
    host, port = upstream
    # moto checks a conditional PUT's condition and then stores the object, unlocked: two
    # racing creates of one key could both win (seen once in a CI run). S3 does both at once;
    # the proxy forwards conditional PUTs one at a time to match.
    conditional = threading.Lock()

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _reply(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _error(self, status, code):
            body = (
                f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code>"
                f"<Message>injected by the test proxy</Message></Error>"
            ).encode()
            self._reply(status, body, [("Content-Type", "application/xml")])

        def _any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            lower = {k.lower(): v for k, v in self.headers.items()}
            with faults.lock:
                faults.seen += 1
                n = faults.seen
                faults.requests.append((self.command, parts.path, parts.query, lower))
                fail = faults.every and n % faults.every == 0
                ambiguous = self.command == "PUT" and faults.ambiguous_puts > 0
                if ambiguous:
                    faults.ambiguous_puts -= 1
                refuse = (
                    faults.refuse_conditional and self.command == "PUT" and "if-none-match" in lower
                )
                delay = faults.delay if faults.slow > 0 else 0
                if delay:
                    faults.slow -= 1
            if delay:
                time.sleep(delay)
            if refuse:
                return self._error(501, "NotImplemented")
            if fail:
                return self._error(
                    faults.status, "SlowDown" if faults.status == 503 else "InternalError"
                )
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            if self.command == "PUT" and ("if-none-match" in lower or "if-match" in lower):
                with conditional:
                    resp, data = self._forward(headers, body)
            else:
                resp, data = self._forward(headers, body)
            if ambiguous:
                return self._error(500, "InternalError")
            out = [
                (k, v)
                for k, v in resp.getheaders()
                if k.lower() not in _HOP and k.lower() != "content-length"
            ]
            if self.command == "HEAD":
                self.send_response(resp.status)
                for k, v in out:
                    self.send_header(k, v)
                self.send_header("Content-Length", resp.getheader("Content-Length") or "0")
                self.end_headers()
                return None
            return self._reply(resp.status, data, out)

        def _forward(self, headers, body):
            conn = http.client.HTTPConnection(host, port, timeout=120)
            conn.request(self.command, self.path, body=body if body else None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            return resp, data

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

    return Proxy


class S3Server:
    """moto on a free port and the fault proxy in front of it. `endpoint` is the proxy's."""

    def __init__(self):
        port = _free_port()
        exe = os.path.join(os.path.dirname(sys.executable), "moto_server")
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"moto-{port}.log"), "w")
        self.proc = subprocess.Popen(
            [exe, "-H", "127.0.0.1", "-p", str(port)], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"moto_server did not start (see {self.log.name})")
                time.sleep(0.1)
        self.direct_endpoint = f"http://127.0.0.1:{port}"
        self.faults = Faults()
        self.proxy = ThreadingHTTPServer(
            ("127.0.0.1", 0), _handler(("127.0.0.1", port), self.faults)
        )
        self.proxy.daemon_threads = True
        threading.Thread(target=self.proxy.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.proxy.server_address[1]}"
        self._buckets = 0

    def storage_options(self, direct=False):
        """pylance's storage_options for this server (also our reader/writer options)."""
        return {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "allow_http": "true",
            "aws_endpoint": self.direct_endpoint if direct else self.endpoint,
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.direct_endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def new_bucket(self, stem="bucket"):
        """A fresh bucket; its name."""
        self._buckets += 1
        name = f"{stem}-{os.getpid()}-{self._buckets}"
        self.client().create_bucket(Bucket=name)
        return name

    def stop(self):
        self.proxy.shutdown()
        self.proc.kill()
        self.proc.wait()
        self.log.close()
