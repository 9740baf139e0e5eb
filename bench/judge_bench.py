"""Benchmark AI judging end to end, as deployed: Celery workers on Redis and PostgreSQL
run a judge's lanes against a local server speaking the OpenAI protocol.

Run: .venv/bin/python bench/judge_bench.py [--results 10000] [--latency 0.05]
     [--per-call 10] [--at-once 8] [--worker-processes 8] [--pipeline-processes 2]

It drops and recreates its own database (relevo_bench_judges) and uses Redis database 12
(its two queues are emptied before and after; the pipeline's gathering keys it makes
expire within seconds; nothing else there is touched). It loads
an active graded evaluation of `results` results (strategy 1, 10 results a keyword),
starts a model server on 127.0.0.1 that answers every call after `latency` seconds with
a grade for each result it was sent, and the Celery workers as docker-compose.yml runs
them: one reading both queues (prefork, `worker-processes`: a lane holds a worker
process while its calls wait, and a run has a lane for every 4 calls at once; at nice
6, as main() explains) and one reading only the pipeline's queue (prefork,
`pipeline-processes`; 0: none, the first does everything, at nice 0). Once both are up
and idle, it assigns a judge (`per-call` results per call, `at-once` calls at once)
and times:

1. results stored per second, from the assignment to the last grade stored;
   the limit of the setup is at-once / latency x per-call (8 / 0.05 x 10 =
   1,600 results/s; target: at least half of it);
2. how long after the last grade every keyword's metrics are scored, and whether the
   evaluation's means then equal the exact means of the stored values (target: 5 s);
3. the workers' resident memory (every process) at a quarter, half and the end of the
   run (target: flat);

and prints the CPU each part used until the metrics were exact, per call: the workers,
PostgreSQL (every PostgreSQL process of the machine: run it on a quiet one) and this
process (the model server).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import benchkit
from benchkit import ROOT, progress_note, setup_django, verdict

REDIS_URL = "redis://127.0.0.1:6379/12"
QUEUE = "relevo-bench-judges"
PIPELINE_QUEUE = "relevo-bench-judges-pipeline"
LANES_NICE = 6  # see main(): the lanes' worker beside the pipeline's, as in containers
benchkit.use_database("relevo_bench_judges")
import os  # noqa: E402  (the settings read the environment once)

os.environ["CELERY_BROKER_URL"] = REDIS_URL
os.environ["CELERY_TASK_DEFAULT_QUEUE"] = QUEUE
os.environ["CELERY_PIPELINE_QUEUE"] = PIPELINE_QUEUE
os.environ["AI_JUDGES_ALLOW_PRIVATE_ADDRESSES"] = "1"


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True
    latency = 0.05
    calls = 0


class Answer(BaseHTTPRequestHandler):
    """Grades each result it was sent (by the schema's id enum) after the latency, over
    kept-alive connections, as model servers do."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        schema = body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        time.sleep(self.server.latency)  # type: ignore[attr-defined]
        self.server.calls += 1  # type: ignore[attr-defined]
        judgements = [{"id": i, "grade": len(i) % 4, "reason": "bench"} for i in ids]
        content = json.dumps({"judgements": judgements})
        payload = json.dumps(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": 0,
                "model": "bench",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {"prompt_tokens": 500, "completion_tokens": 50, "total_tokens": 550},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def start_worker(
    queues: list[str], processes: int, log: Path, *, nice: int = 0
) -> subprocess.Popen:
    env = dict(os.environ, LOG_LEVEL="WARNING")
    command = [
        *(["nice", "-n", str(nice)] if nice else []),
        str(ROOT / ".venv" / "bin" / "celery"),
        "-A",
        "config",
        "worker",
        f"--queues={','.join(queues)}",
        f"--concurrency={processes}",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def _process_tree(worker: subprocess.Popen) -> list[int]:
    """The worker's process and its pool's (nice wraps it: the worker is nice's exec)."""
    pids = [worker.pid]
    children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children")
    if children.exists():
        pids += [int(pid) for pid in children.read_text().split()]
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU the processes and their exited children used so far (a
    PostgreSQL connection's process ends with its client; its parent then counts it)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += sum(int(value) for value in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def postgres_pids() -> list[int]:
    """Every PostgreSQL process of the machine (other clients' work counts too: run the
    bench on a quiet machine)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().split(" (", 1)[1].startswith("postgres"):
                pids.append(int(stat.parent.name))
        except (FileNotFoundError, IndexError):
            continue
    return pids


def cpu_used(workers: list[subprocess.Popen]) -> dict[str, float]:
    """CPU seconds so far of each worker, of PostgreSQL, and of this process (the model
    server and the progress polling)."""
    used = {
        name: cpu_seconds(_process_tree(worker))
        for name, worker in zip(["lanes' worker", "pipeline's worker"], workers, strict=False)
    }
    used["PostgreSQL"] = cpu_seconds(postgres_pids())
    used["this bench (model server)"] = time.process_time()
    return used


def wait_until_started(workers: list[subprocess.Popen], most_s: float = 120.0) -> float:
    """Wait until the workers are up and idle (importing Django and the apps takes a few
    seconds of CPU each, which must not fall into the measured run): until their
    processes used under 2 % of a core for a second. Returns the seconds waited."""
    began = time.monotonic()
    time.sleep(1.0)
    used = cpu_seconds([pid for worker in workers for pid in _process_tree(worker)])
    while time.monotonic() - began < most_s:
        time.sleep(1.0)
        now = cpu_seconds([pid for worker in workers for pid in _process_tree(worker)])
        if now - used < 0.02:
            break
        used = now
    return time.monotonic() - began


def workers_rss_mb(workers: list[subprocess.Popen]) -> float:
    """The resident memory of the workers and their pool processes, in MB."""
    pids = [pid for worker in workers for pid in _process_tree(worker)]
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--per-call", type=int, default=10)
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--worker-processes", type=int, default=8)
    parser.add_argument("--pipeline-processes", type=int, default=2)
    args = parser.parse_args()

    import redis

    broker = redis.Redis.from_url(REDIS_URL)
    broker.delete(QUEUE, PIPELINE_QUEUE)
    setup_django()
    from apps.accounts.services import team_create
    from apps.evaluations.models import Keyword
    from apps.judges import controls
    from apps.judges.models import JudgeRun, RunStatus
    from apps.judges.services import judge_create

    per_keyword = 10
    shape = benchkit.Shape(args.results // per_keyword, per_keyword, 1, 0.0)
    team = team_create(name="Bench", owner_email="bench@example.test", owner_password="x" * 12)
    grades = [[[None] for _ in range(per_keyword)] for _ in range(shape.keywords)]
    evaluation = benchkit.build_evaluation(team, "Judged", shape, grades, [("ndcg", 10)])
    Keyword.objects.filter(evaluation=evaluation).update(needs_scoring=False)

    server = ModelServer(("127.0.0.1", 0), Answer)
    server.latency = args.latency
    threading.Thread(target=server.serve_forever, daemon=True).start()
    judge = judge_create(
        team=team,
        name="Bench judge",
        protocol="openai",
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
        model_name="bench",
        results_per_call=args.per_call,
        calls_at_once=args.at_once,
    )
    logs = Path("/tmp") / f"relevo-judge-bench-{int(time.time())}"
    logs.mkdir()
    # docker-compose.yml runs the two workers in containers of their own, which share the
    # CPU by container, each alike however many processes it has. Here they share one
    # machine by process, and eight lanes would outweigh the pipeline's processes (the
    # metrics then fell 23-54 s behind the last grade, bench/README.md): the lanes' worker
    # runs under nice 6, where eight processes weigh about what two at nice 0 do (Linux
    # weighs a process at nice 6 272, at nice 0 1024), as the two containers would.
    lanes_nice = LANES_NICE if args.pipeline_processes else 0
    progress_note(
        f"starting the workers ({args.worker_processes} processes on both queues at nice "
        f"{lanes_nice}, {args.pipeline_processes} on the pipeline's); logs in {logs}"
    )
    workers = [
        start_worker(
            [QUEUE, PIPELINE_QUEUE], args.worker_processes, logs / "worker.log", nice=lanes_nice
        )
    ]
    if args.pipeline_processes:
        pipeline_log = logs / "pipeline-worker.log"
        workers.append(start_worker([PIPELINE_QUEUE], args.pipeline_processes, pipeline_log))
    started_in = wait_until_started(workers)
    progress_note(f"the workers started in {started_in:.1f} s")
    memory: list[tuple[str, float]] = []
    try:
        cpu_before = cpu_used(workers)
        started = time.monotonic()
        run = controls.run_start(judge=judge, evaluation=evaluation)
        marks = {args.results // 4: "a quarter", args.results // 2: "half"}
        last_graded, last_change = 0, time.monotonic()
        while True:
            run.refresh_from_db(fields=["graded", "failed", "status"])
            done = run.graded + run.failed
            for at, name in list(marks.items()):
                if done >= at:
                    memory.append((name, workers_rss_mb(workers)))
                    del marks[at]
            if done != last_graded:
                last_graded, last_change = done, time.monotonic()
            if run.status != RunStatus.RUNNING or done >= args.results:
                break
            if time.monotonic() - last_change > 60:
                raise SystemExit(f"no progress for 60 s at {done} results; see {logs}")
            time.sleep(0.05)
        stored = time.monotonic() - started
        memory.append(("the end", workers_rss_mb(workers)))
        scored_after = None
        while time.monotonic() - started - stored < 60:
            if not Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists():
                scored_after = time.monotonic() - started - stored
                break
            time.sleep(0.05)
        cpu_after = cpu_used(workers)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)
        broker.delete(QUEUE, PIPELINE_QUEUE)
    run = JudgeRun.objects.get(id=run.id)
    limit = args.at_once / args.latency * args.per_call
    rate = run.graded / stored
    problems = benchkit.check_means(evaluation.id)
    print(
        f"judged {run.graded} results ({run.failed} failed) in {stored:.1f} s with "
        f"{run.calls} calls ({server.calls} answered): {rate:.0f} results/s; the setup's "
        f"limit {limit:.0f}/s; target >= {limit / 2:.0f}/s   {verdict(rate >= limit / 2)}"
    )
    if scored_after is None:
        print("metrics: keywords still marked 60 s after the last grade   FAIL")
    else:
        print(
            f"metrics scored {scored_after:.1f} s after the last grade; target <= 5 s   "
            f"{verdict(scored_after <= 5)}"
        )
    print(f"means == exact fsum means: {'OK' if not problems else problems[:3]}")
    shown = ", ".join(f"{name} {mb:.0f} MB" for name, mb in memory)
    growth = memory[-1][1] / memory[0][1] if memory and memory[0][1] else float("nan")
    print(f"workers' RSS: {shown} (end / first {growth:.2f}; target flat)")
    spent = {name: cpu_after[name] - cpu_before[name] for name in cpu_before}
    print(
        "CPU until the metrics were exact, per call: "
        + ", ".join(
            f"{name} {seconds / run.calls * 1000:.1f} ms" for name, seconds in spent.items()
        )
        + f" ({sum(spent.values()):.1f} s in all)"
    )
    print(benchkit.machine_speed())


if __name__ == "__main__":
    main()
