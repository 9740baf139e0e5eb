"""What the tests' local identity providers (oidc_provider.py, saml_provider.py) share:
a request handler that reads a bounded form body, routes GET and POST alike, and writes
an answer (status, body, content type, headers); and the small answers they build."""

from __future__ import annotations

import contextlib
import html
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

Answer = tuple[int, bytes, str, dict[str, str]]
HTML = "text/html; charset=utf-8"


class Refused(Exception):
    """An answer other than the happy one, raised from deep in a route."""

    def __init__(self, status: int, body: bytes, content_type: str, headers: dict[str, str]):
        super().__init__(status)
        self.answer = (status, body, content_type, headers)


class FormHandler(BaseHTTPRequestHandler):
    """Answers every GET and POST with `route(path, query, form)`. The server records
    each request (`record(method, path)`) and may wait `delay_seconds` first."""

    protocol_version = "HTTP/1.1"
    max_body_bytes = 64 * 1024

    def do_GET(self) -> None:
        self._answer()

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass

    def route(self, path: str, query: dict[str, str], form: dict[str, str]) -> Answer:
        raise NotImplementedError

    def _answer(self) -> None:
        parts = urlsplit(self.path)
        self.server.record(self.command, parts.path)  # type: ignore[attr-defined]
        delay = getattr(self.server, "delay_seconds", 0)
        if delay:
            time.sleep(delay)
        try:
            form = self._form()
            answer = self.route(parts.path, single_values(parts.query), form)
        except Refused as refused:
            answer = refused.answer
        except Exception as error:  # a test's bad script: say so rather than drop the line
            answer = 500, f"{type(error).__name__}: {error}".encode(), "text/plain", {}
        status, body, content_type, headers = answer
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

    def _form(self) -> dict[str, str]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise Refused(400, b"bad Content-Length", "text/plain", {}) from None
        if length > self.max_body_bytes or length < 0:
            # The body is left unread, so the connection cannot carry another request.
            self.close_connection = True
            raise Refused(413, b"request body too large", "text/plain", {})
        body = self.rfile.read(length) if length else b""
        return single_values(body.decode("utf-8", "replace"))


def page(status: int, title: str, message: str, extra_html: str = "") -> Answer:
    body = (
        f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p>"
        f"{extra_html}</body></html>"
    )
    return status, body.encode(), HTML, {}


def redirect(location: str) -> Answer:
    return 302, b"", "text/plain", {"Location": location}


def single_values(encoded: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(encoded, keep_blank_values=True).items()}
