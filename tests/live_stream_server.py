"""The live pages' event stream (apps/core/live_stream.py) served by a real uvicorn in a
thread, on a free port, and a client that reads its events as a browser's EventSource
does: for tests."""

from __future__ import annotations

import select
import socket
import threading
import time
import uuid

import uvicorn

from apps.core.live import topic_of_stream_token
from apps.core.live_stream import STREAM_PATH, ChangeFeed, LiveStream
from tests.redis_server import free_port


class StreamServer:
    """`with StreamServer(redis_url) as server:` serves the stream at server.url, hearing
    changes on a channel of its own (server.channel)."""

    def __init__(self, redis_url: str, *, max_connections: int = 100) -> None:
        self.port = free_port()
        self.channel = f"relevo-live-test:{uuid.uuid4().hex}"
        self.feed = ChangeFeed(redis_url, self.channel)
        application = LiveStream(
            feed=self.feed,
            topic_of_token=topic_of_stream_token,
            max_connections=max_connections,
        )
        config = uvicorn.Config(
            application, host="127.0.0.1", port=self.port, lifespan="on", log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{STREAM_PATH}"

    def __enter__(self) -> StreamServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not (self.server.started and self.feed.subscribed.is_set()):
            if time.monotonic() > deadline:
                raise RuntimeError("the live stream did not start and subscribe")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class EventReader:
    """One open stream, read as a browser's EventSource does: `next_event()` gives the
    next event's name and data, ("comment", text) for a comment line, ("timeout", "") when
    nothing came in time and ("closed", "") when the stream ended.

    A plain socket with its own reading of the chunked body: a socket timeout leaves
    http.client's response unreadable, and waiting with a timeout is the point here."""

    def __init__(self, port: int, query: str) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.socket.sendall(
            f"GET {STREAM_PATH}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
        self.raw = b""
        self.text = ""  # the body read so far, chunk framing removed, lines not yet taken
        self.ended = False
        while b"\r\n\r\n" not in self.raw:
            self._receive(time.monotonic() + 5)
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {
            name.strip().lower(): value.strip()
            for name, value in (line.split(":", 1) for line in lines[1:])
        }
        self.chunked = self.headers.get("transfer-encoding") == "chunked"
        self._unchunk()

    def _receive(self, deadline: float) -> bool:
        """Read what the server sent before the deadline; False if nothing came."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.socket], [], [], left)[0]:
            return False
        data = self.socket.recv(65536)
        if not data:
            self.ended = True
        self.raw += data
        return True

    def _unchunk(self) -> None:
        if not self.chunked:
            self.text += self.raw.decode()
            self.raw = b""
            return
        while b"\r\n" in self.raw:
            size_line, rest = self.raw.split(b"\r\n", 1)
            size = int(size_line, 16)
            if size == 0:
                self.ended = True
                self.raw = b""
                return
            if len(rest) < size + 2:
                return
            self.text += rest[:size].decode()
            self.raw = rest[size + 2 :]

    def _line(self, deadline: float) -> str | None:
        while "\n" not in self.text:
            if self.ended or not self._receive(deadline):
                return None
            self._unchunk()
        line, self.text = self.text.split("\n", 1)
        return line

    def next_event(self, timeout: float = 5.0) -> tuple[str, str]:
        deadline = time.monotonic() + timeout
        name, data = "message", ""
        while True:
            line = self._line(deadline)
            if line is None:
                return ("closed", "") if self.ended else ("timeout", "")
            if line == "":
                if data:
                    return name, data
            elif line.startswith(":"):
                return "comment", line[1:].strip()
            elif line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]

    def body(self) -> str:
        """A refusal's text (it comes whole, with its length)."""
        length = int(self.headers.get("content-length", "0"))
        while len(self.text.encode()) < length and self._receive(time.monotonic() + 5):
            self._unchunk()
        return self.text

    def close(self) -> None:
        self.socket.close()
