"""Benchmark starting an evaluation whose keywords run against a search endpoint.

Run: .venv/bin/python bench/start_bench.py [--keywords 1000] [--delay 0.05] [--results 10]

Target: starting an evaluation of 1,000 keywords against a local endpoint that
answers in 50 ms stores all snapshots in at most 10 s, with 8 concurrent requests per
endpoint.

It drops and recreates its own PostgreSQL database (relevo_bench_start), runs the test
search server (tests/search_server.py) in a separate process on 127.0.0.1 with every
answer delayed by --delay seconds, makes a model for it and an evaluation with
--keywords keywords (strategy 3), and times evaluation_start to the evaluation opening.
Without a broker the start's task runs in this process, exactly the code a worker runs
(apps.lifecycle.fetching): 8 threads call the endpoint, this thread stores results.
The floor is keywords x delay / 8 (6.25 s for the defaults); the rest is overhead.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
import urllib.request

import benchkit
from benchkit import progress_note, setup_django, verdict

benchkit.use_database("relevo_bench_start")
os.environ["SEARCH_ALLOW_PRIVATE_ADDRESSES"] = "1"
os.environ.pop("CELERY_BROKER_URL", None)

TARGET_SECONDS = 10.0


def serve(port_queue: multiprocessing.Queue, delay: float, results: int) -> None:
    import sys

    sys.path.insert(0, str(benchkit.ROOT))
    from tests.search_server import SearchServer

    server = SearchServer()
    server.delay_seconds = delay
    server.results = results
    port_queue.put(server.server_address[1])
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keywords", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--results", type=int, default=10)
    args = parser.parse_args()

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(
        target=serve, args=(ports, args.delay, args.results), daemon=True
    )
    server.start()
    base_url = f"http://127.0.0.1:{ports.get(timeout=10)}"

    progress_note("creating the database")
    setup_django()
    from django.conf import settings

    from apps.accounts.services import team_create
    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Snapshot
    from apps.evaluations.services import evaluation_create_with_keywords
    from apps.lifecycle.steps import evaluation_start
    from tests.factories import make_search_model

    team = team_create(name="Bench", owner_email="lead@example.test")
    model = make_search_model(team, base_url)
    evaluation = evaluation_create_with_keywords(
        team=team,
        name="Start bench 1",
        metrics=[("ndcg", 10)],
        keywords=[f"keyword {n}" for n in range(args.keywords)],
        strategy=3,
        search_model=model,
    )

    progress_note(f"starting an evaluation of {args.keywords} keywords")
    began = time.perf_counter()
    if os.environ.get("BENCH_PROFILE"):
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(evaluation_start, evaluation=evaluation)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    else:
        evaluation_start(evaluation=evaluation)
    elapsed = time.perf_counter() - began

    evaluation = Evaluation.objects.get(id=evaluation.id)
    stats = json.loads(urllib.request.urlopen(base_url + "/stats").read())
    concurrency = settings.SEARCH_CONCURRENCY_PER_ENDPOINT
    floor = args.keywords * args.delay / concurrency
    snapshots = Snapshot.objects.filter(keyword__evaluation=evaluation).count()
    failed = Keyword.objects.filter(evaluation=evaluation, failed=True).count()
    slots = FeedbackSlot.objects.filter(evaluation=evaluation).count()
    server.terminate()

    complete = snapshots == args.keywords * args.results and failed == 0
    print(
        f"start of {args.keywords} keywords, endpoint delay {args.delay * 1000:.0f} ms, "
        f"{args.results} results each, strategy 3"
    )
    print(f"  status after start       {evaluation.status}")
    print(f"  snapshots / slots        {snapshots} / {slots}  (failed keywords: {failed})")
    print(
        f"  requests                 {stats['requests']}  "
        f"most in flight {stats['most_in_flight']} (limit {concurrency})"
    )
    print(
        f"  time to open             {elapsed:.2f} s  (floor {floor:.2f} s, "
        f"overhead {elapsed - floor:.2f} s)"
    )
    ok = complete and evaluation.status == "active" and elapsed <= TARGET_SECONDS
    ok = ok and stats["most_in_flight"] <= concurrency
    print(f"  target <= {TARGET_SECONDS:.0f} s, <= {concurrency} in flight: {verdict(ok)}")


if __name__ == "__main__":
    main()
