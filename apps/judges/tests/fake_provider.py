"""A real local HTTP server that speaks the OpenAI chat-completions and the Anthropic
messages protocols, answering from a script: for the tests of the real SDK clients.

    with FakeProvider() as server:
        server.script(Reply.openai('{"judgements": []}'), Reply(status=429, headers=...))
        ... call server.openai_url or server.anthropic_url ...
        server.requests  # what each call sent (path, headers, JSON body)

Each request takes the next scripted reply (the last one repeats); a reply may wait
`delay_s` first, and its `body` may be any text (malformed JSON, a truncated answer).
Or a `responder` answers each request from what it asked (server.respond_with(f), f
taking the Seen request and returning a Reply).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @classmethod
    def openai(
        cls,
        content: str,
        *,
        finish_reason: str = "stop",
        tokens: tuple[int, int] = (120, 30),
        cached: int = 0,
    ) -> Reply:
        return cls(
            body=json.dumps(
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "test-model",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": finish_reason,
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": tokens[0],
                        "completion_tokens": tokens[1],
                        "total_tokens": sum(tokens),
                        "prompt_tokens_details": {"cached_tokens": cached},
                    },
                }
            )
        )

    @classmethod
    def anthropic(
        cls,
        text: str,
        *,
        stop_reason: str = "end_turn",
        tokens: tuple[int, int] = (120, 30),
        cache_read: int = 0,
    ) -> Reply:
        return cls(
            body=json.dumps(
                {
                    "id": "msg_test",
                    "type": "message",
                    "role": "assistant",
                    "model": "test-model",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": tokens[0],
                        "output_tokens": tokens[1],
                        "cache_read_input_tokens": cache_read,
                    },
                }
            )
        )

    @classmethod
    def error(cls, status: int, message: str = "error", **headers: str) -> Reply:
        body = json.dumps({"error": {"type": "error", "message": message}})
        return cls(status=status, body=body, headers=dict(headers))


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class FakeProvider:
    def __init__(self) -> None:
        self.replies: list[Reply] = [Reply.openai("{}")]
        self.responder: Callable[[Seen], Reply] | None = None
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.base

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies = list(replies)
            self.responder = None
            self.requests = []

    def respond_with(self, responder: Callable[[Seen], Reply]) -> None:
        with self.lock:
            self.responder = responder
            self.requests = []

    def __enter__(self) -> FakeProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self, seen: Seen) -> Reply:
        with self.lock:
            self.requests.append(seen)
            if self.responder is not None:
                return self.responder(seen)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                reply = fake._next(
                    Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.body.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: object) -> None:
                pass

        return Handler
