"""Fault drill: take a part of Relevo away under paced grading load, and see what is lost.

Run: .venv/bin/python bench/fault_drill.py [--short] [--graders 32] [--rate 32]
     [--keywords 1500] [--only NAME ...]

Everything runs on this machine, on parts of the drill's own, so the developer's
PostgreSQL and Redis are never touched: a PostgreSQL cluster in a temporary directory on
a free port (initdb + pg_ctl; run as the `postgres` user when the drill runs as root),
a redis-server on a free port (tests/redis_server.py), gunicorn with
config/gunicorn.conf.py on a free port, a Celery worker as docker-compose.yml runs it
(prefork, two processes) and Celery beat. All are stopped and removed at the end.

The load: `--graders` graders log in and grade over HTTP, paced to `--rate` grades a
second in all (each grader's grades fall due at a steady interval). A grade answered
5xx (503 while the database is away), or with no answer at all (refused connection,
time-out), is sent again a second later, the same grade for the same result, until it
is answered 200: what the grading page does. Each answer names the grader's next result.

The scenarios, one after the other, each under that load (it runs 20 s before the fault
and 20 s after it is over):

  redis-30s      Redis stopped for 30 s, then started again on the same port
  redis-5min     the same for 5 minutes (left out with --short)
  postgres       PostgreSQL restarted (pg_ctl restart -m fast)
  worker-kill    the worker killed with SIGKILL while a task has a transaction open,
                 its pool processes with it, and a new worker started 5 s later
  beat-5min      beat stopped for 5 minutes (--beat-down-seconds), then started again

For each it prints: grades sent (a grade is sent once, however often it is resent),
grades stored, grades lost (sent but not in the database once every resend is over:
must be 0), duplicates (graded results nobody sent, or one grader's second result of a
snapshot: must be 0), and the seconds until every metric is exact again: from the end of
the fault until nothing waits to be scored, every mean is marked exact, and every stored
value equals a fresh computation (tests/metrics_check.py). Also: the requests by answer,
the longest a grade took to be stored, deadlocks PostgreSQL counted, and whether the
worker kept running as the same process.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import heapq
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import benchkit

# grading_http_bench points benchkit at its own database when imported; Drill.set_up
# points it at the drill's own cluster before Django starts.
import grading_http_bench as http_bench
from benchkit import Shape, analyze, build_evaluation, progress_note, verdict
from http_load import Answer, Traffic, request_bytes

from tests.redis_server import RedisServer, free_port

HOST = "127.0.0.1"
SNAPSHOTS, STRATEGY = 10, 3
DATABASE = "relevo_fault_drill"
BEFORE_S = AFTER_S = 20.0  # load before the fault, and after it is over
RESEND_AFTER_S = 1.0  # the grading page's wait before it sends a failed grade again
REQUEST_TIMEOUT_S = 10.0
DRAIN_S = 180.0  # how long graders keep resending once the load stops
EXACT_WITHIN_S = 300.0  # how long the drill waits for every metric to be exact
NEW_WORKER_AFTER_S = 5.0  # a supervisor's delay before it starts a killed worker again


# --- the drill's own PostgreSQL ----------------------------------------------------------


class OwnPostgres:
    """A PostgreSQL cluster of the drill's own, in a temporary directory, on a free port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="relevo-drill-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "postgres.log"
        self.bin = self._binaries()
        self.as_postgres = os.geteuid() == 0  # PostgreSQL refuses to run as root
        if self.as_postgres:
            shutil.chown(self.directory, "postgres")

    @staticmethod
    def _binaries() -> Path:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
        if found:
            return Path(found[-1]).parent
        pg_ctl = shutil.which("pg_ctl")
        if pg_ctl is None:
            raise SystemExit("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
        return Path(pg_ctl).parent

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@{HOST}:{self.port}/{database}"

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"port = {self.port}\nlisten_addresses = '{HOST}'\n"
                f"unix_socket_directories = '{self.directory}'\nmax_connections = 200\n"
                "log_lock_waits = on\n"
            )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "start")

    def restart(self) -> None:
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "restart"
        )

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


# --- the application's processes ---------------------------------------------------------


class Processes:
    """gunicorn, the worker and beat, each started and stopped by the drill, with logs."""

    def __init__(self, database_url: str, broker_url: str, logs: Path) -> None:
        self.logs = logs
        self.port = free_port()
        self.env = dict(os.environ)
        self.env.update(
            DATABASE_URL=database_url,
            CELERY_BROKER_URL=broker_url,
            DEBUG="0",
            SECRET_KEY="drill-only-not-a-secret-but-long-enough-0123456789",
            ALLOWED_HOSTS=HOST,
            LOG_LEVEL="INFO",
        )
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.beat: subprocess.Popen | None = None
        self.workers_started = 0

    def _start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = (self.logs / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(
                command, cwd=benchkit.ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        finally:
            log.close()

    def start_web(self) -> None:
        self.web = self._start("gunicorn", benchkit.gunicorn_command(HOST, self.port))
        http_bench.wait_until_up(self.port, self.web, self.logs / "gunicorn.log")

    def start_worker(self) -> None:
        """The worker as docker-compose.yml runs it: prefork, two pool processes."""
        self.workers_started += 1
        self.worker = self._start(
            f"worker-{self.workers_started}",
            [
                str(benchkit.ROOT / ".venv" / "bin" / "celery"),
                "-A",
                "config",
                "worker",
                "--loglevel=INFO",
                "--concurrency=2",
            ],
        )

    def start_beat(self) -> None:
        self.beat = self._start(
            "beat",
            [
                str(benchkit.ROOT / ".venv" / "bin" / "celery"),
                "-A",
                "config",
                "beat",
                "--loglevel=INFO",
                f"--schedule={self.logs / 'celerybeat-schedule'}",
            ],
        )

    def worker_pids(self) -> list[int]:
        assert self.worker is not None
        return [self.worker.pid, *http_bench.children_of(self.worker.pid)]

    def kill_worker(self) -> None:
        """SIGKILL the worker and its pool processes, as a crash of its container would."""
        for pid in self.worker_pids():
            with contextlib.suppress(ProcessLookupError):  # it had exited already
                os.kill(pid, signal.SIGKILL)
        assert self.worker is not None
        self.worker.wait()

    def stop_beat(self) -> None:
        assert self.beat is not None
        http_bench.stop_process(self.beat)
        self.beat = None

    def close(self) -> None:
        for process in (self.web, self.worker, self.beat):
            if process is not None:
                http_bench.stop_process(process)


def local_ports(pids: list[int]) -> list[int]:
    """The local ports of the TCP connections these processes hold."""
    inodes = set()
    for pid in pids:
        try:
            descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                target = os.readlink(descriptor)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            columns = line.split()
            if columns[9] in inodes:
                ports.append(int(columns[1].rsplit(":", 1)[1], 16))
    return ports


def worker_transactions_open(processes: Processes) -> int:
    """PostgreSQL sessions of the worker inside a transaction: a task mid-way."""
    from django.db import connection

    ports = local_ports(processes.worker_pids())
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE client_port = ANY(%s) "
            "AND state <> 'idle' AND xact_start IS NOT NULL",
            [ports],
        )
        return cursor.fetchone()[0]


# --- the graders -------------------------------------------------------------------------


@dataclass
class Sent:
    """A grade a grader sent: to which result, which grade, when, how often, answered."""

    user: int
    slot: int
    grade: int
    first_sent: float
    attempts: int = 0
    stored_at: float | None = None  # when it was answered 200


@dataclass
class ScenarioLoad:
    sent: list[Sent] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    refused: list[str] = field(default_factory=list)


class DrillLoad(Traffic):
    """Graders grading at a paced rate; a grade answered 5xx or not at all is sent again
    RESEND_AFTER_S later, until it is answered 200. `stop()` ends new grades; the graders
    then only finish what they sent."""

    def __init__(self, graders: list[http_bench.Grader], port: int, rate: float) -> None:
        super().__init__(HOST, port, len(graders), REQUEST_TIMEOUT_S)
        self.graders = graders
        self.host = f"{HOST}:{port}"
        self.interval = len(graders) / rate
        start = time.perf_counter()
        self.next_due = [start + self.interval * n / len(graders) for n in range(len(graders))]
        self.rngs = [random.Random(n) for n in range(len(graders))]
        self.pending: list[Sent | None] = [None] * len(graders)
        self.asking_for_work = [False] * len(graders)
        self.retry_at: list[float | None] = [None] * len(graders)
        self.stopping = False
        self.result = ScenarioLoad()

    def stop(self) -> None:
        self.stopping = True

    def _headers(self, user: int, post: bool) -> dict[str, str]:
        grader = self.graders[user]
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in grader.client.cookies.items())}
        if post:
            headers.update(
                {
                    "Content-Type": "application/x-www-form-urlencoded",
                    "HX-Request": "true",
                    "X-CSRFToken": grader.csrf,
                }
            )
        return headers

    def first_request(self, user: int) -> bytes | None:
        return self.next_request(user)

    def due(self, user: int, now: float) -> float:
        retry_at = self.retry_at[user]
        if retry_at is not None:
            self.retry_at[user] = None
            return retry_at
        due = max(self.next_due[user], now - self.interval)  # no burst to catch up
        self.next_due[user] = due + self.interval
        return due

    def next_request(self, user: int) -> bytes | None:
        grader = self.graders[user]
        sent = self.pending[user]
        if sent is None:
            if self.stopping:
                return None
            if grader.slot is None:  # Give feedback, the whole page: the next result
                self.asking_for_work[user] = True
                return request_bytes("GET", "/feedback/", self.host, self._headers(user, False))
            sent = Sent(user, grader.slot, self.rngs[user].randrange(4), time.perf_counter())
            self.pending[user] = sent
            self.result.sent.append(sent)
        sent.attempts += 1
        return request_bytes(
            "POST",
            f"/feedback/slots/{sent.slot}/grade/",
            self.host,
            self._headers(user, True),
            f"grade={sent.grade}".encode(),
        )

    def answered(self, user: int, started: float, answer: Answer | None, problem: str) -> None:
        grader = self.graders[user]
        status = answer.status if answer is not None else 0
        self.result.statuses[status] += 1
        if answer is not None and answer.cookies:
            grader.client.cookies.update(answer.cookies)
        if self.asking_for_work[user]:
            self.asking_for_work[user] = False
            page = answer.body if answer is not None and status == 200 else None
            following = http_bench.SLOT_RE.search(page) if page is not None else None
            csrf = http_bench.CSRF_HEADER_RE.search(page) if page is not None else None
            if following and following.group(1) and csrf:
                grader.slot, grader.csrf = int(following.group(1)), csrf.group(1).decode()
            else:
                self.retry_at[user] = time.perf_counter() + RESEND_AFTER_S
            return
        sent = self.pending[user]
        assert sent is not None
        if answer is None or status >= 500:  # the page sends the same grade again
            self.retry_at[user] = time.perf_counter() + RESEND_AFTER_S
            return
        self.pending[user] = None
        if status != 200:
            # Refused (not the grader's result any more, say): the server said no, so it
            # is not a lost grade; counted apart, and there should be none.
            self.result.refused.append(f"slot {sent.slot}: HTTP {status}")
            grader.slot = None
            return
        sent.stored_at = time.perf_counter()
        following = http_bench.SLOT_RE.search(answer.body)
        grader.slot = int(following.group(1)) if following and following.group(1) else None

    def tick(self, now: float) -> None:
        if self.stopping:
            # Graders waiting for their next grade's time stop now; resends go on.
            self.held = [entry for entry in self.held if self.pending[entry[1]] is not None]
            heapq.heapify(self.held)


# --- checks ------------------------------------------------------------------------------


def check_grades(evaluation_id: int, load: ScenarioLoad, since) -> dict[str, int]:
    """Sent grades against the database: stored, lost, and duplicates."""
    from django.db.models import Count

    from apps.evaluations.models import FeedbackSlot

    user_ids = [USER_IDS[email] for email in GRADER_EMAILS]  # graders log in in this order
    last = {}  # a result graded twice by the same grader keeps the last grade
    for sent in load.sent:
        last[sent.slot] = sent
    rows = {
        slot_id: (grade, grader_id)
        for slot_id, grade, grader_id in FeedbackSlot.objects.filter(id__in=list(last)).values_list(
            "id", "grade", "grader_id"
        )
    }
    stored = sum(
        1
        for slot_id, sent in last.items()
        if rows.get(slot_id) == (sent.grade, user_ids[sent.user])
    )
    graded_in_window = set(
        FeedbackSlot.objects.filter(
            evaluation_id=evaluation_id, grade__isnull=False, graded_at__gte=since
        ).values_list("id", flat=True)
    )
    nobody_sent = len(graded_in_window - set(last))
    twice_by_one_grader = (
        FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grader__isnull=False)
        .values("snapshot_id", "grader_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    return {
        "sent": len(last),
        "stored": stored,
        "lost": len(last) - stored,
        "duplicates": nobody_sent + twice_by_one_grader,
    }


def seconds_until_exact(evaluation_id: int, since: float) -> float | None:
    """Wait until every metric is exact; seconds from `since` (None: not within the bound).

    A cheap look first (nothing marked, every mean flagged exact), then the full
    comparison with a fresh computation of every keyword."""
    from apps.evaluations.models import EvaluationMetric, Keyword
    from tests.metrics_check import metric_differences

    while time.monotonic() - since < EXACT_WITHIN_S:
        looked = time.monotonic()
        quiet = not Keyword.objects.filter(evaluation_id=evaluation_id, needs_scoring=True).exists()
        flagged = not EvaluationMetric.objects.filter(
            evaluation_id=evaluation_id, means_exact=False
        ).exists()
        if quiet and flagged and not metric_differences(evaluation_id):
            return looked - since
        time.sleep(0.5)
    return None


def deadlocks() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


# --- the scenarios -----------------------------------------------------------------------


GRADER_EMAILS: list[str] = []
USER_IDS: dict[str, int] = {}


@dataclass
class Outcome:
    name: str
    fault: str
    grades: dict[str, int]
    exact_after_fault_s: float | None
    exact_after_load_s: float | None
    statuses: Counter
    longest_to_store_s: float
    refused: int
    deadlocks: int
    worker: str


class Drill:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.logs = Path(tempfile.mkdtemp(prefix="relevo-drill-"))
        self.postgres = OwnPostgres()
        self.redis = RedisServer()
        self.processes: Processes | None = None
        self.graders: list[http_bench.Grader] = []
        self.evaluation_id = 0

    def set_up(self) -> None:
        progress_note(f"own PostgreSQL on port {self.postgres.port}; logs in {self.logs}")
        self.postgres.start()
        self.redis.start()
        progress_note(f"own Redis on port {self.redis.port}")
        benchkit.SERVER_URL = self.postgres.url().rsplit("/", 1)[0]
        benchkit.use_database(DATABASE)
        benchkit.setup_django()
        progress_note(f"building {self.args.graders} graders and the pool")
        self.evaluation_id = build_data(self.args.graders, self.args.keywords)
        analyze()
        from django.db import connection

        connection.close()
        self.processes = Processes(self.postgres.url(DATABASE), self.redis.url(), self.logs)
        self.processes.start_worker()
        self.processes.start_beat()
        self.processes.start_web()
        import asyncio

        self.graders = asyncio.run(http_bench.log_in_all(self.processes.port, GRADER_EMAILS))

    def close(self) -> None:
        if self.processes is not None:
            self.processes.close()
        self.redis.close()
        self.postgres.close()

    def run(self, name: str, fault) -> Outcome:
        """Load, the fault (a function returning what it did), more load, then checks."""
        import threading

        from django.db import connection
        from django.utils import timezone

        assert self.processes is not None
        progress_note(f"scenario {name}")
        worker_pid = self.processes.worker.pid if self.processes.worker else None
        deadlocks_before = deadlocks()
        connection.close()  # PostgreSQL may restart; a new connection afterwards
        since = timezone.now()
        load = DrillLoad(self.graders, self.processes.port, self.args.rate)
        loop = threading.Thread(target=load.run, daemon=True)
        loop.start()
        time.sleep(BEFORE_S)
        what = fault()
        fault_over = time.monotonic()
        connection.close()
        time.sleep(AFTER_S)
        load.stop()
        load_over = time.monotonic()
        loop.join(DRAIN_S)
        if loop.is_alive():
            progress_note("graders still resending after the drain bound; counting as lost")
        grades = check_grades(self.evaluation_id, load.result, since)
        exact = seconds_until_exact(self.evaluation_id, fault_over)
        stored_after = [
            sent.stored_at - sent.first_sent
            for sent in load.result.sent
            if sent.stored_at is not None
        ]
        assert self.processes.worker is not None
        running = self.processes.worker.poll() is None
        if not running:
            worker = "EXITED"
        elif self.processes.worker.pid == worker_pid:
            worker = f"the same process throughout (pid {worker_pid})"
        else:
            worker = f"a new process (pid {self.processes.worker.pid}) took over"
        beat = self.processes.beat
        worker += "; beat " + ("running" if beat is not None and beat.poll() is None else "EXITED")
        return Outcome(
            name=name,
            fault=what,
            grades=grades,
            exact_after_fault_s=exact,
            exact_after_load_s=None if exact is None else exact - (load_over - fault_over),
            statuses=load.result.statuses,
            longest_to_store_s=max(stored_after, default=0.0),
            refused=len(load.result.refused),
            deadlocks=deadlocks() - deadlocks_before,
            worker=worker,
        )

    # The faults; each returns what it did.

    def redis_outage(self, seconds: float):
        def fault() -> str:
            self.redis.stop()
            time.sleep(seconds)
            self.redis.start()
            return f"Redis stopped for {seconds:.0f} s, started again on port {self.redis.port}"

        return fault

    def postgres_restart(self) -> str:
        started = time.monotonic()
        self.postgres.restart()
        return f"PostgreSQL restarted (pg_ctl restart -m fast, {time.monotonic() - started:.1f} s)"

    def worker_kill(self) -> str:
        assert self.processes is not None
        deadline = time.monotonic() + 30
        open_transactions = 0
        while time.monotonic() < deadline:
            open_transactions = worker_transactions_open(self.processes)
            if open_transactions:
                break
            time.sleep(0.02)
        self.processes.kill_worker()
        from django.db import connection

        connection.close()
        time.sleep(NEW_WORKER_AFTER_S)
        self.processes.start_worker()
        mid_task = (
            "mid-task (a transaction open)" if open_transactions else "(no task seen running)"
        )
        return (
            f"worker and its pool killed with SIGKILL {mid_task}; "
            f"a new worker started {NEW_WORKER_AFTER_S:.0f} s later"
        )

    def beat_down(self, seconds: float):
        def fault() -> str:
            assert self.processes is not None
            self.processes.stop_beat()
            time.sleep(seconds)
            self.processes.start_beat()
            return f"beat stopped for {seconds:.0f} s, then started again"

        return fault


def build_data(graders: int, keywords: int) -> int:
    """A team, its graders (one password hash for all), the evaluation they finished
    yesterday (so the planner's statistics know slots have graders) and the pool."""
    from django.contrib.auth.hashers import make_password

    from apps.accounts.models import User
    from apps.accounts.services import member_add, team_create

    team = team_create(name="Drill", owner_email="owner@drill.test")
    GRADER_EMAILS[:] = [f"grader{number:02d}@drill.test" for number in range(graders)]
    for email in GRADER_EMAILS:
        member_add(team=team, email=email, role="evaluator")
    User.objects.filter(email__in=GRADER_EMAILS).update(password=make_password(http_bench.PASSWORD))
    USER_IDS.update(User.objects.filter(email__in=GRADER_EMAILS).values_list("email", "id"))
    http_bench.build_history(team, GRADER_EMAILS)
    shape = Shape(keywords=keywords, snapshots=SNAPSHOTS, strategy=STRATEGY, graded_share=0.0)
    empty = [[[None] * STRATEGY for _ in range(SNAPSHOTS)]] * keywords
    evaluation = build_evaluation(
        team, "Drill pool", shape, empty, [("ndcg", 10), ("precision", 5), ("ap", 10)]
    )
    return evaluation.id


def report(outcome: Outcome) -> bool:
    grades = outcome.grades
    statuses = ", ".join(
        f"{status or 'no answer'}: {count}" for status, count in sorted(outcome.statuses.items())
    )
    exact = (
        f"{outcome.exact_after_fault_s:.1f} s after the fault ended "
        f"({outcome.exact_after_load_s:.1f} s after the last new grade)"
        if outcome.exact_after_fault_s is not None
        else f"NOT within {EXACT_WITHIN_S:.0f} s"
    )
    ok = (
        grades["lost"] == 0
        and grades["duplicates"] == 0
        and outcome.exact_after_fault_s is not None
        and outcome.deadlocks == 0
        and "EXITED" not in outcome.worker
    )
    print(f"{outcome.name}: {outcome.fault}")
    print(
        f"  grades sent {grades['sent']}, stored {grades['stored']}, lost {grades['lost']} "
        f"(target 0), duplicates {grades['duplicates']} (target 0); refused {outcome.refused}"
    )
    print(f"  every metric exact again: {exact}")
    print(
        f"  requests by answer: {statuses}; longest from first send to stored: "
        f"{outcome.longest_to_store_s:.1f} s"
    )
    print(f"  deadlocks counted by PostgreSQL: {outcome.deadlocks} (target 0)")
    print(f"  worker: {outcome.worker}")
    print(f"  {verdict(ok)}", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graders", type=int, default=32)
    parser.add_argument("--rate", type=float, default=32.0, help="grades per second offered")
    parser.add_argument("--keywords", type=int, default=1500, help="keywords in the pool")
    parser.add_argument("--short", action="store_true", help="leave out the 5-minute Redis outage")
    parser.add_argument("--beat-down-seconds", type=float, default=300.0)
    parser.add_argument("--only", nargs="*", help="run only these scenarios")
    args = parser.parse_args()

    drill = Drill(args)
    scenarios = [
        ("redis-30s", drill.redis_outage(30)),
        ("redis-5min", drill.redis_outage(300)),
        ("postgres", drill.postgres_restart),
        ("worker-kill", drill.worker_kill),
        ("beat-5min", drill.beat_down(args.beat_down_seconds)),
    ]
    if args.short:
        scenarios = [s for s in scenarios if s[0] != "redis-5min"]
    if args.only:
        scenarios = [s for s in scenarios if s[0] in args.only]
    print(benchkit.machine_speed(), flush=True)
    passed = True
    try:
        drill.set_up()
        print(
            f"pool: {args.keywords} keywords x {SNAPSHOTS} results x {STRATEGY} slots, "
            f"metrics ndcg@10, precision@5, ap@10; {args.graders} graders over HTTP, "
            f"{args.rate:.0f} grades/s offered in all; each scenario: {BEFORE_S:.0f} s of "
            f"load, the fault, {AFTER_S:.0f} s more",
            flush=True,
        )
        for name, fault in scenarios:
            passed = report(drill.run(name, fault)) and passed
        worker_logs = sorted(drill.logs.glob("worker-*.log"))
        unrecoverable = sum(path.read_text().count("Unrecoverable error") for path in worker_logs)
        print(f"worker logs: {unrecoverable} 'Unrecoverable error' (target 0)")
        passed = passed and unrecoverable == 0
        print(f"drill: {verdict(passed)}; logs in {drill.logs}")
    finally:
        drill.close()
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
