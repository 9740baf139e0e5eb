"""Live pages at rest: what 200 open lead pages cost the server while nothing changes.

Run: .venv/bin/python bench/live_bench.py [--mechanism stream|poll] [--pages 200]
        [--seconds 120] [--warmup 15]

Target: 200 open lead pages cost the server under 5 % of one core
while nothing changes, and a change reaches every page within 2 s.

Two mechanisms, as deployed:
- stream (the default, what docker-compose.yml runs): each page holds a server-sent-events
  connection to the live stream (uvicorn config.live_asgi:application, a process of its
  own) and asks its live URL when the stream opens, when it says "changed", and every
  LIVE_BACKSTOP_MS (30 s), the pages spread evenly (bench/live_stream_load.py). The
  server's figure is the web processes and the stream process together.
- poll (no stream: `make run` without Redis): each page asks every LIVE_POLL_MS (1.5 s).

As deployed: gunicorn with config/gunicorn.conf.py (its sync workers, DEBUG off), a
Celery worker (prefork, 2 processes) and beat, PostgreSQL with the bench's own database
(relevo_bench_live, dropped and created afresh), and Redis databases of the bench's own:
the broker in db 6, the shared cache (where the live versions are) in db 7, the
throttles in db 8. The bench refuses to start unless the three are empty, and at the end
deletes the keys the run left in them (nothing else there, since they were empty).

Data: a team (a lead, three graders), one active evaluation of 200 keywords x 10 results
x 3 slots, graded scale, about 60 % graded at random (so results whose grades differ by 2
or more are in the disagreement queue), scored, pinned with its nDCG@10, so the
dashboard shows it.

The lead logs in once over HTTP; the simulated pages share that session (the 304 path
reads no session, so sharing one changes nothing it measures). The pages are a third
evaluation pages, a third dashboards and a third disagreement queues. Each loads its
page over HTTP, reads data-live-url, data-live-etag (and data-live-stream) from it as
static/js/live.js does. Polling, it then asks the live URL every LIVE_POLL_MS with
If-None-Match, the pages spread evenly over the interval, on a single-threaded socket
loop (http_load.py). A 200 gives the page the answer's ETag, as live.js takes it.

Measured over the window after the warm-up: CPU seconds (user + system, from /proc) of
the gunicorn master and workers, the Celery worker and beat, Redis (shared with any other
work), the load generator and the whole machine (PostgreSQL is left out: the 304s never
reach it, and its backends that end in the window, a task's connection, would take their
CPU with them); the answers by status, requests/s and latency (counted from when each request
fell due). The web CPU is also shown per 10 s slice.

A live version expires VERSION_SECONDS (600 s) after it was set (apps/core/live.py), so
every topic's pages get one full answer per 600 s even while nothing changes (each
page's next ask after it). Pass --seconds 600 to hold one in the window; its 200s are
counted and shown apart from errors.

Then, in the same run, a change: the lead grades one open result (the grading service,
as the evaluation page's grade control does). The pipeline (the real worker, after its
gather delay) stores the new metrics and renews the topics; the bench prints when each
page's first 200 came after the grade, checks that the evaluation pages' and dashboards'
answers show the new progress, and that every page is back to 304 afterwards.
"""

from __future__ import annotations

import argparse
import html
import http.client
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import benchkit

# grading_http_bench points benchkit at its own database when imported; use_database
# below points it at this bench's.
import grading_http_bench as http_bench
import redis
from benchkit import Shape, analyze, build_evaluation, percentile, progress_note, verdict
from http_load import Answer, Traffic, parse_head, request_bytes
from live_stream_load import StreamPages

benchkit.use_database("relevo_bench_live")
# Pub/sub channels are one namespace for the whole Redis: the bench's is its own.
LIVE_CHANNEL = f"relevo-live-bench:{os.getpid()}"
BROKER_URL = "redis://127.0.0.1:6379/6"
CACHE_URL = "redis://127.0.0.1:6379/7"
THROTTLE_URL = "redis://127.0.0.1:6379/8"
os.environ.update(
    CELERY_BROKER_URL=BROKER_URL,
    CACHE_URL=CACHE_URL,
    THROTTLE_REDIS_URL=THROTTLE_URL,
    ALLOWED_HOSTS="127.0.0.1",
    LIVE_CHANNEL=LIVE_CHANNEL,
)

HOST = "127.0.0.1"
CPU_TARGET_PERCENT = 5.0
CHANGE_WITHIN_S = 2.0  # the target: a change shows within 2 s
CHANGE_TIMEOUT_S = 30.0
SLICE_S = 10.0
WEB = "web (gunicorn master + workers)"
STREAM = "live stream (uvicorn)"
KEYWORDS, SNAPSHOTS, STRATEGY, GRADED_SHARE = 200, 10, 3, 0.6
LEAD = "lead@live-bench.test"
GRADERS = [f"grader{n}@live-bench.test" for n in range(3)]
PASSWORD = "bench-live-password-1"  # noqa: S105 - a throwaway database

LIVE_URL_RE = re.compile(rb'data-live-url="([^"]+)"')
LIVE_ETAG_RE = re.compile(rb'data-live-etag="([^"]*)"')
LIVE_STREAM_RE = re.compile(rb'data-live-stream="([^"]*)"')
CSRF_INPUT_RE = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
PROGRESS_RE = re.compile(rb"(\d+) of (\d+) grades")


# --- Redis: databases of the bench's own --------------------------------------------------


def redis_databases() -> list[redis.Redis]:
    return [redis.Redis.from_url(url) for url in (BROKER_URL, CACHE_URL, THROTTLE_URL)]


def refuse_unless_empty() -> None:
    for database in redis_databases():
        if database.dbsize():
            raise SystemExit(
                f"Redis {database.connection_pool.connection_kwargs['db']} is not empty: "
                "another run or other work uses it; the bench touches only empty databases"
            )


def delete_run_keys() -> None:
    """The keys this run left in its own databases (they were empty when it began)."""
    for database in redis_databases():
        keys = list(database.scan_iter(count=1000))
        if keys:
            database.delete(*keys)


# --- the data ---------------------------------------------------------------------------


def build_data() -> tuple[int, int]:
    """A team, its lead and graders, and a scored, pinned, partly graded evaluation with
    disagreements: (team id, evaluation id)."""
    from apps.accounts.services import member_add, team_create
    from apps.evaluations.models import Evaluation, EvaluationMetric
    from apps.scoring.services import recompute_evaluation

    team = team_create(name="Live bench", owner_email=LEAD, owner_password=PASSWORD)
    for email in GRADERS:
        member_add(team=team, email=email, role="evaluator", password=PASSWORD)
    rng = random.Random(18)
    shape = Shape(KEYWORDS, SNAPSHOTS, STRATEGY, GRADED_SHARE)
    grades = [
        [
            [rng.randrange(4) if rng.random() < GRADED_SHARE else None for _ in range(STRATEGY)]
            for _ in range(SNAPSHOTS)
        ]
        for _ in range(KEYWORDS)
    ]
    metrics = [("ndcg", 10), ("precision", 10)]
    evaluation = build_evaluation(team, "Live shoes", shape, grades, metrics)
    recompute_evaluation(evaluation_id=evaluation.id)
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True)
    EvaluationMetric.objects.filter(evaluation=evaluation, metric="ndcg").update(pinned=True)
    return team.id, evaluation.id


def grade_one_open_result(team_id: int, evaluation_id: int) -> int:
    """The lead grades one open result; the evaluation's graded count it should lead to."""
    from apps.accounts.models import User
    from apps.evaluations.models import Evaluation, FeedbackSlot
    from apps.judging.judgements import Action, Giver, slot_judge

    slot = FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grade__isnull=True).first()
    assert slot is not None, "the evaluation has no open result"
    graded_before = Evaluation.objects.get(id=evaluation_id).graded_slots
    lead = User.objects.get(email=LEAD)
    slot_judge(
        slot_id=slot.id, giver=Giver.lead(lead), action=Action.GRADE, grade=3, team_id=team_id
    )
    return graded_before + 1


# --- the processes, as deployed ----------------------------------------------------------


@dataclass
class Deployment:
    """gunicorn, a Celery worker and beat, started with production settings."""

    port: int
    logs: Path
    stream_port: int | None = None  # the live stream's, when it runs
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DEBUG="0",
            SECRET_KEY="bench-only-not-a-secret-but-long-enough-0123456789",
            LOG_LEVEL="WARNING",
        )
        if self.stream_port is not None:
            env["LIVE_STREAM_URL"] = f"http://{HOST}:{self.stream_port}/live/stream/"
        return env

    def start(self, name: str, command: list[str]) -> None:
        with (self.logs / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                command,
                cwd=benchkit.ROOT,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def start_all(self) -> None:
        venv = benchkit.ROOT / ".venv" / "bin"
        self.start(
            "worker",
            [
                str(venv / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency=2",
                "--loglevel=WARNING",
            ],
        )
        self.start(
            "beat",
            [
                str(venv / "celery"),
                "-A",
                "config",
                "beat",
                "--loglevel=WARNING",
                f"--schedule={self.logs / 'celerybeat-schedule'}",
            ],
        )
        if self.stream_port is not None:
            self.start(
                "stream",
                [
                    str(venv / "uvicorn"),
                    "config.live_asgi:application",
                    f"--host={HOST}",
                    f"--port={self.stream_port}",
                    "--no-access-log",
                    "--log-level=warning",
                ],
            )
        self.start("web", benchkit.gunicorn_command(HOST, self.port))
        http_bench.wait_until_up(self.port, self.processes["web"], self.logs / "web.log")

    def pids(self, name: str) -> list[int]:
        """The process and its children (gunicorn's workers, Celery's pool)."""
        pid = self.processes[name].pid
        return [pid, *http_bench.children_of(pid)]

    def stop_all(self) -> None:
        for process in self.processes.values():
            http_bench.stop_process(process)


# --- the pages --------------------------------------------------------------------------


@dataclass
class Page:
    kind: str  # "evaluation page", "dashboard", "disagreement queue"
    live_url: str
    etag: str
    stream_url: str = ""  # data-live-stream: the stream's URL with the page's token
    # (finished at, latency ms, HTTP status or 0) of every live request
    samples: list[tuple[float, float, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    first_change_at: float | None = None  # when its first 200 after the grade came
    change_progress: int | None = None  # the graded count that answer showed
    back_to_304: bool = False


class Browser:
    """The lead's browser for the page loads: a cookie jar over plain http.client."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(HOST, self.port, timeout=30)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        raw_head = "\r\n".join(f"{k}: {v}" for k, v in response.getheaders())
        _status, _headers, cookies = parse_head(
            f"HTTP/1.1 {response.status} -\r\n{raw_head}".encode()
        )
        self.cookies.update(cookies)
        content = response.read()
        connection.close()
        return response.status, content

    def log_in(self) -> None:
        status, body = self.request("GET", "/accounts/login/")
        token = CSRF_INPUT_RE.search(body)
        if status != 200 or token is None:
            raise SystemExit(f"login page: HTTP {status}")
        form = {
            "csrfmiddlewaretoken": token.group(1).decode(),
            "username": LEAD,
            "password": PASSWORD,
        }
        status, _body = self.request("POST", "/accounts/login/", form)
        if status != 302 or "sessionid" not in self.cookies:
            raise SystemExit(f"the lead's log-in: HTTP {status}")

    def open(self, kind: str, path: str) -> Page:
        """Load a page whole and read its live settings as live.js does."""
        status, body = self.request("GET", path)
        url, tag = LIVE_URL_RE.search(body), LIVE_ETAG_RE.search(body)
        if status != 200 or url is None or tag is None or not tag.group(1):
            raise SystemExit(f"{path}: HTTP {status}, live settings {url!r} {tag!r}")
        stream = LIVE_STREAM_RE.search(body)
        return Page(
            kind,
            html.unescape(url.group(1).decode()),
            html.unescape(tag.group(1).decode()),
            html.unescape(stream.group(1).decode()) if stream else "",
        )


def open_pages(browser: Browser, count: int, team_id: int, evaluation_id: int) -> list[Page]:
    paths = [
        ("evaluation page", f"/evaluations/{evaluation_id}/"),
        ("dashboard", "/"),
        ("disagreement queue", f"/evaluations/{evaluation_id}/disagreements/"),
    ]
    pages = [browser.open(*paths[number % 3]) for number in range(count)]
    expected = {
        "evaluation page": f"/live/evaluation/{evaluation_id}/",
        "dashboard": f"/live/team/{team_id}/dashboard/",
        "disagreement queue": f"/live/evaluation/{evaluation_id}/disagreements/",
    }
    for page in pages:
        if not page.live_url.startswith(expected[page.kind]):
            raise SystemExit(f"{page.kind}: live URL {page.live_url}")
    return pages


# --- the polling ------------------------------------------------------------------------


@dataclass
class Window:
    start: float
    end: float
    # CPU seconds so far by group at each slice boundary, and the machine's jiffies
    slices: list[tuple[float, dict[str, http_bench.CpuUse], tuple[int, int]]] = field(
        default_factory=list
    )


class LivePolls(Traffic):
    """Every page asks its live URL every `interval` seconds, the pages spread evenly over
    it; after the window, the grade, then until every page saw it and got 304 again."""

    def __init__(
        self,
        pages: list[Page],
        port: int,
        interval: float,
        warmup_s: float,
        seconds: float,
        cpu_groups: Callable[[], dict[str, http_bench.CpuUse]],
        change: Callable[[], int],
    ) -> None:
        super().__init__(HOST, port, len(pages), timeout_s=10.0)
        self.pages = pages
        self.interval = interval
        self.host = f"{HOST}:{port}"
        self.cookie = ""
        start = time.perf_counter()
        self.next_due = [start + interval * n / len(pages) for n in range(len(pages))]
        self.window = Window(start + warmup_s, start + warmup_s + seconds)
        self.cpu_groups = cpu_groups
        self.change = change  # makes the change; returns the graded count to show
        self.graded_at: float | None = None
        self.expected_progress: int | None = None

    def first_request(self, user: int) -> bytes | None:
        return self.next_request(user)

    def due(self, user: int, now: float) -> float:
        due = self.next_due[user]
        self.next_due[user] = due + self.interval
        return due

    def next_request(self, user: int) -> bytes | None:
        page = self.pages[user]
        if self.graded_at is not None and (
            page.back_to_304 or time.perf_counter() - self.graded_at > CHANGE_TIMEOUT_S
        ):
            return None
        headers = {"Cookie": self.cookie, "If-None-Match": page.etag, "Accept": "*/*"}
        return request_bytes("GET", page.live_url, self.host, headers)

    def answered(self, user: int, started: float, answer: Answer | None, problem: str) -> None:
        finished = time.perf_counter()
        page = self.pages[user]
        status = answer.status if answer is not None else 0
        page.samples.append((finished, (finished - started) * 1000.0, status))
        if answer is None or status not in (200, 304):
            page.errors.append(problem or f"HTTP {status}")
            return
        if status == 200:
            page.etag = answer.headers.get("etag", "")  # as live.js keeps it
        if self.graded_at is None or started < self.graded_at:
            return
        if status == 200 and page.first_change_at is None:
            page.first_change_at = finished
            shown = PROGRESS_RE.search(answer.body)
            page.change_progress = int(shown.group(1)) if shown else None
        elif status == 304 and page.first_change_at is not None:
            page.back_to_304 = True

    def tick(self, now: float) -> None:
        slices = self.window.slices
        boundary = self.window.start + SLICE_S * len(slices)
        if now >= boundary and boundary <= self.window.end + 1e-9:
            slices.append((now, self.cpu_groups(), http_bench.machine_busy()))
        if self.graded_at is None and now >= self.window.end and len(slices) > 1:
            progress_note("the window is over; the lead grades one open result")
            self.expected_progress = self.change()
            self.graded_at = time.perf_counter()


# --- the report -------------------------------------------------------------------------


def in_window(pages: list[Page], window: Window) -> list[tuple[str, float, float, int]]:
    start, end = window.slices[0][0], window.slices[-1][0]
    return [
        (page.kind, finished, latency, status)
        for page in pages
        for finished, latency, status in page.samples
        if start <= finished < end
    ]


def report_window(
    pages: list[Page], window: Window, how: str, server: list[str]
) -> tuple[float, int]:
    """Print the window's figures; (the server's % of one core, answers other than 304).
    `server`: the CPU groups that are the server (the web processes, and the stream)."""
    (t0, cpu0, busy0), (t1, cpu1, busy1) = window.slices[0], window.slices[-1]
    duration = t1 - t0
    answers = in_window(pages, window)
    statuses = Counter(status for _k, _f, _l, status in answers)
    latencies = [latency for _k, _f, latency, _s in answers] or [float("nan")]
    kinds = Counter(page.kind for page in pages)
    print(
        f"pages: {len(pages)} open ({', '.join(f'{n} {k}s' for k, n in kinds.items())}), "
        f"{how}; one lead logged in once, the pages sharing the session"
    )
    print(
        f"window: {duration:.1f} s; {len(answers)} answers, {len(answers) / duration:.1f} "
        f"requests/s; latency: p50 {statistics.median(latencies):.1f} ms, "
        f"p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms"
    )
    shown = ", ".join(f"{status or 'no answer'}: {n}" for status, n in sorted(statuses.items()))
    print(f"answers by status: {shown}")
    full = [(kind, finished - t0) for kind, finished, _l, status in answers if status == 200]
    if full:
        by_kind = Counter(kind for kind, _t in full)
        moments = sorted(t for _k, t in full)
        print(
            f"  200s while nothing changed: {len(full)} ({dict(by_kind)}), from "
            f"{moments[0]:.1f} s to {moments[-1]:.1f} s into the window: the topics' "
            "versions expiring (VERSION_SECONDS), each page drawing its parts once"
        )
    others = sum(n for status, n in statuses.items() if status not in (200, 304))
    for page in pages:
        for error in page.errors[:1]:
            print(f"  {page.kind}: {error}")
    used = {name: cpu1[name] - cpu0[name] for name in cpu1}
    print(
        "CPU seconds in the window: "
        + ", ".join(f"{name} {use.total:.2f}" for name, use in used.items())
    )
    print(
        f"machine {(busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1):.1%} busy in the "
        f"window (both cores, all processes, including other work on the machine)"
    )

    def server_cpu(groups: dict[str, http_bench.CpuUse]) -> float:
        return sum(groups[name].total for name in server)

    server_slices = [
        (server_cpu(later[1]) - server_cpu(earlier[1])) / (later[0] - earlier[0]) * 100
        for earlier, later in zip(window.slices, window.slices[1:], strict=False)
    ]
    print(
        "server % of one core per 10 s slice: "
        + " ".join(f"{p:.2f}" for p in server_slices)
        + f" (median {statistics.median(server_slices):.2f})"
    )
    web = used[WEB]
    if answers:
        print(
            f"web CPU per live request: {web.total / len(answers) * 1e6:.0f} us (user "
            f"{web.user / len(answers) * 1e6:.0f}, system {web.system / len(answers) * 1e6:.0f})"
        )
    server_percent = sum(used[name].total for name in server) / duration * 100
    parts = " + ".join(f"{name} {used[name].total / duration * 100:.2f}" for name in server)
    print(
        f"server ({parts}): {server_percent:.2f} % of one core   target < "
        f"{CPU_TARGET_PERCENT:.0f} %   {verdict(server_percent < CPU_TARGET_PERCENT)}"
    )
    return server_percent, others + len(full)


def report_change(pages: list[Page], graded_at: float, expected: int) -> tuple[bool, bool]:
    """Print how the grade reached the pages; (whether each saw it and came back to 304,
    whether every page saw it within CHANGE_WITHIN_S)."""
    print(f"change: the lead graded one open result (graded count {expected - 1} -> {expected})")
    ok = True
    for kind in ("evaluation page", "dashboard", "disagreement queue"):
        group = [page for page in pages if page.kind == kind]
        seen = [page.first_change_at - graded_at for page in group if page.first_change_at]
        showing = [page for page in group if page.change_progress is not None]
        wrong = [page for page in showing if page.change_progress != expected]
        back = sum(page.back_to_304 for page in group)
        line = f"  {kind}s: {len(seen)} of {len(group)} got a 200"
        if seen:
            line += (
                f", the first {min(seen):.2f} s after the grade, median "
                f"{statistics.median(seen):.2f} s, last {max(seen):.2f} s"
            )
        if kind != "disagreement queue":
            line += f"; {len(showing) - len(wrong)} of {len(group)} showing {expected} grades"
            ok = ok and not wrong and len(showing) == len(group)
        line += f"; {back} of {len(group)} back to 304 after it"
        print(line)
        after = Counter(
            status
            for page in group
            for finished, _l, status in page.samples
            if finished > graded_at
        )
        problems = Counter(error for page in group for error in page.errors)
        slowest = max(
            (
                latency
                for page in group
                for finished, latency, _s in page.samples
                if finished > graded_at
            ),
            default=0.0,
        )
        print(
            f"    answers after the grade: {dict(sorted(after.items()))}, the slowest "
            f"{slowest:.0f} ms"
            + (f"; problems: {dict(problems.most_common(3))}" if problems else "")
        )
        ok = ok and len(seen) == len(group) and back == len(group)
    every = [page.first_change_at - graded_at for page in pages if page.first_change_at]
    within = bool(every) and max(every) <= CHANGE_WITHIN_S
    share = sum(seconds <= CHANGE_WITHIN_S for seconds in every) / len(pages)
    print(
        f"every page showed the grade, 304 again after: {verdict(ok)}; the last "
        f"{max(every, default=float('nan')):.2f} s after the grade, {share:.0%} of the pages "
        f"within {CHANGE_WITHIN_S:.0f} s (all {len(pages)} pages are of one evaluation and "
        f"its team, so all redraw at once)   {verdict(within)}"
    )
    return ok, within


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", choices=("stream", "poll"), default="stream")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=15.0)
    args = parser.parse_args()
    streaming = args.mechanism == "stream"

    speed = benchkit.machine_speed()
    load_before = os.getloadavg()
    refuse_unless_empty()
    progress_note("creating the database and the data")
    benchkit.setup_django()
    team_id, evaluation_id = build_data()
    analyze()
    from django.db import connection

    from apps.core.live import LIVE_BACKSTOP_MS, LIVE_POLL_MS, VERSION_SECONDS

    connection.close()
    deployment = Deployment(
        http_bench.free_port(),
        Path(tempfile.mkdtemp(prefix="relevo-live-")),
        stream_port=http_bench.free_port() if streaming else None,
    )
    progress_note(
        f"starting gunicorn, a Celery worker and beat on port {deployment.port}"
        + (f", the live stream on port {deployment.stream_port}" if streaming else "")
    )
    server = [WEB, STREAM] if streaming else [WEB]
    try:
        deployment.start_all()
        browser = Browser(deployment.port)
        browser.log_in()
        progress_note(f"the lead opens {args.pages} pages")
        pages = open_pages(browser, args.pages, team_id, evaluation_id)
        if streaming and not all(page.stream_url for page in pages):
            raise SystemExit("a page came without its stream (data-live-stream)")

        def cpu_groups() -> dict[str, http_bench.CpuUse]:
            own = os.times()
            groups = {
                WEB: deployment.pids("web"),
                **({STREAM: deployment.pids("stream")} if streaming else {}),
                "Celery worker": deployment.pids("worker"),
                "beat": deployment.pids("beat"),
                "Redis (shared)": http_bench.pids_whose_command(b"redis-server"),
            }
            used = {name: http_bench.cpu_use(pids) for name, pids in groups.items()}
            return used | {"load generator": http_bench.CpuUse(own.user, own.system)}

        def change() -> int:
            return grade_one_open_result(team_id, evaluation_id)

        cookie = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())
        progress_note(f"warm-up {args.warmup:.0f} s, then measuring {args.seconds:.0f} s")
        if streaming:
            start = time.perf_counter()
            load = StreamPages(
                pages=pages,
                host=HOST,
                web_port=deployment.port,
                cookie=cookie,
                backstop_s=LIVE_BACKSTOP_MS / 1000,
                window=Window(start + args.warmup, start + args.warmup + args.seconds),
                slice_s=SLICE_S,
                cpu_sample=lambda: (cpu_groups(), http_bench.machine_busy()),
                change=change,
            )
            load.run(PROGRESS_RE)
            window, graded_at, expected = load.window, load.graded_at, load.expected_progress
            how = (
                f"each holding the live stream open and asking its live URL when told, "
                f"and every {LIVE_BACKSTOP_MS / 1000:.0f} s, spread evenly"
            )
        else:
            polls = LivePolls(
                pages,
                deployment.port,
                LIVE_POLL_MS / 1000,
                args.warmup,
                args.seconds,
                cpu_groups,
                change,
            )
            polls.cookie = cookie
            polls.run()
            window, graded_at, expected = polls.window, polls.graded_at, polls.expected_progress
            how = (
                f"each asking its live URL every {LIVE_POLL_MS / 1000:.1f} s with "
                "If-None-Match, spread evenly"
            )
    finally:
        deployment.stop_all()
        delete_run_keys()
    load_after = os.getloadavg()

    print(
        "server: gunicorn -c config/gunicorn.conf.py (sync workers, DEBUG off)"
        + (", the live stream (uvicorn config.live_asgi:application)" if streaming else "")
        + f", Celery worker (2 processes) and beat, PostgreSQL {benchkit.BENCH_DATABASE}; "
        f"Redis broker {BROKER_URL}, cache {CACHE_URL}, throttles {THROTTLE_URL}"
    )
    print(
        f"data: 1 active evaluation, {KEYWORDS} keywords x {SNAPSHOTS} results x {STRATEGY} "
        f"slots, ~{GRADED_SHARE:.0%} graded, pinned with nDCG@10; versions expire after "
        f"{VERSION_SECONDS} s"
    )
    server_percent, not_304 = report_window(pages, window, how, server)
    if streaming:
        print(
            f"streams: {load.streams_opened} opened, {load.events} 'changed' events in all, "
            f"{len(load.stream_errors)} broken"
            + (f" (first: {load.stream_errors[0]})" if load.stream_errors else "")
        )
    assert graded_at is not None and expected is not None
    changed, within = report_change(pages, graded_at, expected)
    print(speed)
    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}"
    )
    print(f"answers other than 304 while nothing changed: {not_304} (see above)")
    passed = server_percent < CPU_TARGET_PERCENT and changed
    print(
        f"verdict ({args.mechanism}; the issue's target: the server under "
        f"{CPU_TARGET_PERCENT:.0f} % of one core at rest, and a change reaching every page, "
        f"which asks nothing more after it): {verdict(passed)}"
    )
    print(
        f"the herd: all {len(pages)} pages showing the change within {CHANGE_WITHIN_S:.0f} s "
        f"of the grade: {verdict(within)}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
