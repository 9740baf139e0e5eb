"""A real HTTP search system on 127.0.0.1 for the client tests, and a guard that keeps
every test in this package off the network beyond loopback."""

from __future__ import annotations

import contextlib
import gzip
import ipaddress
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

HUGE_SIZE = 2_000_000  # bytes; tests cap responses far below this
ROUTES = {
    f"/{name}": "_" + name.replace("-", "_")
    for name in (
        "search",
        "echo",
        "empty",
        "error500",
        "error503",
        "forbidden",
        "slow",
        "trickle",
        "malformed",
        "html",
        "empty-body",
        "huge",
        "huge-unannounced",
        "gzip-bomb",
        "latin1",
        "redirect",
    )
}


@pytest.fixture(autouse=True)
def only_loopback_connections(monkeypatch):
    """Fail any connection attempt to a non-loopback address.

    The safety code must refuse private addresses before connecting; if it ever did not,
    this stops the test from sending traffic to 10.x or a cloud metadata address.
    """
    real_create_connection = socket.create_connection

    def guarded(address, *args, **kwargs):
        host = address[0]
        try:
            loopback = ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
        except ValueError:
            loopback = False  # a name: the client must only ever dial checked addresses
        if not loopback:
            pytest.fail(f"test tried to connect to {host}, which is not loopback")
        return real_create_connection(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)


@dataclass
class SearchServer:
    base_url: str
    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def count(self, path: str) -> int:
        return sum(1 for _, seen in self.requests if urlsplit(seen).path == path)


def _results_for(keyword: str) -> dict[str, object]:
    return {
        "took": 3,
        "timed_out": False,
        "hits": {
            "total": 2,
            "hits": [
                {"_id": 101, "_source": {"title": f"{keyword} one", "brand": "Acme"}},
                {"_id": "b-2", "_source": {"title": f"{keyword} two", "img": "/two.png"}},
            ],
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        self._route()

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean

    def _route(self) -> None:
        self.server.seen.append((self.command, self.path))
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        handler = getattr(self, ROUTES.get(path, "_not_found"))
        # The client stops reading on purpose in some tests (timeouts, size cap).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            handler(body)

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, payload: object, status: int = 200) -> None:
        self._send(status, json.dumps(payload).encode())

    def _search(self, body: bytes) -> None:
        query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
        self._json(_results_for(query))

    def _echo(self, body: bytes) -> None:
        self._json(
            {
                "method": self.command,
                "path": self.path,
                "headers": {name.lower(): value for name, value in self.headers.items()},
                "body": body.decode("utf-8"),
            }
        )

    def _empty(self, body: bytes) -> None:
        self._json({"took": 1, "hits": {"total": 0, "hits": []}})

    def _error500(self, body: bytes) -> None:
        self._json({"error": "index unavailable"}, status=500)

    def _error503(self, body: bytes) -> None:
        self._send(503, b"<html>Service Unavailable</html>", "text/html")

    def _forbidden(self, body: bytes) -> None:
        self._json({"error": "bad api key"}, status=403)

    def _not_found(self, body: bytes) -> None:
        self._send(404, b"no such page", "text/plain")

    def _slow(self, body: bytes) -> None:
        time.sleep(1.5)
        self._json(_results_for("slow"))

    def _trickle(self, body: bytes) -> None:
        # Each byte comes well within a read timeout, but the whole answer takes 3 s.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        for _ in range(30):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.1)
        self.wfile.write(b"{}")

    def _malformed(self, body: bytes) -> None:
        self._send(200, b'{"hits": {"hits": [{"_id": 1,, }]}}')

    def _html(self, body: bytes) -> None:
        self._send(200, b"<html><body>Search is down for maintenance</body></html>", "text/html")

    def _empty_body(self, body: bytes) -> None:
        self._send(200, b"")

    def _huge(self, body: bytes) -> None:
        self._send(200, b"[" + b"1," * (HUGE_SIZE // 2) + b"1]")

    def _huge_unannounced(self, body: bytes) -> None:
        # No Content-Length (HTTP/1.0, the body ends when the connection closes), so the
        # cap must be enforced while reading, not from the header.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b"1," * 32_768
        for _ in range(HUGE_SIZE // len(chunk) + 1):
            self.wfile.write(chunk)

    def _gzip_bomb(self, body: bytes) -> None:
        # A few kilobytes on the wire, megabytes once decompressed.
        payload = gzip.compress(b"[" + b"0," * HUGE_SIZE + b"0]")
        self._send(200, payload, Content_Encoding="gzip")

    def _latin1(self, body: bytes) -> None:
        self._send(
            200,
            '{"hits": [{"id": 1, "name": "Café"}]}'.encode("latin-1"),
            "application/json; charset=iso-8859-1",
        )

    def _redirect(self, body: bytes) -> None:
        self._send(
            302, b"", "text/plain", Location=f"http://127.0.0.1:{self.server.server_port}/search"
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow handler must not hold up the end of the test run
    seen: list[tuple[str, str]]


@pytest.fixture(scope="session")
def _running_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def search_server(_running_server: _Server) -> SearchServer:
    """The shared server, with the request log emptied for this test."""
    _running_server.seen.clear()
    port = _running_server.server_port
    return SearchServer(f"http://127.0.0.1:{port}", port, _running_server.seen)
