"""A lean HTTP/1.1 load loop for benchmarks: one thread, non-blocking sockets, a selector.

The load generator shares the machine with the server it measures, so what it spends is
taken from the server: this loop costs about a tenth of a millisecond a request, a
quarter of what asyncio streams cost. Each request opens its own connection (gunicorn's
sync workers close every connection after one answer) and reads the answer whole, by
its Content-Length or to the end of the connection.

Use: subclass Traffic, give `first_request`, `next_request` and `answered`, call run().

By default each user sends its next request as soon as the last is answered (a closed
loop: the rate is whatever the server manages). A subclass that gives `due` paces its
users instead: a request is held until its due time, and the time `answered` receives is
that due time, not the moment it went out. A request sent late because the one before
was answered late is measured from when it was due, so a slow server's backlog shows in
the latencies (no coordinated omission).
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import selectors
import socket
import time
from dataclasses import dataclass, field


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    cookies: dict[str, str]
    body: bytes


@dataclass
class _Exchange:
    """One request in flight: its socket, what is left to send, what has come back."""

    user: int
    sock: socket.socket
    outgoing: bytes
    started: float  # when it was due: the moment it went out, unless paced
    incoming: bytearray = field(default_factory=bytearray)
    head_end: int = -1
    length: int | None = None


class Traffic:
    """Users that each send one request at a time, as soon as the last was answered."""

    def __init__(self, host: str, port: int, users: int, timeout_s: float) -> None:
        self.address = (host, port)
        self.users = users
        self.timeout_s = timeout_s
        self.selector = selectors.DefaultSelector()
        self.in_flight: dict[int, _Exchange] = {}
        self.held: list[tuple[float, int, bytes]] = []  # (due, user, request), a heap

    # What a subclass says -------------------------------------------------------------

    def first_request(self, user: int) -> bytes | None:
        raise NotImplementedError

    def next_request(self, user: int) -> bytes | None:
        """The user's next request (None: the user stops)."""
        raise NotImplementedError

    def answered(self, user: int, started: float, answer: Answer | None, problem: str) -> None:
        """An answer (None, with the problem, when there was none)."""
        raise NotImplementedError

    def due(self, user: int, now: float) -> float:
        """When the user's next request is due (now, or earlier: send it at once)."""
        return now

    def tick(self, now: float) -> None:
        """Called every turn of the loop (at least every 50 ms)."""

    # The loop -------------------------------------------------------------------------

    def run(self) -> None:
        clock = time.perf_counter
        for user in range(self.users):
            self._hold_or_send(user, self.first_request(user))
        while self.in_flight or self.held:
            wait = 0.05 if not self.held else min(0.05, max(0.0, self.held[0][0] - clock()))
            for key, _events in self.selector.select(wait):
                exchange: _Exchange = key.data
                if exchange.outgoing:
                    self._write(exchange)
                else:
                    self._read(exchange)
            now = clock()
            while self.held and self.held[0][0] <= now:
                due, user, request = heapq.heappop(self.held)
                self._send(user, request, due)
            self.tick(now)
            for exchange in list(self.in_flight.values()):
                if now - exchange.started > self.timeout_s:
                    self._finish(exchange, None, f"no answer in {self.timeout_s:.0f} s")

    def _hold_or_send(self, user: int, request: bytes | None) -> None:
        if request is None:
            return
        now = time.perf_counter()
        due = self.due(user, now)
        if due > now:
            heapq.heappush(self.held, (due, user, request))
        else:
            self._send(user, request, due)

    def _send(self, user: int, request: bytes, due: float) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        error = sock.connect_ex(self.address)
        exchange = _Exchange(user, sock, request, due)
        self.in_flight[user] = exchange
        if error not in (0, errno.EINPROGRESS):
            self._finish(exchange, None, f"connect: {errno.errorcode.get(error, error)}")
            return
        self.selector.register(sock, selectors.EVENT_WRITE, exchange)

    def _write(self, exchange: _Exchange) -> None:
        try:
            sent = exchange.sock.send(exchange.outgoing)
        except OSError as error:
            self._finish(exchange, None, f"send: {error!r}")
            return
        exchange.outgoing = exchange.outgoing[sent:]
        if not exchange.outgoing:
            self.selector.modify(exchange.sock, selectors.EVENT_READ, exchange)

    def _read(self, exchange: _Exchange) -> None:
        try:
            chunk = exchange.sock.recv(65536)
        except OSError as error:
            self._finish(exchange, None, f"receive: {error!r}")
            return
        incoming = exchange.incoming
        incoming += chunk
        if exchange.head_end < 0:
            exchange.head_end = incoming.find(b"\r\n\r\n")
            if exchange.head_end >= 0:
                exchange.length = _content_length(incoming[: exchange.head_end])
        complete = exchange.head_end >= 0 and (
            (
                exchange.length is not None
                and len(incoming) >= exchange.head_end + 4 + exchange.length
            )
            or (exchange.length is None and not chunk)
        )
        if complete:
            self._finish(exchange, _answer(bytes(incoming), exchange.head_end), "")
        elif not chunk:
            self._finish(exchange, None, "the server closed the connection mid-answer")

    def _finish(self, exchange: _Exchange, answer: Answer | None, problem: str) -> None:
        del self.in_flight[exchange.user]
        if exchange.sock.fileno() >= 0:
            with contextlib.suppress(KeyError, ValueError):  # never registered
                self.selector.unregister(exchange.sock)
            exchange.sock.close()
        self.answered(exchange.user, exchange.started, answer, problem)
        self._hold_or_send(exchange.user, self.next_request(exchange.user))


def _content_length(head: bytearray) -> int | None:
    position = head.lower().find(b"\r\ncontent-length:")
    if position < 0:
        return None
    end = head.find(b"\r\n", position + 2)
    return int(head[position + 17 : end if end >= 0 else None])


def _answer(raw: bytes, head_end: int) -> Answer:
    status, headers, cookies = parse_head(raw[:head_end])
    return Answer(status, headers, cookies, raw[head_end + 4 :])


def parse_head(head: bytes) -> tuple[int, dict[str, str], dict[str, str]]:
    """An answer's status, its headers (names in lower case) and the cookies it sets."""
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "set-cookie":
            key, _, rest = value.partition("=")
            cookies[key.strip()] = rest.partition(";")[0].strip()
        else:
            headers[name] = value
    return int(status_line.split(" ", 2)[1]), headers, cookies


def request_bytes(
    method: str, path: str, host: str, headers: dict[str, str], body: bytes = b""
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
