"""A real webhook receiver on 127.0.0.1 for tests: it checks each delivery's signature
as a team's receiver would (HMAC-SHA256 over the bytes read, with the secret it was
given), answers 500 to the first `fail_first` requests and 200 after, and keeps what it
received."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from apps.notifications.signing import signature_matches


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    signed_right: bool
    answered: int

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class WebhookReceiver(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, fail_first: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_first = fail_first
        self.secret = ""
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/relevo?token=abc"

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def delivered(self) -> list[Received]:
        """The requests answered 200."""
        with self.lock:
            return [r for r in self.received if r.answered == 200]


class _Handler(BaseHTTPRequestHandler):
    server: WebhookReceiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        header = self.headers.get("X-Relevo-Signature", "")
        with self.server.lock:
            failing = len(self.server.received) < self.server.fail_first
            answer = 500 if failing else 200
            signed_right = signature_matches(self.server.secret, body, header)
            if not signed_right:
                answer = 401  # what a receiver does with a body it cannot trust
            self.server.received.append(
                Received(dict(self.headers.items()), body, signed_right, answer)
            )
        self.send_response(answer)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:  # quiet in tests
        pass
