"""Benchmark the rate limits AI judges learn and share, as deployed: two runs on one
provider account that allows `limit` requests a minute must together stay under it.

Run: .venv/bin/python bench/judge_limits_bench.py [--limit 60] [--results N]
     [--seconds 150] [--at-once 8] [--latency 0.3] [--keep-database]

It drops and recreates its own database (relevo_limitsbench) and drops it at the end. It
uses Redis database 13 with queues of its own: they, and the limiter's and the
pipeline's keys named after them, are deleted before and after; nothing else there is
touched (the shared cache is kept in files under the log folder). It runs the same
thing twice, as deployed and with AI_JUDGES_SHARED_RATE_LIMITS=0 in the worker's
environment (each run on its own), each time with a fresh worker reading both queues
(a process for every lane and two more; no beat: a waiting lane comes back through the
broker's countdown) and a fresh model server on 127.0.0.1 (apps/judges/tests/
fake_provider.py) that acts as one account allowing `limit` requests in any 60 s:

- it answers with a grade for each result sent, after `latency` s, with
  `x-ratelimit-limit-requests`, `-remaining-requests` (what is left of the last 60 s)
  and `-reset-requests` (until the oldest answered request of them leaves the window);
- once `limit` requests were answered in the last 60 s it answers 429 at once, with
  Retry-After (whole seconds until room) and remaining 0; a refused request does not
  count against the limit;
- it records the time of every request.

One team has two evaluations of `results` results each (10 a keyword, strategy 1) and
two judges on the same address and API key, one result a call and `at-once` calls at
once each (at 8 and 0.3 s, up to 53 calls a second: far over the limit). Both judges are
assigned (controls.run_assign) one right after the other; the bench waits until both
runs have graded everything, or cancels them `seconds` after the first request. By
default `results` is 3/2 `limit`: the two runs need 3 x `limit` calls, one window's worth
at the start, after 60 s and after 120 s, about 2 minutes.

It prints both settings side by side: the requests the server received (answered,
refused with 429) and the most in any 60 s, the calls the runs counted (of them held
back by the limiter, never sent), the results graded and when the last was. Target,
with sharing: at most `limit` requests in any 60 s, and almost no 429s (at most 1 % of
the requests, or 2).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import benchkit
import redis
from benchkit import ROOT, SERVER_URL, progress_note, setup_django, verdict

REDIS_URL = "redis://127.0.0.1:6379/13"
QUEUE = "relevo-limitsbench"
PIPELINE_QUEUE = "relevo-limitsbench-pipeline"
WINDOW_S = 60.0
API_KEY = "bench-account-key"
PER_KEYWORD = 10
DEADLINES = "_kombu.binding_deadlines"  # kombu's, shared: exchange -> when to sweep it
benchkit.use_database("relevo_limitsbench")
import os  # noqa: E402  (the settings read the environment once)

# Its workers' names carry this, so their remote-control entries can be told apart.
NODE_TAG = f"relevo-limitsbench-{os.getpid()}"
LOGS = Path("/tmp") / NODE_TAG
os.environ["CELERY_BROKER_URL"] = REDIS_URL
os.environ["CELERY_TASK_DEFAULT_QUEUE"] = QUEUE
os.environ["CELERY_PIPELINE_QUEUE"] = PIPELINE_QUEUE
os.environ["AI_JUDGES_ALLOW_PRIVATE_ADDRESSES"] = "1"
# The shared cache (live pages' tokens) in files, not among others' keys in Redis.
os.environ["CACHE_URL"] = f"file://{LOGS / 'cache'}"

from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen  # noqa: E402


class Account:
    """A provider's account limited to `limit` requests in any WINDOW_S, as the model
    server's responder (FakeProvider calls it under its lock, one request at a time)."""

    def __init__(self, limit: int, latency: float) -> None:
        self.limit = limit
        self.latency = latency
        self.answered: deque[float] = deque()  # those of the last WINDOW_S
        self.received: list[float] = []
        self.granted: list[float] = []
        self.refused: list[float] = []

    def reply(self, seen: Seen) -> Reply:
        now = time.monotonic()
        self.received.append(now)
        while self.answered and now - self.answered[0] >= WINDOW_S:
            self.answered.popleft()
        if len(self.answered) >= self.limit:
            self.refused.append(now)
            wait = self.answered[0] + WINDOW_S - now
            headers = {"retry-after": str(max(1, math.ceil(wait))), **self._headers(0, wait)}
            return Reply.error(429, "Rate limit reached for requests", **headers)
        self.answered.append(now)
        self.granted.append(now)
        schema = seen.body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        judgements = [{"id": i, "grade": len(i) % 4, "reason": "bench"} for i in ids]
        answer = Reply.openai(json.dumps({"judgements": judgements}), tokens=(500, 50))
        left = self.limit - len(self.answered)
        reset = self.answered[0] + WINDOW_S - now
        return replace(answer, headers=self._headers(left, reset), delay_s=self.latency)

    def _headers(self, remaining: int, reset_s: float) -> dict[str, str]:
        return {
            "x-ratelimit-limit-requests": str(self.limit),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": f"{max(reset_s, 0.0):.3f}s",
        }


def most_in_a_window(times: list[float]) -> int:
    """The most of the (ascending) times that fall in any WINDOW_S."""
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= WINDOW_S:
            first += 1
        most = max(most, last - first + 1)
    return most


@dataclass
class Figures:
    received: int = 0
    answered: int = 0
    refused: int = 0
    most_received: int = 0
    most_answered: int = 0
    calls: int = 0
    held_back: int = 0
    graded: int = 0
    failed: int = 0
    last_graded_s: float | None = None
    cut_off: bool = False
    refused_at: list[float] = field(default_factory=list)
    per_minute: list[int] = field(default_factory=list)

    def met(self, limit: int) -> bool:
        return self.most_received <= limit and self.refused <= max(2, self.received // 100)


def start_worker(processes: int, *, shared: bool) -> subprocess.Popen:
    """A worker reading the bench's two queues, the limiter shared or each run alone."""
    setting = "sharing" if shared else "alone"
    env = dict(
        os.environ,
        LOG_LEVEL="WARNING",
        AI_JUDGES_SHARED_RATE_LIMITS="1" if shared else "0",
    )
    command = [
        str(ROOT / ".venv" / "bin" / "celery"),
        "-A",
        "config",
        "worker",
        f"--hostname={NODE_TAG}-{setting}@%h",
        f"--queues={QUEUE},{PIPELINE_QUEUE}",
        f"--concurrency={processes}",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=(LOGS / f"worker-{setting}.log").open("wb"),
        stderr=subprocess.STDOUT,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    """A warm shutdown (the lanes of ended runs stop at their next step), else a kill."""
    worker.terminate()
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def forget_redis_keys(deadlines_before: set[bytes]) -> None:
    """Delete the bench's queues and binding tables, the keys named after its pipeline
    queue (the limiter's, the gathering's), its workers' members of Celery's shared
    remote-control table, and the binding deadlines kombu added for tables now gone
    (those there before the bench stay); nothing else."""
    broker = redis.Redis.from_url(REDIS_URL)
    for queue in (QUEUE, PIPELINE_QUEUE):
        broker.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    for pattern in (
        f"relevo:judges:limits:{PIPELINE_QUEUE}:*",
        f"relevo:scoring:gathering:{PIPELINE_QUEUE}:*",
    ):
        for key in broker.scan_iter(match=pattern):
            broker.delete(key)
    for table in ("_kombu.binding.celery.pidbox", "_kombu.binding_permanent.celery.pidbox"):
        for member in broker.smembers(table):
            if NODE_TAG.encode() in member:
                broker.srem(table, member)
    for exchange in binding_deadlines(broker) - deadlines_before:
        if not broker.exists(b"_kombu.binding." + exchange):
            broker.zrem(DEADLINES, exchange)


def binding_deadlines(broker: redis.Redis) -> set[bytes]:
    # Without decode_responses, members come back as bytes.
    return set(cast(list[bytes], broker.zrange(DEADLINES, 0, -1)))


def one_setting(args: argparse.Namespace, deadlines_before: set[bytes], *, shared: bool) -> Figures:
    """Two runs on one account, assigned at once, with the limiter shared or not."""
    from django.db.models import F

    from apps.accounts.services import team_create
    from apps.evaluations.models import Keyword, Snapshot
    from apps.judges import controls
    from apps.judges.models import JudgeCall, JudgeRun, RunStatus
    from apps.judges.services import judge_create
    from apps.judges.tasks import lane_widths

    name = "Sharing" if shared else "Without sharing"
    team = team_create(
        name=name,
        owner_email=f"{'sharing' if shared else 'alone'}@example.test",
        owner_password="x" * 12,
    )
    shape = benchkit.Shape(args.results // PER_KEYWORD, PER_KEYWORD, 1, 0.0)
    grades = [[[None] for _ in range(PER_KEYWORD)] for _ in range(shape.keywords)]
    evaluations = [
        benchkit.build_evaluation(team, f"{name} {part}", shape, grades, [("ndcg", 10)])
        for part in ("A", "B")
    ]
    Keyword.objects.filter(evaluation__in=evaluations).update(needs_scoring=False)
    # A title of its own for each result: results shown alike would share a cache key
    # (prompting.cache_key), and all but the first be graded from the team's cache.
    Snapshot.objects.filter(keyword__evaluation__in=evaluations).update(name=F("doc_id"))
    account = Account(args.limit, args.latency)
    figures = Figures()
    with FakeProvider() as server:
        server.respond_with(account.reply)
        judges = [
            judge_create(
                team=team,
                name=f"{name} judge {part}",
                protocol="openai",
                base_url=server.openai_url,
                api_key=API_KEY,
                model_name="bench",
                results_per_call=1,
                calls_at_once=args.at_once,
            )
            for part in ("A", "B")
        ]
        processes = 2 * len(lane_widths(args.at_once)) + 2
        worker = start_worker(processes, shared=shared)
        progress_note(
            f"{name.lower()}: a worker of {processes} processes; two runs assigned (logs in {LOGS})"
        )
        try:
            runs = [
                controls.run_assign(judge=judge, evaluation=evaluation)
                for judge, evaluation in zip(judges, evaluations, strict=True)
            ]
            figures.cut_off, done_at = wait_for(runs, args, account)
            if figures.cut_off:
                for run in runs:
                    run.refresh_from_db()
                    if run.status == RunStatus.RUNNING:
                        controls.run_cancel(run=run)
        finally:
            stop_worker(worker)
        received = list(account.received)
        refused = list(account.refused)
        granted = list(account.granted)
    forget_redis_keys(deadlines_before)
    runs = list(JudgeRun.objects.filter(id__in=[run.id for run in runs]))
    first = received[0] if received else 0.0
    figures.received, figures.refused = len(received), len(refused)
    figures.answered = figures.received - figures.refused
    figures.most_received = most_in_a_window(received)
    figures.most_answered = most_in_a_window(granted)
    figures.calls = sum(run.calls for run in runs)
    figures.held_back = JudgeCall.objects.filter(run__in=runs, error__contains="not sent").count()
    figures.graded = sum(run.graded for run in runs)
    figures.failed = sum(run.failed for run in runs)
    figures.last_graded_s = None if done_at is None else done_at - first
    figures.refused_at = [at - first for at in refused]
    minutes = math.ceil((received[-1] - first) / WINDOW_S + 1e-9) if received else 0
    figures.per_minute = [
        sum(1 for at in received if minute * WINDOW_S <= at - first < (minute + 1) * WINDOW_S)
        for minute in range(minutes)
    ]
    return figures


def wait_for(runs: list, args: argparse.Namespace, account: Account) -> tuple[bool, float | None]:
    """Wait until both runs have graded everything (when the last grade was seen), or
    cut them off `seconds` after the first request (120 s without one: the worker did
    not start)."""
    from apps.judges.models import RunStatus

    assigned = time.monotonic()
    while True:
        for run in runs:
            run.refresh_from_db(fields=["graded", "failed", "status"])
        if all(
            run.status != RunStatus.RUNNING or run.graded + run.failed >= args.results
            for run in runs
        ):
            return False, time.monotonic()
        since = account.received[0] if account.received else assigned
        if time.monotonic() - since > (args.seconds if account.received else 120):
            return True, None
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=60, help="the account's requests a minute")
    parser.add_argument("--results", type=int, help="per evaluation (default: 3/2 the limit)")
    parser.add_argument(
        "--seconds", type=float, default=150.0, help="runs cancelled this long after the first call"
    )
    parser.add_argument("--at-once", type=int, default=8, help="each judge's calls_at_once")
    parser.add_argument("--latency", type=float, default=0.3, help="the server's answer time (s)")
    parser.add_argument("--keep-database", action="store_true")
    args = parser.parse_args()
    if args.results is None:
        args.results = max(PER_KEYWORD, round(args.limit * 1.5 / PER_KEYWORD) * PER_KEYWORD)
    if not 1 <= args.limit <= 10_000:
        parser.error("--limit: from 1 to 10,000 requests a minute")
    if args.results % PER_KEYWORD or not PER_KEYWORD <= args.results <= 100_000:
        parser.error(f"--results: a multiple of {PER_KEYWORD} from 10 to 100,000")
    if not 1 <= args.at_once <= 32:
        parser.error("--at-once: from 1 to 32 (a judge's calls_at_once)")
    if not 0 <= args.latency <= 30 or not 10 <= args.seconds <= 3_600:
        parser.error("--latency: from 0 to 30 s; --seconds: from 10 to 3,600")

    deadlines_before = binding_deadlines(redis.Redis.from_url(REDIS_URL))
    forget_redis_keys(deadlines_before)
    LOGS.mkdir()
    setup_django()
    try:
        figures = {
            "with sharing": one_setting(args, deadlines_before, shared=True),
            "without sharing": one_setting(args, deadlines_before, shared=False),
        }
    finally:
        forget_redis_keys(deadlines_before)
        if not args.keep_database:
            drop_database()
    report(args, figures)


def report(args: argparse.Namespace, figures: dict[str, Figures]) -> None:
    limit = args.limit
    print(
        f"two runs on one account allowing {limit} requests a minute, {args.results} results "
        f"each, 1 a call, {args.at_once} calls at once each, answers after {args.latency} s"
    )
    shared, alone = figures["with sharing"], figures["without sharing"]

    def row(label: str, left: object, right: object) -> None:
        print(f"{label:<46}{left!s:>16}{right!s:>18}")

    def seconds(figure: Figures) -> str:
        if figure.last_graded_s is None:
            return f"cut off ({args.seconds:g} s)"
        return f"{figure.last_graded_s:.1f} s"

    row("", "with sharing", "without sharing")
    row("requests the server received", shared.received, alone.received)
    row("  answered with grades", shared.answered, alone.answered)
    row("  answered 429", shared.refused, alone.refused)
    row(f"most received in any 60 s (limit {limit})", shared.most_received, alone.most_received)
    row("most answered in any 60 s", shared.most_answered, alone.most_answered)
    row("calls the runs counted", shared.calls, alone.calls)
    row("  held back by the limiter, not sent", shared.held_back, alone.held_back)
    total = 2 * args.results
    row(f"results graded (of {total})", shared.graded, alone.graded)
    row("results failed", shared.failed, alone.failed)
    row("last grade after the first request", seconds(shared), seconds(alone))
    row(
        "requests in each minute from the first",
        "/".join(map(str, shared.per_minute)),
        "/".join(map(str, alone.per_minute)),
    )
    row(
        f"<= {limit} in any 60 s, almost no 429s",
        verdict(shared.met(limit)),
        verdict(alone.met(limit)),
    )
    for name, figure in figures.items():
        if figure.refused_at:
            shown = ", ".join(f"{at:.1f}" for at in figure.refused_at[:12])
            more = f" (+{len(figure.refused_at) - 12} more)" if len(figure.refused_at) > 12 else ""
            print(f"429s {name}, s after the first request: {shown}{more}")
    everything = shared.graded + shared.failed == total
    print(
        f"target: two runs on one account of {limit} requests a minute together stay under "
        f"it: most {shared.most_received} in any 60 s, {shared.refused} 429s "
        f"({'every result judged' if everything else 'not every result judged'})   "
        f"{verdict(shared.met(limit) and everything)}"
    )


def drop_database() -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {benchkit.BENCH_DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()
