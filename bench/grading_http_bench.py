"""Claim + grade over HTTP: gunicorn and PostgreSQL under 32 concurrent simulated graders.

Run: .venv/bin/python bench/grading_http_bench.py [--graders 32] [--seconds 30]
     [--rate GRADES_PER_S] [--warmup S] [--worker after|during] [--workers N]
     [--worker-class sync|gthread] [--threads N] [--gc-threshold N] [--samples FILE]

Target: at least 300 grades/s with p99 under 100 ms and zero errors, on this
2-core machine, load generator included.

The bench drops and recreates its own database (relevo_bench_http), builds a team with
one evaluator per simulated grader, an evaluation those graders finished yesterday
(60,000 graded slots: a team that has been grading, so the planner's statistics know
slots have graders) and one active evaluation far bigger than the run can grade (3,000
keywords x 20 results x 3 slots, nothing graded). It then starts gunicorn on 127.0.0.1
with config/gunicorn.conf.py, as production runs it: DEBUG off, persistent database
connections, and a real Redis broker (db 13), so the web process publishes
`recompute_keyword` tasks (one for a keyword's first grade not yet scored).

The Celery worker (prefork, 2 processes, as docker-compose.yml runs it) starts after the
window by default (--worker after): the tasks wait in Redis meanwhile. With --worker
during it runs from the start, on the same 2 cores. Either way the bench then waits
until the worker has scored every keyword graded in the run and checks that each was
scored after its last grade, at its latest grade version, with every graded slot
counted: every grade reached the metrics.

The graders log in and open Give feedback once (which claims their first result) through
a small asyncio client; the measured grading runs on a lean single-threaded socket loop
(http_load.py), so the load generator takes little of the 2 cores it shares. Each grader
posts grades as htmx does (HX-Request, X-CSRFToken from the page), with no pause between
them, one connection per request (gunicorn's sync workers close it after the answer).
Each answer is the next card, whose data-slot is the next result to grade: one request
is one grade and one claim. Any answer but 200, or a card without a next result, is an
error (the grader then reopens Give feedback and goes on). Afterwards the database must
hold exactly the grades that were answered 200, on exactly the slots the graders were
shown, each once.

Gunicorn: sync workers, 3 (cores + 1) by default. gthread workers with keep-alive
spent less in the load generator but more in the server, and bound each grader's
connection to one process, which spread the load unevenly (a longer tail).

CPU is read from /proc for the window: the load generator, the web processes, the
PostgreSQL backends of the bench's database, Redis, the Celery worker if it runs, and
the whole machine (other work on the machine shows there, not in the figures per
process).

With no pause between grades the system is closed: 32 graders = throughput x mean
latency (Little's law), so a p99 under 100 ms needs well over 320 grades/s. With --rate
the graders are paced instead: each grader's grades fall due every 32 / rate seconds
and each latency is counted from when its grade fell due (a grade sent late because the
last answer came late counts the wait), which measures the wait at that rate.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode

import benchkit
import redis
from benchkit import Shape, analyze, build_evaluation, percentile, progress_note, verdict
from http_load import Answer, Traffic, parse_head, request_bytes

benchkit.use_database("relevo_bench_http")

RATE_TARGET = 300.0
P99_TARGET_MS = 100.0
KEYWORDS, SNAPSHOTS, STRATEGY = 3_000, 20, 3
HISTORY_KEYWORDS = 1_000  # of the evaluation the graders finished before (build_history)
PASSWORD = "bench-grader-password-1"  # noqa: S105 - a throwaway database
BROKER_URL = "redis://127.0.0.1:6379/13"
REQUEST_TIMEOUT_S = 10.0
MAX_ERRORS = 20  # per grader: more, and the grader stops
HOST = "127.0.0.1"

SLOT_RE = re.compile(rb'id="card" class="feedback-card" data-slot="(\d*)"')
CSRF_INPUT_RE = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_HEADER_RE = re.compile(rb'"X-CSRFToken": "([^"]+)"')


# --- the data ---------------------------------------------------------------------------


def build_data(graders: int) -> tuple[int, list[str]]:
    """A team, its evaluators (one password hash for all) and one big active evaluation."""
    from django.contrib.auth.hashers import make_password

    from apps.accounts.models import User
    from apps.accounts.services import member_add, team_create

    team = team_create(name="Bench", owner_email="owner@bench.test")
    emails = [f"grader{number:02d}@bench.test" for number in range(graders)]
    for email in emails:
        member_add(team=team, email=email, role="evaluator")
    # One hash computed once: hashing a password per grader would take most of a minute.
    User.objects.filter(email__in=emails).update(password=make_password(PASSWORD))
    build_history(team, emails)
    shape = Shape(keywords=KEYWORDS, snapshots=SNAPSHOTS, strategy=STRATEGY, graded_share=0.0)
    empty = [[[None] * shape.strategy for _ in range(shape.snapshots)]] * shape.keywords
    evaluation = build_evaluation(team, "Bench pool", shape, empty, [("ndcg", 10)])
    return evaluation.id, emails


def build_history(team, emails: list[str]) -> None:
    """An evaluation the same graders finished yesterday, as a team that has been grading
    has: without one, the planner's statistics (gathered after the load) said that no slot
    ever had a grader, and it read a grader's held slot by walking every assigned slot."""
    from datetime import timedelta

    from django.db import connection
    from django.db.models import F
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword

    shape = Shape(HISTORY_KEYWORDS, SNAPSHOTS, STRATEGY, graded_share=1.0)
    grades = [[[2] * shape.strategy for _ in range(shape.snapshots)]] * shape.keywords
    history = build_evaluation(team, "Bench history", shape, grades, [("ndcg", 10)])
    grader_ids = list(User.objects.filter(email__in=emails).order_by("id").values_list("id"))
    yesterday = timezone.now() - timedelta(days=1)
    with connection.cursor() as cursor:
        # Each slot of a snapshot to another grader (one slot per grader per snapshot).
        cursor.execute(
            f"UPDATE {FeedbackSlot._meta.db_table} SET grader_id = (%s::bigint[])"
            '[1 + (snapshot_id * 3 + "index") %% %s], graded_at = %s, assigned_at = %s '
            "WHERE evaluation_id = %s",
            [[g for (g,) in grader_ids], len(grader_ids), yesterday, yesterday, history.id],
        )
    Keyword.objects.filter(evaluation=history).update(
        needs_scoring=False, scored_version=F("grade_version")
    )
    Evaluation.objects.filter(id=history.id).update(status="finished", graded_slots=shape.slots)


# --- the server -------------------------------------------------------------------------


@dataclass
class ServerConfig:
    """What the bench changes of config/gunicorn.conf.py (None: the file's setting)."""

    worker_class: str | None
    workers: int | None
    threads: int | None
    gc_threshold: int | None

    def describe(self) -> str:
        worker_class = self.worker_class or "sync"
        workers = self.workers or (os.cpu_count() or 1) + 1
        text = f"gunicorn -c config/gunicorn.conf.py: {worker_class}, {workers} workers"
        if worker_class == "gthread":
            text += f" x {self.threads or 1} threads, keep-alive 5 s"
        else:
            text += " (no keep-alive: one connection per request)"
        if self.gc_threshold:
            text += f", youngest GC generation every {self.gc_threshold} allocations"
        return text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def server_environment() -> dict[str, str]:
    """The web process's (and the worker's) environment: production settings."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=os.environ["DATABASE_URL"],
        DEBUG="0",
        SECRET_KEY="bench-only-not-a-secret-but-long-enough-0123456789",
        ALLOWED_HOSTS=HOST,
        CELERY_BROKER_URL=BROKER_URL,
        LOG_LEVEL="WARNING",
    )
    return env


def start_server(config: ServerConfig, port: int, log_path: Path) -> subprocess.Popen:
    env = server_environment()
    if config.gc_threshold:
        env["GUNICORN_GC_THRESHOLD"] = str(config.gc_threshold)
    command = benchkit.gunicorn_command(HOST, port, "--keep-alive", "5")
    if config.worker_class:
        command += ["--worker-class", config.worker_class]
    if config.workers:
        command += ["--workers", str(config.workers)]
    if config.threads:
        command += ["--threads", str(config.threads)]
    log = log_path.open("wb")
    return subprocess.Popen(
        command, cwd=benchkit.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )


def start_worker(log_path: Path) -> subprocess.Popen:
    """A Celery worker as docker-compose.yml runs it (prefork, 2 processes)."""
    command = [
        str(benchkit.ROOT / ".venv" / "bin" / "celery"),
        "-A",
        "config",
        "worker",
        "--concurrency",
        "2",
        "--loglevel",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    log = log_path.open("wb")
    return subprocess.Popen(
        command, cwd=benchkit.ROOT, env=server_environment(), stdout=log, stderr=subprocess.STDOUT
    )


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds spent so far (or between two moments), in user and in kernel mode."""

    user: float = 0.0
    system: float = 0.0

    @property
    def total(self) -> float:
        return self.user + self.system

    def __sub__(self, other: CpuUse) -> CpuUse:
        return CpuUse(self.user - other.user, self.system - other.system)


def cpu_use(pids: list[int]) -> CpuUse:
    """User and system CPU of these processes so far."""
    tick = os.sysconf("SC_CLK_TCK")
    user = system = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        user += int(fields[11])
        system += int(fields[12])
    return CpuUse(user / tick, system / tick)


def pids_whose_command(has: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if has in title.replace(b"\0", b" "):
                found.append(int(entry.name))
    return found


def postgres_pids() -> list[int]:
    """PostgreSQL backends serving this bench's database (other databases' work aside)."""
    return pids_whose_command(f" {benchkit.BENCH_DATABASE} ".encode())


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


# --- the HTTP client --------------------------------------------------------------------


class HttpError(Exception):
    pass


class Client:
    """One browser: one keep-alive connection (reopened when the server closes it), cookies."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, form: dict | None = None, headers: dict | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        body = urlencode(form).encode() if form is not None else b""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if form is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
            lines.append(f"Content-Length: {len(body)}")
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        for attempt in (1, 2):
            reused = self.writer is not None
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
            assert self.reader is not None
            self.writer.write(raw)
            try:
                head = await self.reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError) as error:
                await self.close()
                nothing_read = not getattr(error, "partial", b"")
                # A keep-alive connection the server closed while idle: it never saw the
                # request, so sending it again is safe (as browsers do).
                if reused and nothing_read and attempt == 1:
                    continue
                raise HttpError(f"connection lost: {error!r}") from error
            return await self._read_response(head)
        raise AssertionError("unreachable")

    async def _read_response(self, head: bytes) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        status, headers, cookies = parse_head(head[:-4])
        self.cookies.update(cookies)
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                parts.append(await self.reader.readexactly(size + 2))
                if size == 0:
                    break
            body = b"".join(part[:-2] for part in parts)
        else:
            body = await self.reader.read()
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, headers, body


# --- the graders ------------------------------------------------------------------------


@dataclass
class Grader:
    email: str
    client: Client
    csrf: str = ""
    slot: int | None = None
    graded: list[int] = field(default_factory=list)  # slots answered 200, in order
    # (finished at, latency ms, HTTP status or 0, ok) of every grade request
    samples: list[tuple[float, float, int, bool]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def log_in(grader: Grader, limit: asyncio.Semaphore) -> None:
    client = grader.client
    async with limit:  # every login hashes the password: a few at a time
        status, _h, body = await client.request("GET", "/accounts/login/")
        token = CSRF_INPUT_RE.search(body)
        if status != 200 or token is None:
            raise HttpError(f"login page: {status}")
        form = {
            "csrfmiddlewaretoken": token.group(1).decode(),
            "username": grader.email,
            "password": PASSWORD,
        }
        status, _h, _b = await client.request("POST", "/accounts/login/", form)
        if status != 302 or "sessionid" not in client.cookies:
            raise HttpError(f"login of {grader.email}: {status}")
    if not await open_feedback(grader):
        raise HttpError(f"Give feedback gave {grader.email} nothing to grade")


async def open_feedback(grader: Grader) -> bool:
    """GET Give feedback (the whole page): the slot to grade and the page's CSRF token."""
    status, _h, body = await grader.client.request("GET", "/feedback/")
    slot, csrf = SLOT_RE.search(body), CSRF_HEADER_RE.search(body)
    if status != 200 or slot is None or not slot.group(1) or csrf is None:
        return False
    grader.slot, grader.csrf = int(slot.group(1)), csrf.group(1).decode()
    return True


@dataclass
class Window:
    """The measurement's bounds, and where the CPU went between them: CPU use by process
    group (load generator, web, PostgreSQL, Redis, Celery worker) and the machine's busy
    and total jiffies."""

    start: float = 0.0
    end: float = 0.0
    cpu: dict[str, CpuUse] = field(default_factory=dict)
    busy: tuple[int, int] = (0, 0)


def cpu_sample(processes: dict[str, list[int]]) -> tuple[dict[str, CpuUse], tuple[int, int]]:
    """CPU use so far of the load generator, of each group of processes (a process and its
    children, found afresh: Celery starts its pool after it answers) and of PostgreSQL."""
    own = os.times()
    use = {"load generator": CpuUse(own.user, own.system)}
    for name, parents in processes.items():
        use[name] = cpu_use([pid for parent in parents for pid in (parent, *children_of(parent))])
    use["PostgreSQL"] = cpu_use(postgres_pids())
    return use, machine_busy()


async def log_in_all(port: int, emails: list[str]) -> list[Grader]:
    graders = [Grader(email=email, client=Client(port)) for email in emails]
    progress_note(f"{len(graders)} graders log in and open Give feedback")
    limit = asyncio.Semaphore(4)
    await asyncio.gather(*(log_in(grader, limit) for grader in graders))
    for grader in graders:
        await grader.client.close()
    return graders


class GradingLoad(Traffic):
    """Every grader grades, with no pause, until the window ends; the CPU is sampled as the
    window opens and closes. A grade answered with anything but the next card is an error;
    the grader then opens Give feedback again and goes on."""

    def __init__(
        self,
        graders: list[Grader],
        port: int,
        warmup_s: float,
        seconds: float,
        processes: dict[str, list[int]],
        rate: float | None = None,
    ) -> None:
        super().__init__(HOST, port, len(graders), REQUEST_TIMEOUT_S)
        # Paced (rate given): each grader's requests fall due every `interval` seconds,
        # the graders staggered evenly across it; unpaced, each sends on the last answer.
        self.interval = len(graders) / rate if rate else 0.0
        start = time.perf_counter()
        self.next_due = [
            start + self.interval * user / len(graders) for user in range(len(graders))
        ]
        self.graders = graders
        self.processes = processes
        self.host = f"{HOST}:{port}"
        self.rngs = [random.Random(seed) for seed in range(len(graders))]
        self.cookies = [self._cookie_header(grader) for grader in graders]
        self.sent: list[int | None] = [None] * len(graders)  # the slot graded, or None: a GET
        now = time.perf_counter()
        self.window = Window(start=now + warmup_s, end=now + warmup_s + seconds)
        self.before: tuple[dict[str, CpuUse], tuple[int, int]] | None = None
        self.after: tuple[dict[str, CpuUse], tuple[int, int]] | None = None

    @staticmethod
    def _cookie_header(grader: Grader) -> str:
        return "; ".join(f"{k}={v}" for k, v in grader.client.cookies.items())

    def first_request(self, user: int) -> bytes | None:
        return self.next_request(user)

    def due(self, user: int, now: float) -> float:
        if not self.interval:
            return now
        due = self.next_due[user]
        self.next_due[user] = due + self.interval
        return due

    def next_request(self, user: int) -> bytes | None:
        grader = self.graders[user]
        if time.perf_counter() >= self.window.end or len(grader.errors) > MAX_ERRORS:
            return None
        self.sent[user] = grader.slot
        if grader.slot is None:  # after an error: Give feedback, the whole page
            return request_bytes("GET", "/feedback/", self.host, {"Cookie": self.cookies[user]})
        body = f"grade={self.rngs[user].randrange(4)}".encode()
        headers = {
            "Cookie": self.cookies[user],
            "Content-Type": "application/x-www-form-urlencoded",
            "HX-Request": "true",
            "X-CSRFToken": grader.csrf,
        }
        return request_bytes(
            "POST", f"/feedback/slots/{grader.slot}/grade/", self.host, headers, body
        )

    def answered(self, user: int, started: float, answer: Answer | None, problem: str) -> None:
        finished = time.perf_counter()
        grader = self.graders[user]
        if answer is not None and answer.cookies:
            grader.client.cookies.update(answer.cookies)
            self.cookies[user] = self._cookie_header(grader)
        status, body = (answer.status, answer.body) if answer is not None else (0, b"")
        slot = self.sent[user]
        if slot is None:  # Give feedback, after an error
            following, csrf = SLOT_RE.search(body), CSRF_HEADER_RE.search(body)
            if status == 200 and following and following.group(1) and csrf:
                grader.slot, grader.csrf = int(following.group(1)), csrf.group(1).decode()
            else:
                grader.errors.append(problem or f"Give feedback: HTTP {status}, nothing to grade")
            return
        following = SLOT_RE.search(body) if status == 200 else None
        ok = following is not None and bool(following.group(1))
        grader.samples.append((finished, (finished - started) * 1000.0, status, ok))
        if status == 200:
            grader.graded.append(slot)  # the grade was taken, whatever came next
        if following is not None and ok:
            grader.slot = int(following.group(1))
            return
        grader.errors.append(problem or f"grade of slot {slot}: HTTP {status}, next {following!r}")
        grader.slot = None

    def tick(self, now: float) -> None:
        if self.before is None and now >= self.window.start:
            self.before = cpu_sample(self.processes)
        if self.after is None and now >= self.window.end:
            self.after = cpu_sample(self.processes)

    def measure(self) -> Window:
        progress_note(
            f"warm-up {self.window.start - time.perf_counter():.0f} s, then measuring "
            f"{self.window.end - self.window.start:.0f} s"
        )
        self.run()
        self.tick(time.perf_counter())
        if self.before is None or self.after is None:
            errors = [error for grader in self.graders for error in grader.errors[:1]]
            raise SystemExit(f"the load stopped before the window closed; errors: {errors[:5]}")
        (before, busy_before), (after, busy_after) = self.before, self.after
        self.window.cpu = {name: after[name] - before[name] for name in after}
        self.window.busy = (busy_after[0] - busy_before[0], busy_after[1] - busy_before[1])
        return self.window


# --- checks and the report --------------------------------------------------------------


def wait_until_up(port: int, server: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log_path.read_text()[-3000:]}")
        try:
            with socket.create_connection((HOST, port), timeout=1) as probe:
                probe.sendall(f"GET /accounts/login/ HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
                if probe.recv(12).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer within 60 s:\n{log_path.read_text()[-3000:]}")


def check_database(evaluation_id: int, graders: list[Grader], since: datetime) -> tuple[bool, str]:
    """Slots graded since the run began == the grades answered 200, slot for slot."""
    from django.db.models import Count

    from apps.evaluations.models import FeedbackSlot

    answered = [slot for grader in graders for slot in grader.graded]
    graded = FeedbackSlot.objects.filter(
        evaluation_id=evaluation_id, grade__isnull=False, graded_at__gte=since
    )
    in_database = set(graded.values_list("id", flat=True))
    by_grader = {
        row["grader__email"]: row["n"]
        for row in graded.values("grader__email").annotate(n=Count("id"))
    }
    held_twice = (
        FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grader__isnull=False)
        .values("snapshot_id", "grader_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    problems = []
    if len(answered) != len(set(answered)):
        problems.append(f"{len(answered) - len(set(answered))} slots were handed out twice")
    if set(answered) != in_database:
        problems.append(
            f"{len(in_database - set(answered))} graded slots nobody was answered for, "
            f"{len(set(answered) - in_database)} answered grades missing"
        )
    for grader in graders:
        if by_grader.get(grader.email, 0) != len(grader.graded):
            problems.append(f"{grader.email}: {by_grader.get(grader.email, 0)} in the database")
            break
    if held_twice:
        problems.append(f"{held_twice} snapshots with two slots of one grader")
    summary = (
        f"{len(in_database)} graded slots in the database, {len(answered)} grades answered 200"
    )
    return not problems, summary + ("" if not problems else ": " + "; ".join(problems))


def touched_keywords(evaluation_id: int, since: datetime) -> list[int]:
    from apps.evaluations.models import FeedbackSlot

    return list(
        FeedbackSlot.objects.filter(
            evaluation_id=evaluation_id, grade__isnull=False, graded_at__gte=since
        )
        .order_by()
        .values_list("keyword_id", flat=True)
        .distinct()
    )


def keywords_waiting(keyword_ids: list[int]) -> int:
    """How many of these keywords have a grade the metrics do not include yet."""
    from apps.evaluations.models import Keyword

    return Keyword.objects.filter(id__in=keyword_ids, needs_scoring=True).count()


def wait_for_metrics(keyword_ids: list[int], timeout_s: float) -> tuple[int, float]:
    """Wait until the worker has scored every keyword graded in the run: (how many were
    still waiting at the start, seconds it took)."""
    started = time.monotonic()
    waiting_at_start = waiting = keywords_waiting(keyword_ids)
    while waiting and time.monotonic() - started < timeout_s:
        time.sleep(0.5)
        waiting = keywords_waiting(keyword_ids)
    return waiting_at_start, time.monotonic() - started


def check_metrics(keyword_ids: list[int]) -> tuple[bool, str]:
    """Every keyword graded in the run is scored at its latest grade version, after its
    last grade, with the graded count of exactly the slots graded now."""
    from django.db.models import Count, Max, Q

    from apps.evaluations.models import Keyword
    from apps.scoring.models import KeywordMetric

    keywords = Keyword.objects.filter(id__in=keyword_ids).annotate(
        graded_now=Count("slots", filter=Q(slots__grade__isnull=False)),
        last_grade=Max("slots__graded_at"),
    )
    computed = dict(
        KeywordMetric.objects.filter(keyword_id__in=keyword_ids)
        .order_by()
        .values_list("keyword_id")
        .annotate(Max("computed_at"))
    )
    behind = [k.id for k in keywords if k.needs_scoring or k.scored_version != k.grade_version]
    miscounted = [k.id for k in keywords if k.graded_slots != k.graded_now]
    stale = [k.id for k in keywords if computed.get(k.id) is None or computed[k.id] < k.last_grade]
    problems = []
    if behind:
        problems.append(f"{len(behind)} not scored at their latest grade version")
    if miscounted:
        problems.append(f"{len(miscounted)} with a graded count that is not the database's")
    if stale:
        problems.append(f"{len(stale)} whose metrics were computed before their last grade")
    summary = f"{len(keyword_ids)} keywords graded in the run"
    if problems:
        return False, summary + ": " + "; ".join(problems)
    return True, summary + ", each scored after its last grade, with every grade counted"


def redis_publishes(broker: redis.Redis) -> int:
    """LPUSH calls the Redis server has answered so far (Celery publishes with LPUSH; any
    other client of this Redis server counts too)."""
    stats = broker.info("commandstats")
    return int(stats.get("cmdstat_lpush", {}).get("calls", 0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graders", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument(
        "--worker",
        choices=["during", "after"],
        default="after",
        help="run the Celery worker during the measurement (as in production) or only "
        "after it; either way the bench waits for it to score every graded keyword",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="pace the graders to offer this many grades/s in all, each grader's requests "
        "falling due at a steady interval and measured from when they fell due; without "
        "it every grader grades again as soon as the card comes back",
    )
    parser.add_argument("--worker-class", choices=["sync", "gthread"], default=None)
    parser.add_argument("--workers", type=int, default=None, help="gunicorn processes")
    parser.add_argument("--threads", type=int, default=None, help="per process (gthread)")
    parser.add_argument("--gc-threshold", type=int, default=None)
    parser.add_argument(
        "--reuse-database",
        action="store_true",
        help="keep the database of an earlier run (quicker when profiling; not for figures)",
    )
    parser.add_argument(
        "--samples",
        type=Path,
        help="write every grade request of the window to this file (seconds into the "
        "window, latency ms, HTTP status), to look at the latencies over time",
    )
    args = parser.parse_args()
    config = ServerConfig(args.worker_class, args.workers, args.threads, args.gc_threshold)

    speed = benchkit.machine_speed()  # before anything else runs
    load_before = os.getloadavg()
    if args.reuse_database:
        import django

        django.setup()
        from apps.evaluations.models import Evaluation

        evaluation_id = Evaluation.objects.get(team__name="Bench", name="Bench pool").id
        emails = [f"grader{number:02d}@bench.test" for number in range(args.graders)]
        progress_note("scoring what earlier runs left marked")
        from apps.scoring.services import recompute_marked

        recompute_marked()
    else:
        progress_note("creating the database")
        benchkit.setup_django()
        progress_note(
            f"building {args.graders} graders and a {KEYWORDS * SNAPSHOTS * STRATEGY} slot pool"
        )
        evaluation_id, emails = build_data(args.graders)
        analyze()
    from django.db import connection
    from django.utils import timezone

    run_started = timezone.now()

    connection.close()  # the bench's own connection stays idle from here on

    broker = redis.Redis.from_url(BROKER_URL)
    broker.flushdb()  # the bench's own Redis database: nothing but this run's tasks
    port = free_port()
    logs = Path(tempfile.mkdtemp(prefix="relevo-bench-http-"))
    worker = None
    if args.worker == "during":
        progress_note("starting a Celery worker")
        worker = start_worker(logs / "worker.log")
    progress_note(f"starting {config.describe()} on port {port}")
    server = start_server(config, port, logs / "gunicorn.log")
    try:
        wait_until_up(port, server, logs / "gunicorn.log")
        processes = {"web": [server.pid], "Redis": pids_whose_command(b"redis-server")}
        if worker is not None:
            processes["worker"] = [worker.pid]
        publishes_before = redis_publishes(broker)
        graders = asyncio.run(log_in_all(port, emails))
        window = GradingLoad(
            graders, port, args.warmup, args.seconds, processes, args.rate
        ).measure()
        publishes = redis_publishes(broker) - publishes_before
        keyword_ids = touched_keywords(evaluation_id, run_started)
        waiting_when_stopped = keywords_waiting(keyword_ids)
    finally:
        stop_process(server)
    try:
        if worker is None:
            progress_note("starting a Celery worker to score what the run graded")
            worker = start_worker(logs / "worker.log")
        _waiting, drained_s = wait_for_metrics(keyword_ids, timeout_s=600)
    finally:
        if worker is not None:  # None only when starting it failed
            stop_process(worker)
        broker.flushdb()
    load_after = os.getloadavg()

    duration = window.end - window.start
    if args.samples:
        args.samples.write_text(
            "".join(
                f"{finished - window.start:.4f} {latency:.2f} {status}\n"
                for grader in graders
                for finished, latency, status, _ok in sorted(grader.samples)
                if window.start <= finished < window.end
            )
        )
    measured = [
        sample
        for grader in graders
        for sample in grader.samples
        if window.start <= sample[0] < window.end
    ]
    latencies = [latency for _t, latency, _s, _ok in measured]
    grades = sum(ok for _t, _l, _s, ok in measured)
    statuses = Counter(status for grader in graders for _t, _l, status, _ok in grader.samples)
    errors = sum(len(grader.errors) for grader in graders)
    rate = grades / duration
    p99 = percentile(latencies, 0.99) if latencies else float("inf")
    answered = sum(len(grader.graded) for grader in graders)
    consistent, consistency = check_database(evaluation_id, graders, run_started)
    scored, scoring = check_metrics(keyword_ids)

    print(
        f"pool: 1 active evaluation, {KEYWORDS} keywords x {SNAPSHOTS} results x {STRATEGY} "
        f"slots = {KEYWORDS * SNAPSHOTS * STRATEGY} slots, graded scale; before it, the same "
        f"graders finished one of {HISTORY_KEYWORDS * SNAPSHOTS * STRATEGY} slots"
    )
    print(f"server: {config.describe()}; DEBUG off; PostgreSQL; broker {BROKER_URL}")
    if args.worker == "during":
        print(
            "Celery worker during the measurement: yes (prefork, 2 processes, on the same "
            "2 cores); it kept scoring while the graders graded"
        )
    else:
        print(
            "Celery worker during the measurement: no (the tasks waited in Redis; the worker "
            "started after the window)"
        )
    print(
        f"recompute tasks published in the run: {publishes} (Redis LPUSH calls) for "
        f"{answered} grades; {len(keyword_ids)} keywords graded in the run, "
        f"{waiting_when_stopped} waiting for their recompute when the load stopped, all "
        f"scored {drained_s:.1f} s later"
    )
    pacing = (
        f"paced: {args.rate:.0f} grades/s offered in all, a grade due from each grader every "
        f"{args.graders / args.rate * 1000:.0f} ms, latency counted from when it fell due"
        if args.rate
        else "no pause between grades"
    )
    print(
        f"graders: {args.graders} (HTTP/1.1, a connection per request, {pacing}), "
        f"warm-up {args.warmup:.0f} s, measured {duration:.1f} s"
    )
    print(f"grades in the window: {grades}  ->  {rate:.1f} grades/s   target >= {RATE_TARGET:.0f}")
    if latencies:
        print(
            f"latency per grade request (grade + next claim + card): median "
            f"{statistics.median(latencies):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms, "
            f"p99 {p99:.1f} ms, max {max(latencies):.1f} ms   target p99 < {P99_TARGET_MS:.0f} ms"
        )
    shown = ", ".join(f"{status or 'no answer'}: {n}" for status, n in sorted(statuses.items()))
    print(f"errors: {errors}   target 0   (every grade request of the run by status: {shown})")
    for grader in graders:
        for error in grader.errors[:1]:
            print(f"  {grader.email}: {error}")
    if grades:
        busy, total = window.busy
        per_grade = {name: use.total * 1000 / grades for name, use in window.cpu.items()}
        server_side = sum(v for name, v in per_grade.items() if name != "load generator")
        parts = ", ".join(f"{name} {value:.2f}" for name, value in per_grade.items())
        web = window.cpu["web"]
        print(
            f"CPU ms per grade in the window: {parts}; server side (all but the load "
            f"generator) {server_side:.2f} ms; web user/system "
            f"{web.user * 1000 / grades:.2f}/{web.system * 1000 / grades:.2f}"
        )
        print(
            f"machine {busy / max(total, 1):.0%} busy in the window, "
            f"{busy / os.sysconf('SC_CLK_TCK') * 1000 / grades:.2f} ms of CPU per grade "
            "(all processes, including any other work on the machine)"
        )
    print(speed)
    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}"
    )
    print(f"database check: {consistency}   {verdict(consistent)}")
    print(f"metrics check: {scoring}   {verdict(scored)}")
    passed = rate >= RATE_TARGET and p99 < P99_TARGET_MS and errors == 0 and consistent
    passed = passed and scored
    print(
        f"verdict (>= {RATE_TARGET:.0f} grades/s, p99 < {P99_TARGET_MS:.0f} ms, 0 errors, "
        f"database consistent, every grade in the metrics): {verdict(passed)}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
