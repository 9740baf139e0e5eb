"""Live pages' event stream: "your topic changed", pushed, so a still page costs nothing.

An ASGI application of its own (config/live_asgi.py, served by uvicorn): each page holds
one server-sent-events connection, written to only when its topic changes (heard on
Redis by one subscription per process, `ChangeFeed`) and with a comment line every
KEEPALIVE_SECONDS. It carries no content, opens no database connection and runs no view.
Who may listen, the limits and why: docs/lead-pages.md, "Live pages".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from redis import asyncio as aioredis

logger = logging.getLogger(__name__)

STREAM_PATH = "/live/stream/"
KEEPALIVE_SECONDS = 25.0
MAX_STREAM_SECONDS = 3600.0
MAX_QUERY_BYTES = 512
# How long the browser waits before opening a closed stream again (the SSE "retry" field).
RECONNECT_MS = 3000
RESUBSCRIBE_SECONDS = (0.5, 1.0, 2.0, 5.0)  # waits after the subscription fails, in turn

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
TopicOfToken = Callable[[str], str | None]


class ChangeFeed:
    """The streams open in this process, by topic, and the one Redis subscription that
    wakes them."""

    def __init__(self, redis_url: str, channel: str) -> None:
        self.redis_url = redis_url
        self.channel = channel
        self.listeners: dict[str, set[asyncio.Event]] = defaultdict(set)
        self.count = 0
        self.subscribed = asyncio.Event()  # set while the subscription is up (for tests)
        self._task: asyncio.Task[None] | None = None

    def listen(self, topic: str) -> asyncio.Event:
        wake = asyncio.Event()
        self.listeners[topic].add(wake)
        self.count += 1
        return wake

    def stop_listening(self, topic: str, wake: asyncio.Event) -> None:
        self.listeners[topic].discard(wake)
        if not self.listeners[topic]:
            del self.listeners[topic]
        self.count -= 1

    def wake(self, topic: str) -> None:
        for wake in self.listeners.get(topic, ()):
            wake.set()

    def wake_all(self) -> None:
        for listeners in self.listeners.values():
            for wake in listeners:
                wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _follow(self) -> None:
        """Subscribe and wake listeners, for ever; after a failure subscribe again."""
        failures = 0
        while True:
            client = aioredis.Redis.from_url(self.redis_url, socket_connect_timeout=2)
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(self.channel)
                    if failures:
                        logger.warning("live stream: subscribed again after %d tries", failures)
                        self.wake_all()  # changes made meanwhile were not heard
                    failures = 0
                    self.subscribed.set()
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            self.wake(_text(message.get("data")))
            except (OSError, aioredis.RedisError) as error:
                self.subscribed.clear()
                wait = RESUBSCRIBE_SECONDS[min(failures, len(RESUBSCRIBE_SECONDS) - 1)]
                failures += 1
                logger.warning(
                    "live stream: Redis subscription lost (%s); again in %g s", error, wait
                )
                await asyncio.sleep(wait)
            finally:
                await client.aclose()


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)


class LiveStream:
    """The ASGI application: GET STREAM_PATH?t=<token> opens a topic's event stream."""

    def __init__(
        self,
        *,
        feed: ChangeFeed,
        topic_of_token: TopicOfToken,
        max_connections: int,
        allowed_origin: str = "*",
    ) -> None:
        self.feed = feed
        self.topic_of_token = topic_of_token
        self.max_connections = max_connections
        self.allowed_origin = allowed_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.feed.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.feed.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        token, refusal = self._token(scope)
        topic = self.topic_of_token(token) if token is not None else None
        if refusal is None and topic is None:
            refusal = 403, "This stream's token is not valid (or too old)."
        if refusal is None and self.feed.count >= self.max_connections:
            refusal = 503, "Too many live pages open here; the page asks instead."
        if refusal is not None:
            await self._plain(send, *refusal)
            return
        assert topic is not None
        wake = self.feed.listen(topic)
        try:
            await self._stream(topic, wake, receive, send)
        except OSError:
            pass  # the browser went away mid-write
        finally:
            self.feed.stop_listening(topic, wake)

    @staticmethod
    def _token(scope: Scope) -> tuple[str | None, tuple[int, str] | None]:
        """The token the URL gives, or why the request is refused before it is read."""
        if scope["path"] != STREAM_PATH:
            return None, (404, "No such page.")
        if scope["method"] != "GET":
            return None, (405, "Only GET opens a stream.")
        query = scope["query_string"]
        if len(query) > MAX_QUERY_BYTES:
            return None, (400, f"The query string is over {MAX_QUERY_BYTES} bytes.")
        try:
            tokens = parse_qs(query.decode("ascii")).get("t", [])
        except UnicodeDecodeError:
            return None, (400, "The query string is not ASCII.")
        if len(tokens) != 1:
            return None, (400, "Give one token: ?t=<token>.")
        return tokens[0], None

    async def _stream(self, topic: str, wake: asyncio.Event, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": self._headers(b"text/event-stream")
                + [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")],
            }
        )
        await self._write(send, f"retry: {RECONNECT_MS}\n: {topic}\n\n")
        gone = asyncio.create_task(_disconnected(receive))
        closes_at = time.monotonic() + MAX_STREAM_SECONDS
        try:
            while not gone.done():
                left = closes_at - time.monotonic()
                if left <= 0:
                    break
                woken = asyncio.create_task(wake.wait())
                await asyncio.wait(
                    {woken, gone},
                    timeout=min(KEEPALIVE_SECONDS, left),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                woken.cancel()
                if gone.done():
                    break
                if wake.is_set():
                    wake.clear()
                    await self._write(send, f"event: changed\ndata: {topic}\n\n")
                elif time.monotonic() < closes_at:
                    await self._write(send, ": still here\n\n")
            if not gone.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()

    @staticmethod
    async def _write(send: Send, text: str) -> None:
        await send({"type": "http.response.body", "body": text.encode(), "more_body": True})

    def _headers(self, content_type: bytes) -> list[tuple[bytes, bytes]]:
        # The page and this stream may be on different origins (another port or host):
        # the token is the permission, no cookie is sent, so any origin may read.
        return [
            (b"content-type", content_type),
            (b"access-control-allow-origin", self.allowed_origin.encode()),
        ]

    async def _plain(self, send: Send, status: int, text: str) -> None:
        body = text.encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": self._headers(b"text/plain; charset=utf-8")
                + [(b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
