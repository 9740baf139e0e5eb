"""Soak: grades, keyword recomputes and sweeps at once on PostgreSQL, with no deadlock.

Under 64 graders the sweep's exact-means step and a keyword's recompute used to deadlock
about once a minute: each locked the evaluation's row and its metric rows, in opposite
orders (apps/scoring/store.py, "Lock order"). PostgreSQL breaks a deadlock by failing
one of the transactions and counts it in pg_stat_database.deadlocks; this test reads that
count for the test database before and after and requires no change.
"""

import random
import threading
import time
import traceback
from collections.abc import Callable

import pytest
from django.db import connection

from apps.evaluations.models import FeedbackSlot
from apps.judging.judgements import Giver, slot_judge
from apps.scoring import services, store
from tests.factories import make_evaluation
from tests.metrics_check import metric_differences
from tests.worker import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SOAK_SECONDS = 20
GRADERS = 6  # each runs its keyword's recompute right after its grade, as a worker would
SWEEPERS = 2  # each runs the minute sweep over and over, exact means included


def deadlocks_so_far() -> int:
    """PostgreSQL's count of deadlocks in the test database (all sessions)."""
    with connection.cursor() as cursor:
        # Statistics read in a transaction are a snapshot; take a fresh one.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def run_until(seconds: float, workers: dict[str, Callable[[random.Random], None]]) -> list[str]:
    """Run each worker's step over and over, each in a thread of its own (its own database
    connection), all for `seconds`. Returns the traceback of every step that failed."""
    stop_at = time.monotonic() + seconds
    errors: list[str] = []

    def loop(name: str, step: Callable[[random.Random], None]) -> None:
        rng = random.Random(name)
        try:
            while time.monotonic() < stop_at:
                try:
                    step(rng)
                except Exception:
                    errors.append(f"{name}:\n{traceback.format_exc()}")
        finally:
            connection.close()  # the session ends, and PostgreSQL flushes its statistics

    threads = [
        threading.Thread(target=loop, args=(name, step), daemon=True)
        for name, step in workers.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    assert not any(thread.is_alive() for thread in threads), "a thread never finished"
    return errors


def test_grades_recomputes_and_sweeps_at_once_never_deadlock(postgres):
    evaluation = make_evaluation(
        metrics=[("ndcg", 5), ("precision", 5), ("cg", 3), ("ap", 5)],
        keywords={f"keyword {n:02d}": 5 for n in range(16)},
    )
    slot_ids = list(FeedbackSlot.objects.filter(evaluation=evaluation).values_list("id", flat=True))
    before = deadlocks_so_far()

    def grade(rng: random.Random) -> None:
        # The recompute task runs in this thread once the grade commits (tests run tasks
        # in-process), taking the same locks a worker takes.
        slot_judge(slot_id=rng.choice(slot_ids), giver=Giver.recorded(), grade=rng.randrange(4))

    def sweep(rng: random.Random) -> None:
        services.recompute_marked()
        store.store_exact_means(evaluation_id=evaluation.id)

    workers = {f"grader {n}": grade for n in range(GRADERS)}
    workers.update({f"sweeper {n}": sweep for n in range(SWEEPERS)})
    errors = run_until(SOAK_SECONDS, workers)

    # A deadlock is counted when the session that lost it reports its statistics, at the
    # latest when it closes: give the closed sessions a moment.
    wait_for(lambda: deadlocks_so_far() > before, seconds=3)
    assert deadlocks_so_far() == before, f"{len(errors)} failed steps; the first:\n{errors[:1]}"
    assert not errors, f"{len(errors)} failed steps; the first:\n{errors[0]}"

    # And nothing was lost on the way: after a last sweep every metric is exact.
    services.recompute_marked()
    assert metric_differences(evaluation.id) == []
