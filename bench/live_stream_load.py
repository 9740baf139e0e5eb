"""Open lead pages following the live stream, as static/js/live.js does with one: for
live_bench.py --mechanism stream.

Each page holds one server-sent-events connection to the stream process and asks its
live URL (with If-None-Match) when the stream opens, when it says "changed", and every
LIVE_BACKSTOP_MS, the pages' backstops spread evenly over that interval. One asyncio
loop runs them all: while nothing changes it sleeps, so it takes little from the server
it shares the machine with.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from http_load import parse_head, request_bytes

CHANGE_TIMEOUT_S = 30.0


class StreamPages:
    """The pages (live_bench.Page), their streams and their asks; the window's CPU slices
    (live_bench.Window) sampled on the way; then one change, timed to every page."""

    def __init__(
        self,
        *,
        pages: list[Any],
        host: str,
        web_port: int,
        cookie: str,
        backstop_s: float,
        window: Any,
        slice_s: float,
        cpu_sample: Callable[[], tuple[dict[str, Any], tuple[int, int]]],
        change: Callable[[], int],
    ) -> None:
        self.pages = pages
        self.host = host
        self.web_port = web_port
        self.cookie = cookie
        self.backstop_s = backstop_s
        self.window = window
        self.slice_s = slice_s
        self.cpu_sample = cpu_sample
        self.change = change
        self.graded_at: float | None = None
        self.expected_progress: int | None = None
        self.streams_opened = 0
        self.events = 0
        self.stream_errors: list[str] = []
        # asyncio keeps only a weak reference to a task: an ask nobody holds may be
        # collected half-way (one was: its page then never asked after its event).
        self.asks_in_flight: set[asyncio.Task[None]] = set()

    def run(self, progress_re: Any) -> None:
        self.progress_re = progress_re
        asyncio.run(self._run())

    async def _run(self) -> None:
        followers = [asyncio.create_task(self._follow(n)) for n in range(len(self.pages))]
        await self._sample_window()
        await self._change_and_wait()
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)

    async def _sample_window(self) -> None:
        slices = self.window.slices
        while True:
            boundary = self.window.start + self.slice_s * len(slices)
            if boundary > self.window.end + 1e-9:
                return
            await asyncio.sleep(max(0.0, boundary - time.perf_counter()))
            groups, busy = self.cpu_sample()
            slices.append((time.perf_counter(), groups, busy))

    async def _change_and_wait(self) -> None:
        loop = asyncio.get_running_loop()
        self.graded_at = time.perf_counter()  # from just before the grade is written
        self.expected_progress = await loop.run_in_executor(None, self.change)
        deadline = self.graded_at + CHANGE_TIMEOUT_S
        while time.perf_counter() < deadline and any(
            page.first_change_at is None for page in self.pages
        ):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # let answers in flight land
        # Each page asks once more: nothing changed since, so each should get 304.
        await asyncio.gather(*(self._ask(page) for page in self.pages))

    # --- one page -----------------------------------------------------------------------

    async def _follow(self, number: int) -> None:
        page = self.pages[number]
        backstop = asyncio.create_task(self._backstop(page, number))
        try:
            await self._read_stream(page)
        except (OSError, asyncio.IncompleteReadError, ValueError) as error:
            self.stream_errors.append(f"{page.kind}: {error!r}")
        finally:
            backstop.cancel()

    async def _backstop(self, page: Any, number: int) -> None:
        await asyncio.sleep(self.backstop_s * number / len(self.pages))
        while True:
            await self._ask(page)
            await asyncio.sleep(self.backstop_s)

    async def _read_stream(self, page: Any) -> None:
        stream = urlsplit(page.stream_url)
        reader, writer = await asyncio.open_connection(stream.hostname, stream.port)
        path = f"{stream.path}?{stream.query}"
        writer.write(request_bytes("GET", path, stream.netloc, {"Accept": "text/event-stream"}))
        head = await reader.readuntil(b"\r\n\r\n")
        status, headers, _cookies = parse_head(head[:-4])
        if status != 200 or headers.get("transfer-encoding") != "chunked":
            raise ValueError(f"stream answered {status} {headers}")
        self.streams_opened += 1
        await self._ask(page)  # live.js asks when its stream opens
        text = ""
        try:
            while True:
                size = int((await reader.readline()).strip(), 16)
                if size == 0:
                    raise ValueError("the stream ended")
                text += (await reader.readexactly(size + 2))[:-2].decode()
                while "\n\n" in text:
                    event, text = text.split("\n\n", 1)
                    if "event: changed" in event:
                        self.events += 1
                        ask = asyncio.create_task(self._ask(page))
                        self.asks_in_flight.add(ask)
                        ask.add_done_callback(self.asks_in_flight.discard)
        finally:
            writer.close()

    async def _ask(self, page: Any) -> None:
        started = time.perf_counter()
        headers = {"Cookie": self.cookie, "If-None-Match": page.etag, "Connection": "close"}
        status = 0
        body = b""
        try:
            reader, writer = await asyncio.open_connection(self.host, self.web_port)
            writer.write(
                request_bytes("GET", page.live_url, f"{self.host}:{self.web_port}", headers)
            )
            answer = await reader.read()
            writer.close()
            head, _, body = answer.partition(b"\r\n\r\n")
            status, answer_headers, _cookies = parse_head(head)
            if status == 200:
                page.etag = answer_headers.get("etag", "")
        except OSError as error:
            page.errors.append(repr(error))
        finished = time.perf_counter()
        page.samples.append((finished, (finished - started) * 1000.0, status))
        if status not in (200, 304):
            page.errors.append(f"HTTP {status}")
        if self.graded_at is None or started < self.graded_at:
            return
        if status == 200 and page.first_change_at is None:
            page.first_change_at = finished
            shown = self.progress_re.search(body)
            page.change_progress = int(shown.group(1)) if shown else None
        elif status == 304 and page.first_change_at is not None:
            page.back_to_304 = True
