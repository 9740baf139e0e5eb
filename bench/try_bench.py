"""A try over HTTP, as deployed: how soon its verdict shows after the search's last answer.

Run: .venv/bin/python bench/try_bench.py [--runs 5] [--keywords 200] [--delay 0.05]
     [--poll 0.25]

Target: a try of 200 keywords against an endpoint answering in 50 ms, 8 calls at once
(SEARCH_CONCURRENCY_PER_ENDPOINT), shows its verdict within 2 s of the last answer, in
every run.

It drops and recreates its own database (relevo_bench_tries) and uses Redis db 13 with
queues of its own (relevo-bench-tries and relevo-bench-tries-pipeline) and workers of
its own names: at the end it deletes those queues and their binding tables, takes its
workers out of Celery's shared remote-control table and drops the binding deadlines
kombu added for tables now gone; keys it did not make are never touched (any new key
the run leaves is listed).

Data: a team with three evaluators, a search model on the test search server
(tests/search_server.py, `/tuned`, in a process of its own, each answer after `delay`)
sending boost 1, which ranks a keyword's 10 documents worst first, and a finished
evaluation of that model: `keywords` keywords x 10 results, each graded by the three
people (two agree; the third is one lower on some), loaded with COPY. So the library
holds a grade for every document either ranking shows.

Processes, as docker-compose.yml runs them: gunicorn (config/gunicorn.conf.py, DEBUG
off), a Celery worker on both queues (prefork, 2), a pipeline worker (prefork, 2) and
beat. A warm-up try, then `runs` measured tries: each POSTs /api/v1/tries/ with the
draft boost=#boost#, knob boost 3 (best first: the verdict must be "better"), and polls
GET /api/v1/tries/{id}/, `poll` seconds after each answer, until the try is done. A
fresh search server per run, so its figures are the run's: the most calls in flight
and the wall-clock times of the first call and of the last answer written (/stats).
Per run:

- verdict after the last answer: when the first GET showing the done try was read, less
  the last answer (the target), split into the runner (its last store and the done
  mark, Try.finished_at), the poll's wait and that GET's own time;
- the whole run: POST sent to verdict read, with POST to the first call and the calls
  from the first to the last answer (their floor: keywords x delay / 8 = 1.25 s);
- the most calls in flight (8 expected) and the requests the server answered;
- the GET of a done try (the report: library grades, scoring, the paired bootstrap).

Then where one report's time goes: try_report on the last try, in this process, stage
by stage (median of 5).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import benchkit

# grading_http_bench points benchkit at its own database when imported; use_database
# below points it at this bench's.
import grading_http_bench as http_bench
import redis
from benchkit import analyze, copy_rows, progress_note, setup_django

benchkit.use_database("relevo_bench_tries")
REDIS_URL = "redis://127.0.0.1:6379/13"
QUEUE = "relevo-bench-tries"
PIPELINE_QUEUE = "relevo-bench-tries-pipeline"
# Worker names of the bench's own, so it can take them out of Celery's shared
# remote-control binding (every worker on a Redis database joins it) and nothing else.
NODE_TAG = f"relevo-bench-tries-{os.getpid()}"
DEADLINES = "_kombu.binding_deadlines"  # kombu's, shared: exchange -> when to sweep its table
os.environ.update(
    CELERY_BROKER_URL=REDIS_URL,
    CELERY_TASK_DEFAULT_QUEUE=QUEUE,
    CELERY_PIPELINE_QUEUE=PIPELINE_QUEUE,
    SEARCH_ALLOW_PRIVATE_ADDRESSES="1",
    ALLOWED_HOSTS="127.0.0.1",
    # Pub/sub channels are one namespace for the whole Redis: the bench's is its own.
    LIVE_CHANNEL=f"relevo-live-bench-tries:{os.getpid()}",
    SECRET_KEY="bench-only-not-a-secret-but-long-enough-0123456789",
)

HOST = "127.0.0.1"
TARGET_S = 2.0
RESULTS = 10  # per keyword: the server's pool, all of it
STRATEGY = 3  # people per result
BASELINE_BOOST = 1  # /tuned: worst first
TRIED_BOOST = 3  # best first
# A document's grade by its relevance rank (1 = the most relevant), as apps/tries/tests.
GRADES = {1: 3, 2: 3, 3: 2, 4: 2, 5: 1, 6: 1, 7: 0, 8: 0, 9: 0, 10: 0}
EXPECTED_VERDICT = "better"
RUN_TIMEOUT_S = 120.0
REPORT_REPEATS = 3  # GETs of each done try, timed
PROFILE_REPEATS = 5


# --- the search server, a process of its own per run ------------------------------------


def serve(ports: Any, delay: float) -> None:
    import sys

    sys.path.insert(0, str(benchkit.ROOT))
    from tests.search_server import SearchServer

    server = SearchServer()
    server.delay_seconds = delay
    server.results = RESULTS
    server.pool = RESULTS
    ports.put(server.server_address[1])
    server.serve_forever()


@dataclass
class SearchProcess:
    process: Any
    base_url: str

    @classmethod
    def start(cls, delay: float) -> SearchProcess:
        # spawn, not fork: this process holds database connections a fork would share.
        context = multiprocessing.get_context("spawn")
        ports = context.Queue()
        process = context.Process(target=serve, args=(ports, delay), daemon=True)
        process.start()
        return cls(process, f"http://{HOST}:{ports.get(timeout=30)}")

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.base_url + "/stats", timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(10)


# --- the data ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    team_id: int
    endpoint_id: int
    model_name: str
    evaluation_id: int
    token: str
    slots: int


def keyword_text(number: int) -> str:
    return f"bench query {number:04d}"


def build_data(keywords: int, server_url: str) -> Setup:
    """The team, its model (boost 1), its token and a finished graded evaluation."""
    from apps.accounts.api_tokens import api_token_create
    from apps.accounts.models import Membership
    from apps.accounts.services import member_add, team_create
    from apps.endpoints.services import endpoint_create, model_create
    from apps.evaluations.models import Evaluation, Keyword
    from apps.evaluations.services import evaluation_create
    from tests.search_server import MAPPER

    team = team_create(name="Try bench", owner_email="lead@try-bench.test")
    for number in range(STRATEGY):
        member_add(team=team, email=f"grader{number}@try-bench.test", role="evaluator")
    people = list(
        Membership.objects.filter(team=team, role="evaluator")
        .order_by("user_id")
        .values_list("user_id", flat=True)
    )
    endpoint = endpoint_create(
        team=team,
        name="Tuned search",
        method="GET",
        url=server_url + "/tuned",
        mapper=MAPPER,
        timeout_seconds=5.0,
    )
    model = model_create(
        team=team,
        endpoint=endpoint,
        name="Tuned",
        params=f"q=#query#\nboost={BASELINE_BOOST}",
        default_keywords="",
    )
    _token, token_text = api_token_create(team=team, name="try bench")
    evaluation = evaluation_create(
        team=team,
        name="Tuned, boost 1",
        metrics=[("ndcg", 10)],
        scale="graded",
        strategy=STRATEGY,
        search_model=model,
    )
    day = datetime.now(UTC) - timedelta(days=3)
    slots = keywords * RESULTS * STRATEGY
    Evaluation.objects.filter(id=evaluation.id).update(
        status="finished",
        started_at=day,
        finished_at=day + timedelta(days=1),
        total_slots=slots,
        graded_slots=slots,
        progress=1.0,
    )
    rows = Keyword.objects.bulk_create(
        (
            Keyword(
                evaluation=evaluation,
                text=keyword_text(number),
                position=number + 1,
                graded_slots=RESULTS * STRATEGY,
                executed_at=day,
            )
            for number in range(keywords)
        ),
        batch_size=5000,
    )
    load_results(rows, people, day)
    return Setup(team.id, endpoint.id, model.name, evaluation.id, token_text, slots)


def load_results(keywords, people: list[int], day: datetime) -> None:
    """Each keyword's results as boost 1 ranks them, each graded by the three people."""
    from apps.evaluations.models import FeedbackSlot, Snapshot, Source
    from tests.search_server import documents_for, tuned_documents

    relevance: dict[str, int] = {}  # doc id -> its relevance rank
    ranked = {}
    for keyword in keywords:
        for rank, document in enumerate(documents_for(keyword.text, RESULTS), 1):
            relevance[str(document["_id"])] = rank
        ranked[keyword.id] = tuned_documents(keyword.text, BASELINE_BOOST, RESULTS, RESULTS)
    progress_note(f"COPY {len(keywords) * RESULTS} results")
    copy_rows(
        Snapshot,
        ["keyword", "position", "doc_id", "name", "image", "attributes"],
        (
            (
                keyword.id,
                position,
                document["_id"],
                document["_source"]["title"],  # type: ignore[index]
                document["_source"]["img"],  # type: ignore[index]
                json.dumps({"price": document["_source"]["price"]}),  # type: ignore[index]
            )
            for keyword in keywords
            for position, document in enumerate(ranked[keyword.id], 1)
        ),
    )
    by_id = {keyword.id: keyword for keyword in keywords}
    # Read whole before the COPY: the COPY holds the connection.
    snapshots = list(
        Snapshot.objects.filter(keyword_id__in=by_id).values_list(
            "id", "keyword_id", "position", "doc_id"
        )
    )

    def grade(rank: int, index: int) -> int:
        # The third person grades one lower on odd ranks: the two others carry it.
        given = GRADES[rank]
        return max(0, given - 1) if index == 2 and rank % 2 else given

    progress_note(f"COPY {len(keywords) * RESULTS * STRATEGY} people's grades")
    copy_rows(
        FeedbackSlot,
        [
            "evaluation",
            "keyword",
            "snapshot",
            "index",
            "grader",
            "grade",
            "graded_at",
            "keyword_position",
            "snapshot_position",
            "snapshot_started",
            "source",
        ],
        (
            (
                by_id[keyword_id].evaluation_id,
                keyword_id,
                snapshot_id,
                index,
                people[index],
                grade(relevance[doc_id], index),
                day + timedelta(minutes=index),
                by_id[keyword_id].position,
                position,
                True,
                Source.PERSON,
            )
            for snapshot_id, keyword_id, position, doc_id in snapshots
            for index in range(STRATEGY)
        ),
    )


# --- the processes, as deployed ----------------------------------------------------------


@dataclass
class Deployment:
    port: int
    logs: Path
    processes: dict[str, Any] = field(default_factory=dict)

    def start(self, name: str, command: list[str]) -> None:
        env = dict(os.environ, DEBUG="0", LOG_LEVEL="WARNING")
        with (self.logs / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                command, cwd=benchkit.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )

    def start_all(self) -> None:
        celery = str(benchkit.ROOT / ".venv" / "bin" / "celery")
        worker = [celery, "-A", "config", "worker", "--loglevel=WARNING", "--concurrency=2"]
        self.start("worker", [*worker, f"--hostname=worker-{NODE_TAG}@%h"])
        self.start(
            "pipeline-worker",
            [*worker, f"--hostname=pipeline-{NODE_TAG}@%h", f"--queues={PIPELINE_QUEUE}"],
        )
        self.start(
            "beat",
            [
                celery,
                "-A",
                "config",
                "beat",
                "--loglevel=WARNING",
                f"--schedule={self.logs / 'celerybeat-schedule'}",
            ],
        )
        self.start("web", benchkit.gunicorn_command(HOST, self.port))
        http_bench.wait_until_up(self.port, self.processes["web"], self.logs / "web.log")

    def stop_all(self) -> None:
        for process in self.processes.values():
            http_bench.stop_process(process)

    def problems(self) -> list[str]:
        """Error lines the processes logged."""
        found = []
        for log in sorted(self.logs.glob("*.log")):
            for line in log.read_text(errors="replace").splitlines():
                if "ERROR" in line or "Traceback" in line:
                    found.append(f"{log.name}: {line[:200]}")
        return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


# --- Redis: only what the bench made -----------------------------------------------------


def redis_keys(broker: redis.Redis) -> set[bytes]:
    return set(broker.scan_iter(count=1000))


def deadline_exchanges(broker: redis.Redis) -> set[bytes]:
    return {bytes(exchange) for exchange in broker.zrange(DEADLINES, 0, -1)}  # type: ignore[arg-type]


def delete_bench_keys(broker: redis.Redis, deadlines_before: set[bytes]) -> None:
    """The bench's queues and their binding tables; its workers' members of the shared
    remote-control table (Redis drops a set left empty); and the binding deadlines kombu
    added for tables that no longer exist (entries there before the bench stay)."""
    for queue in (QUEUE, PIPELINE_QUEUE):
        broker.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    for shared in ("_kombu.binding.celery.pidbox", "_kombu.binding_permanent.celery.pidbox"):
        ours = [member for member in broker.smembers(shared) if NODE_TAG.encode() in member]
        if ours:
            broker.srem(shared, *ours)
    for exchange in deadline_exchanges(broker):
        gone = not broker.exists(b"_kombu.binding." + exchange)
        if exchange not in deadlines_before and gone:
            broker.zrem(DEADLINES, exchange)


# --- one try over HTTP -------------------------------------------------------------------


class Api:
    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            payload = json.dumps(body).encode() if body is not None else None
            connection.request(method, path, body=payload, headers=self.headers)
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()


@dataclass
class Run:
    try_id: int
    verdict: str
    state: str
    queries_done: int
    post_sent: float  # wall clock, as every time here
    post_ms: float
    first_request: float  # the search server's first call of the try
    last_answer: float
    finished: float  # Try.finished_at: the runner marked it done
    last_store: float  # the newest TryQuery.ran_at: the runner's last store began
    stores: int
    done_get_start: float
    done_get_end: float  # the verdict was read
    gets: int  # GETs until then
    report_ms: list[float]  # GETs of the done try
    most_in_flight: int
    requests: int  # search calls the server answered
    metric: dict[str, Any]  # the verdict's metric as the GET showed it

    @property
    def after_last_answer(self) -> float:
        return self.done_get_end - self.last_answer

    @property
    def whole(self) -> float:
        return self.done_get_end - self.post_sent


def run_one_try(api: Api, setup: Setup, delay: float, poll: float) -> Run:
    from apps.endpoints.models import SearchEndpoint
    from apps.tries.models import Try, TryQuery

    server = SearchProcess.start(delay)
    try:
        # The bench's own setup step: the endpoint points at this run's fresh server.
        SearchEndpoint.objects.filter(id=setup.endpoint_id).update(url=server.base_url + "/tuned")
        draft = {
            "model": setup.model_name,
            "evaluation": setup.evaluation_id,
            "params": {"boost": "#boost#"},
            "knobs": {"boost": TRIED_BOOST},
            "metrics": "ndcg@10",
        }
        post_sent = time.time()
        started = time.perf_counter()
        status, body = api.request("POST", "/api/v1/tries/", draft)
        post_ms = (time.perf_counter() - started) * 1000.0
        if status != 202:
            raise SystemExit(f"POST /api/v1/tries/: HTTP {status}: {body[:500]!r}")
        try_id = json.loads(body)["id"]
        path = f"/api/v1/tries/{try_id}/"
        gets = 0
        while True:
            get_start = time.time()
            status, body = api.request("GET", path)
            get_end = time.time()
            gets += 1
            if status != 200:
                raise SystemExit(f"GET {path}: HTTP {status}: {body[:500]!r}")
            shown = json.loads(body)
            if shown["state"] in ("done", "failed"):
                break
            if get_end - post_sent > RUN_TIMEOUT_S:
                raise SystemExit(f"try {try_id} not done after {RUN_TIMEOUT_S:.0f} s: {shown}")
            time.sleep(poll)
        report_ms = []
        for _ in range(REPORT_REPEATS):
            began = time.perf_counter()
            api.request("GET", path)
            report_ms.append((time.perf_counter() - began) * 1000.0)
        stats = server.stats()
    finally:
        server.stop()
    attempt = Try.objects.get(id=try_id)
    ran = [
        at
        for at in TryQuery.objects.filter(attempt_id=try_id).values_list("ran_at", flat=True)
        if at is not None
    ]
    assert attempt.finished_at is not None
    return Run(
        try_id=try_id,
        verdict=shown["verdict"],
        state=shown["state"],
        queries_done=shown["queries_done"],
        post_sent=post_sent,
        post_ms=post_ms,
        first_request=stats["first_request_at"] or float("nan"),
        last_answer=stats["last_answer_at"] or float("nan"),
        finished=attempt.finished_at.timestamp(),
        last_store=max(ran).timestamp() if ran else float("nan"),
        stores=len(set(ran)),
        done_get_start=get_start,
        done_get_end=get_end,
        gets=gets,
        report_ms=report_ms,
        most_in_flight=stats["most_in_flight"],
        requests=stats["requests"] - 1,  # the /stats ask counts itself
        metric=shown["metrics"][0] if shown["metrics"] else {},
    )


def describe(number: str, run: Run, keywords: int) -> str:
    base = run.last_answer
    failed = "" if run.queries_done == keywords else f", {run.queries_done} queries done"
    return (
        f"  {number:>7}  verdict {run.verdict!r} ({run.state}{failed}) "
        f"{run.after_last_answer:5.2f} s after the last answer [runner: last store "
        f"+{run.last_store - base:.2f}, done +{run.finished - base:.2f}; the GET that read "
        f"it +{run.done_get_start - base:.2f} to +{run.done_get_end - base:.2f}]; "
        f"whole {run.whole:.2f} s (POST {run.post_ms:.0f} ms, first call "
        f"+{run.first_request - run.post_sent:.2f} s, calls {base - run.first_request:.2f} s, "
        f"{run.stores} stores, {run.gets} GETs); "
        f"{run.most_in_flight} in flight, {run.requests} requests; GET of the done try "
        + "/".join(f"{ms:.0f}" for ms in run.report_ms)
        + " ms"
    )


# --- where a report's time goes ---------------------------------------------------------


@contextmanager
def stage_clock(module: Any, names: list[str], spent: dict[str, float]) -> Iterator[None]:
    """Wrap the module's functions `names` so their time adds up in `spent` (ms)."""
    originals = {name: getattr(module, name) for name in names}

    def clocked(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + (time.perf_counter() - began) * 1000.0

        return wrapper

    for name, function in originals.items():
        setattr(module, name, clocked(name, function))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(module, name, function)


STAGES = {
    "_baseline_lists": "baseline's lists (its snapshots)",
    "library_grades": "library grades (one statement)",
    "_row": "rows (each query's two lists)",
    "_agreement": "RBO and tau",
    "_score": "scores (score_keyword, both sides)",
    "compare_paired": "paired bootstrap and sign flips",
    "_metric_lines": "metric lines (with the bootstrap)",
    "_coverage": "coverage",
}


def profile_report(try_id: int) -> list[tuple[str, float]]:
    """Median ms of each stage of try_report, the API's rendering and JSON, in this
    process, on a done try."""
    from rest_framework.renderers import JSONRenderer

    from apps.api.tries import try_out
    from apps.tries import report
    from apps.tries.models import Try

    rounds: list[dict[str, float]] = []
    for _ in range(PROFILE_REPEATS):
        spent: dict[str, float] = {}
        attempt = Try.objects.select_related(
            "search_model", "baseline_try", "baseline_evaluation"
        ).get(id=try_id)
        with stage_clock(report, list(STAGES), spent):
            began = time.perf_counter()
            made = report.try_report(attempt)
            spent["whole report"] = (time.perf_counter() - began) * 1000.0
        began = time.perf_counter()
        data = try_out(made)
        spent["try_out (the API's dict)"] = (time.perf_counter() - began) * 1000.0
        began = time.perf_counter()
        rendered = JSONRenderer().render(data)
        spent[f"JSON ({len(rendered) / 1024:.0f} KB)"] = (time.perf_counter() - began) * 1000.0
        rounds.append(spent)
    names = list(rounds[-1])
    return [
        (STAGES.get(name, name), statistics.median(r.get(name, 0.0) for r in rounds))
        for name in names
    ]


# --- the bench --------------------------------------------------------------------------


def summary(name: str, values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    shown = [value * scale for value in values]
    digits = 2 if unit == "s" else 0
    return (
        f"{name}: median {statistics.median(shown):.{digits}f} {unit}, "
        f"max {max(shown):.{digits}f} {unit}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keywords", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.05, help="each answer's wait, s")
    parser.add_argument("--poll", type=float, default=0.25, help="wait between GETs, s")
    args = parser.parse_args()

    speed = benchkit.machine_speed()
    broker = redis.Redis.from_url(REDIS_URL)
    keys_before = redis_keys(broker)
    deadlines_before = deadline_exchanges(broker)
    delete_bench_keys(broker, deadlines_before)
    progress_note("creating the database")
    setup_django()
    from django.conf import settings
    from django.db import connection

    concurrency = settings.SEARCH_CONCURRENCY_PER_ENDPOINT
    progress_note(f"loading a finished evaluation of {args.keywords} keywords")
    setup = build_data(args.keywords, "http://127.0.0.1:9")
    analyze()
    connection.close()

    logs = Path(tempfile.mkdtemp(prefix="relevo-try-bench-"))
    deployment = Deployment(free_port(), logs)
    progress_note(f"starting gunicorn, two Celery workers and beat; logs in {logs}")
    runs: list[Run] = []
    load_before = os.getloadavg()
    try:
        deployment.start_all()
        api = Api(deployment.port, setup.token)
        progress_note("warm-up try")
        warm_up = run_one_try(api, setup, args.delay, args.poll)
        progress_note(describe("warm-up", warm_up, args.keywords).strip())
        for number in range(1, args.runs + 1):
            runs.append(run_one_try(api, setup, args.delay, args.poll))
            progress_note(describe(f"run {number}", runs[-1], args.keywords).strip())
    finally:
        deployment.stop_all()
        delete_bench_keys(broker, deadlines_before)
    load_after = os.getloadavg()
    progress_note("profiling one report in this process")
    stages = profile_report(runs[-1].try_id)
    left = sorted(key.decode(errors="replace") for key in redis_keys(broker) - keys_before)
    problems = deployment.problems()

    floor = args.keywords * args.delay / concurrency
    after = [run.after_last_answer for run in runs]
    correct = all(
        run.verdict == EXPECTED_VERDICT and run.queries_done == args.keywords for run in runs
    )
    ok = max(after) <= TARGET_S and correct
    print(speed)
    print(
        f"data: {args.keywords} keywords x {RESULTS} results, {setup.slots:,} people's grades "
        f"(a finished evaluation of the model at boost {BASELINE_BOOST}, the baseline); "
        f"the try: boost {TRIED_BOOST}, ndcg@10; endpoint {args.delay * 1000:.0f} ms an "
        f"answer, {concurrency} calls at once; GET every {args.poll:.2f} s after an answer"
    )
    print(
        "as deployed: gunicorn (config/gunicorn.conf.py), Celery worker (2) + pipeline "
        f"worker (2) + beat on Redis db 13, PostgreSQL {benchkit.BENCH_DATABASE}"
    )
    print(f"runs (a warm-up, then {len(runs)}; times from the last answer, wall clock):")
    for number, run in enumerate(runs, 1):
        print(describe(f"run {number}", run, args.keywords))
    line = runs[-1].metric
    if line:
        print(
            f"  the last run's {line['metric']}: {line['value']:.3f} against "
            f"{line['baseline']:.3f}, judged {line['judged']:.2f} / {line['baseline_judged']:.2f}, "
            f"difference {line['difference']:+.3f} [{line['ci_low']:+.3f}, {line['ci_high']:+.3f}] "
            f"over {line['compared']} queries, p adjusted {line['p_adjusted']:.4f}"
        )
    print(
        summary("verdict after the last answer", after)
        + f"; target <= {TARGET_S:.0f} s in every run   {'PASS' if ok else 'NOT MET'}"
    )
    if not correct:
        print(f"  some run's verdict was not {EXPECTED_VERDICT!r} over every query")
    print("  " + summary("runner: last answer -> done", [r.finished - r.last_answer for r in runs]))
    print(
        "  "
        + summary(
            "poll: done -> the GET that read it", [r.done_get_start - r.finished for r in runs]
        )
    )
    print(
        "  "
        + summary(
            "that GET's own time", [r.done_get_end - r.done_get_start for r in runs], "ms", 1000
        )
    )
    print(
        summary("whole run, POST -> verdict read", [run.whole for run in runs])
        + f" (floor {args.keywords} x {args.delay * 1000:.0f} ms / {concurrency} = {floor:.2f} s)"
    )
    print(summary("  search, POST -> last answer", [r.last_answer - r.post_sent for r in runs]))
    print(summary("    POST sent -> first call", [r.first_request - r.post_sent for r in runs]))
    print(
        summary("    first call -> last answer", [r.last_answer - r.first_request for r in runs])
        + f" (floor {floor:.2f} s)"
    )
    in_flight = [run.most_in_flight for run in runs]
    print(
        f"most calls in flight: {min(in_flight)} to {max(in_flight)} "
        f"(SEARCH_CONCURRENCY_PER_ENDPOINT {concurrency})   "
        f"{'OK' if set(in_flight) == {concurrency} else 'NOT AS EXPECTED'}; requests per "
        f"run {sorted({run.requests for run in runs})} (the keywords: {args.keywords})"
    )
    print(summary("GET of a done try", [ms for run in runs for ms in run.report_ms], "ms"))
    print(f"one report in this process (median of {PROFILE_REPEATS}), ms:")
    for name, ms in stages:
        print(f"  {ms:8.1f}  {name}")
    loads = " / ".join(f"{value:.2f}" for value in load_before + load_after)
    print(f"load average (1, 5, 15 min) before / after the runs: {loads}")
    if problems:
        print(f"errors logged ({len(problems)}): " + " | ".join(problems[:5]))
    if left:
        print(f"Redis db 13 keys new since the start, left alone: {left}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
