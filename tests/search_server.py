"""A real search system on 127.0.0.1 for tests and benchmarks of search endpoints.

It answers like a small Elasticsearch-style API:

- ``/search?q=<keyword>``: ``{"hits": {"hits": [{"_id", "_source": {"title", "img",
  "price"}}...]}}`` with ``results`` documents (default 5) whose ids depend on the keyword,
  so two runs of one keyword give the same results and two keywords differ;
- ``/search`` also answers POST/PUT and then reads the keyword from a JSON body
  ``{"query": ...}`` or a form body ``q=...``;
- ``/tuned?q=<keyword>&boost=<number>``: ``results`` of the keyword's ``pool`` documents
  (default 10), ranked by a score that weighs relevance by ``boost`` against popularity
  (tuned_documents): boost 3 ranks them best first, boost 1 worst first, so a try that
  turns the knob moves the ranking as a real engine's boost would;
- ``/error500``, ``/malformed``, ``/empty``, ``/html``: the failures their names say;
- ``/flaky?q=``: a 500 for the first ``fail_first`` calls of each keyword, then results;
- ``/slow``: results after ``slow_seconds``;
- every answer waits ``delay_seconds`` first (a benchmark sets it to 0.05);
- ``/stats``: requests so far, the most in flight at once, and when the first search
  request came and the last answer was written, by the wall clock (for a server run in
  another process).

It counts requests and the most requests it had in flight at once, so tests can check
retries and bounded concurrency.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def documents_for(keyword: str, count: int) -> list[dict[str, object]]:
    stem = hashlib.sha1(keyword.encode()).hexdigest()[:8]
    return [
        {
            "_id": f"{stem}-{rank}",
            "_source": {
                "title": f"{keyword} result {rank}",
                "img": f"https://img.example.com/{stem}/{rank}.png",
                "price": rank * 10,
            },
        }
        for rank in range(1, count + 1)
    ]


def tuned_documents(keyword: str, boost: float, pool: int, count: int) -> list[dict[str, object]]:
    """Document r (1 = most relevant) scores boost * (pool - r) + 2 * r: relevance
    against a popularity that favours the least relevant. Ties keep the id order."""
    documents = documents_for(keyword, pool)
    ranked = sorted(
        enumerate(documents, 1),
        key=lambda item: (-(boost * (pool - item[0]) + 2 * item[0]), item[0]),
    )
    return [document for _rank, document in ranked[:count]]


class SearchServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many graders' worth of connections arrive at once in the benchmark.
    request_queue_size = 256

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.results = 5
        self.pool = 10  # /tuned's documents per keyword
        self.delay_seconds = 0.0
        self.slow_seconds = 2.0
        self.fail_first = 1
        self.calls: Counter[str] = Counter()  # path -> requests
        self.keyword_calls: Counter[str] = Counter()  # keyword -> requests
        self.in_flight = 0
        self.most_in_flight = 0
        # By time.time(), /stats aside: when the first request came, the last answer went.
        self.first_request_at: float | None = None
        self.last_answer_at: float | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> SearchServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def enter(self, path: str, keyword: str) -> int:
        with self._lock:
            self.calls[path] += 1
            self.keyword_calls[keyword] += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            if self.first_request_at is None and path != "/stats":
                self.first_request_at = time.time()
            return self.keyword_calls[keyword]

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def answered(self) -> None:
        with self._lock:
            self.last_answer_at = max(self.last_answer_at or 0.0, time.time())


class _Handler(BaseHTTPRequestHandler):
    server: SearchServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer()

    do_POST = do_GET
    do_PUT = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        keyword = _keyword(parts.query, body, self.headers.get("Content-Type", ""))
        call = self.server.enter(parts.path, keyword)
        try:
            if self.server.delay_seconds:
                time.sleep(self.server.delay_seconds)
            status, payload, content_type = self._route(parts.path, keyword, call)
        finally:
            # Counted out before the answer is written: once the client has it, it may
            # send its next request before this thread would get round to it.
            self.server.leave()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        if parts.path != "/stats":  # asking for the figures is no answer of the search
            self.server.answered()

    def _route(self, path: str, keyword: str, call: int) -> tuple[int, bytes, str]:
        if path == "/tuned":
            boost = float(parse_qs(urlsplit(self.path).query).get("boost", ["1"])[0])
            hits = tuned_documents(keyword, boost, self.server.pool, self.server.results)
            return 200, json.dumps({"hits": {"hits": hits}}).encode(), JSON
        found = json.dumps(
            {
                "hits": {
                    "total": self.server.results,
                    "hits": documents_for(keyword, self.server.results),
                }
            }
        ).encode()
        if path == "/search":
            return 200, found, JSON
        if path == "/flaky":
            failing = call <= self.server.fail_first
            return (500, b'{"error": "try again"}', JSON) if failing else (200, found, JSON)
        if path == "/slow":
            time.sleep(self.server.slow_seconds)
            return 200, found, JSON
        if path == "/stats":
            stats = {
                "requests": sum(self.server.calls.values()),
                "most_in_flight": self.server.most_in_flight,
                "first_request_at": self.server.first_request_at,
                "last_answer_at": self.server.last_answer_at,
            }
            return 200, json.dumps(stats).encode(), JSON
        return FIXED_ANSWERS.get(path, (404, b"no such page", "text/plain"))


JSON = "application/json"
FIXED_ANSWERS = {
    "/error500": (500, b'{"error": "index unavailable"}', JSON),
    "/malformed": (200, b'{"hits": {"hits": [{"_id": 1,, }]}}', JSON),
    "/empty": (200, b'{"hits": {"total": 0, "hits": []}}', JSON),
    "/html": (200, b"<html>down for maintenance</html>", "text/html"),
    # Hostile answers: nesting no parser should follow, and images no page should show.
    "/deep": (200, b'{"hits": ' + b"[" * 5_000 + b"]" * 5_000 + b"}", JSON),
    "/script-images": (
        200,
        json.dumps(
            {
                "hits": {
                    "hits": [
                        {"_id": "a", "_source": {"title": "A", "img": "javascript:alert(1)"}},
                        {"_id": "b", "_source": {"title": "B", "img": "https://img.example/b"}},
                    ]
                }
            }
        ).encode(),
        JSON,
    ),
}


def _keyword(query: str, body: bytes, content_type: str) -> str:
    if "q" in parse_qs(query):
        return parse_qs(query)["q"][0]
    if body and "json" in content_type:
        with contextlib.suppress(ValueError, AttributeError):
            return str(json.loads(body).get("query", ""))
    if body:
        return parse_qs(body.decode()).get("q", [""])[0]
    return ""


# The response mapper that fits this server's answers.
MAPPER = {
    "results": "hits.hits[*]",
    "id": "_id",
    "name": "_source.title",
    "image": "_source.img",
    "attributes": {"price": "_source.price"},
}
