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

It also speaks both providers' batch interfaces: OpenAI's files (upload, content) and
batches (create, retrieve, cancel), Anthropic's message batches (create, retrieve,
results, cancel). A batch answers each of its calls as the synchronous script would
(or as server.batch_script's `answer` says: a Reply, or None for a call the provider
never ran), once it has been polled `polls` times while still running; `end` is how an
OpenAI batch ends ("completed", "expired"; "failed" refuses it whole with `refuse`).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
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


@dataclass
class BatchScript:
    """How the next batches go (see the module's docstring)."""

    polls: int = 0
    end: str = "completed"
    refuse: str = ""
    answer: Callable[[str, dict[str, Any]], Reply | None] | None = None
    error: Reply | None = None  # what every batch endpoint answers instead (a 401, a 503)


@dataclass
class FakeBatch:
    id: str
    protocol: str  # "openai" or "anthropic"
    calls: list[tuple[str, dict[str, Any]]]  # custom_id, the call's body or params
    script: BatchScript
    polls_left: int
    status: str
    cancelled: bool = False
    output_file_id: str = ""
    error_file_id: str = ""
    results: str = ""  # Anthropic's JSON Lines once it ended

    def ended(self) -> bool:
        return self.status in ("completed", "failed", "expired", "cancelled", "ended")


ANTHROPIC_ERRORS = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error"}


class FakeProvider:
    def __init__(self) -> None:
        self.replies: list[Reply] = [Reply.openai("{}")]
        self.responder: Callable[[Seen], Reply] | None = None
        self.requests: list[Seen] = []
        self.batch = BatchScript()
        self.batches: dict[str, FakeBatch] = {}
        self.files: dict[str, str] = {}
        self.numbers = itertools.count(1)
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
            self.batch = BatchScript()

    def batch_script(
        self,
        *,
        polls: int = 0,
        end: str = "completed",
        refuse: str = "",
        answer: Callable[[str, dict[str, Any]], Reply | None] | None = None,
        error: Reply | None = None,
    ) -> None:
        with self.lock:
            self.batch = BatchScript(polls, end, refuse, answer, error)

    def batch_calls(self, path_prefix: str) -> list[Seen]:
        """The requests made to a batch endpoint (by the start of its path)."""
        return [seen for seen in self.requests if seen.path.startswith(path_prefix)]

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
            if seen.path.startswith(("/v1/files", "/v1/batches", "/v1/messages/batches")):
                return self._batch_endpoint(seen)
            return self._reply_for(seen)

    def _reply_for(self, seen: Seen) -> Reply:
        if self.responder is not None:
            return self.responder(seen)
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    # --- The batch interfaces (called holding the lock) --------------------------------

    def _batch_endpoint(self, seen: Seen) -> Reply:
        if self.batch.error is not None:
            return self.batch.error
        path, method = seen.path.split("?")[0], seen.headers.get(":method", "POST")
        if path == "/v1/files" and method == "POST":
            file_id = f"file-{next(self.numbers)}"
            self.files[file_id] = _uploaded_file(seen)
            return _json(
                {
                    "id": file_id,
                    "object": "file",
                    "bytes": len(self.files[file_id]),
                    "created_at": 0,
                    "filename": "batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                }
            )
        if match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            return Reply(body=self.files.get(match[1], ""))
        if path == "/v1/batches" and method == "POST":
            calls = [
                json.loads(line) for line in self.files[seen.body["input_file_id"]].splitlines()
            ]
            batch = self._new_batch("openai", [(c["custom_id"], c["body"]) for c in calls])
            return _json(self._openai_batch(batch))
        if path == "/v1/messages/batches" and method == "POST":
            calls = [(r["custom_id"], r["params"]) for r in seen.body["requests"]]
            batch = self._new_batch("anthropic", calls)
            return _json(self._anthropic_batch(batch))
        match = re.fullmatch(r"/v1(/messages)?/batches/([\w-]+)(/cancel|/results)?", path)
        if match is None or match[2] not in self.batches:
            return Reply.error(404, "no such batch")
        batch = self.batches[match[2]]
        if match[3] == "/cancel":
            batch.cancelled = True
            batch.status = "cancelling" if batch.protocol == "openai" else "canceling"
        elif match[3] == "/results":
            return Reply(body=batch.results, headers={"content-type": "application/x-jsonl"})
        else:
            self._advance(batch)
        if batch.protocol == "openai":
            return _json(self._openai_batch(batch))
        return _json(self._anthropic_batch(batch))

    def _new_batch(self, protocol: str, calls: list[tuple[str, dict[str, Any]]]) -> FakeBatch:
        prefix = "batch" if protocol == "openai" else "msgbatch"
        number = next(self.numbers)
        status = "validating" if protocol == "openai" else "in_progress"
        batch = FakeBatch(
            f"{prefix}_{number}", protocol, calls, self.batch, self.batch.polls, status
        )
        self.batches[batch.id] = batch
        return batch

    def _advance(self, batch: FakeBatch) -> None:
        """A retrieve: still running while polls are left, then ended with its answers."""
        if batch.ended():
            return
        if batch.cancelled:
            self._end(batch, cancelled=True)
        elif batch.polls_left > 0:
            batch.polls_left -= 1
            batch.status = "in_progress"
        else:
            self._end(batch, cancelled=False)

    def _answer(self, batch: FakeBatch, custom_id: str, body: dict[str, Any]) -> Reply | None:
        if batch.script.answer is not None:
            return batch.script.answer(custom_id, body)
        path = "/v1/chat/completions" if batch.protocol == "openai" else "/v1/messages"
        return self._reply_for(Seen(path, {}, body))

    def _end(self, batch: FakeBatch, *, cancelled: bool) -> None:
        if batch.protocol == "anthropic":
            lines = []
            for custom_id, params in batch.calls:
                reply = None if cancelled else self._answer(batch, custom_id, params)
                lines.append(
                    json.dumps(
                        {"custom_id": custom_id, "result": _anthropic_result(reply, cancelled)}
                    )
                )
            batch.results = "".join(line + "\n" for line in lines)
            batch.status = "ended"
            return
        if batch.script.refuse and not cancelled:
            batch.status = "failed"
            return
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for custom_id, body in batch.calls:
            reply = None if cancelled else self._answer(batch, custom_id, body)
            if reply is None:
                code = "batch_cancelled" if cancelled else "batch_expired"
                errors.append(
                    {
                        "custom_id": custom_id,
                        "response": None,
                        "error": {"code": code, "message": "not run"},
                    }
                )
                continue
            line = {
                "id": f"batch_req_{next(self.numbers)}",
                "custom_id": custom_id,
                "response": {
                    "status_code": reply.status,
                    "request_id": "req",
                    "body": json.loads(reply.body),
                },
                "error": None,
            }
            (output if reply.status == 200 else errors).append(line)
        for kept, name in ((output, "output_file_id"), (errors, "error_file_id")):
            if kept:
                file_id = f"file-{next(self.numbers)}"
                self.files[file_id] = "".join(json.dumps(line) + "\n" for line in kept)
                setattr(batch, name, file_id)
        batch.status = "cancelled" if cancelled else batch.script.end

    def _openai_batch(self, batch: FakeBatch) -> dict[str, Any]:
        errors = None
        if batch.status == "failed":
            errors = {
                "object": "list",
                "data": [{"code": "invalid", "message": batch.script.refuse}],
            }
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": "file-in",
            "completion_window": "24h",
            "created_at": 0,
            "status": batch.status,
            "output_file_id": batch.output_file_id or None,
            "error_file_id": batch.error_file_id or None,
            "errors": errors,
        }

    def _anthropic_batch(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": 0 if ended else len(batch.calls),
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T01:00:00Z" if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.base}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._answer(Seen(self.path, {**headers, ":method": "GET"}, None))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = (
                        raw
                        if "multipart" in headers.get("content-type", "")
                        else raw.decode("utf-8", "replace")
                    )
                self._answer(Seen(self.path, {**headers, ":method": "POST"}, body))

            def _answer(self, seen: Seen) -> None:
                reply = fake._next(seen)
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


def _json(value: dict[str, Any]) -> Reply:
    return Reply(body=json.dumps(value))


def _uploaded_file(seen: Seen) -> str:
    """The file of a multipart upload (OpenAI's POST /files)."""
    head = f"Content-Type: {seen.headers['content-type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + seen.body)
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        if part.get_filename() and isinstance(payload, bytes):
            return payload.decode("utf-8")
    return ""


def _anthropic_result(reply: Reply | None, cancelled: bool) -> dict[str, Any]:
    if reply is None:
        return {"type": "canceled" if cancelled else "expired"}
    if reply.status == 200:
        return {"type": "succeeded", "message": json.loads(reply.body)}
    said = json.loads(reply.body).get("error", {}).get("message", "error")
    kind = ANTHROPIC_ERRORS.get(reply.status, "invalid_request_error")
    return {"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": said}}}
