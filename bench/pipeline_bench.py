"""Benchmark Relevo's grade-to-metrics pipeline on PostgreSQL.

Run: .venv/bin/python bench/pipeline_bench.py [--keywords N] [--small-keywords N] [--grades N]

It drops and recreates its own database (relevo_bench), migrates it and loads two
evaluations of the same shape (snapshots x strategy slots per keyword, graded scale, most
slots graded at random with a fixed seed): a big one and a small one. Then it times

1. a full recompute of the big evaluation (`recompute_evaluation`), the first thing that
   scores anything: the loaded keywords are marked as the grades would have left them;
2. single grades on random keywords of both evaluations, interleaved: the grade write
   (`slot_record_grade`) and, separately, what the worker does for the one task it
   queues (`recompute_keywords`). The cost of one recompute must not grow with the size
   of the evaluation, so the big/small ratio of the medians has a target too.

Celery is never involved: `pipeline.start_recompute` is replaced by a counter while the
bench runs, and the bench calls `recompute_keywords` itself, exactly once per grade.
Afterwards it checks that the incrementally kept means equal an exact (fsum) mean of the
stored keyword values, and that stored values equal the engine's on a sample.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from unittest import mock

import benchkit
from benchkit import (
    Shape,
    analyze,
    build_evaluation,
    percentile,
    progress_note,
    setup_django,
    timed,
    verdict,
)

if TYPE_CHECKING:
    from apps.evaluations.models import Evaluation

# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database("relevo_bench")

METRICS = [("ndcg", 10), ("precision", 10), ("ap", 10), ("err", 10), ("dcg", 10)]
SCALE_GRADES = [0, 1, 2, 3]  # graded scale

FULL_RECOMPUTE_TARGET_S = 15.0
SINGLE_RECOMPUTE_TARGET_MS = 50.0
RATIO_TARGET = 1.5
TOLERANCE = benchkit.MEAN_TOLERANCE
ENGINE_SAMPLE = 200  # keywords per evaluation compared with a fresh score_keyword


def random_grades(shape: Shape, rng: random.Random) -> list[list[list[int | None]]]:
    """Per keyword, per snapshot, per slot: a grade, or None for the ungraded share."""
    return [
        [
            [
                rng.choice(SCALE_GRADES) if rng.random() < shape.graded_share else None
                for _ in range(shape.strategy)
            ]
            for _ in range(shape.snapshots)
        ]
        for _ in range(shape.keywords)
    ]


# --- timing -----------------------------------------------------------------------------


@dataclass
class GradeTimings:
    write_ms: list[float]
    recompute_ms: list[float]


@contextmanager
def recompute_not_queued() -> Iterator[list[int]]:
    """Grades queue nothing; the list collects the keyword ids they would have queued."""
    queued: list[int] = []
    with mock.patch(
        "apps.scoring.pipeline.start_recompute",
        lambda *, evaluation_id, keyword_ids: queued.extend(keyword_ids),
    ):
        yield queued


def grade_and_recompute(slot_id: int, keyword_id: int, grade: int, queued: list[int]):
    """One grade as a grader gives it, then the one task the worker runs for it."""
    from apps.judging.judgements import Giver, slot_judge
    from apps.scoring.services import recompute_keywords

    queued.clear()
    write_ms, _ = timed(
        lambda: slot_judge(slot_id=slot_id, giver=Giver.recorded(None, "bench"), grade=grade)
    )
    if queued != [keyword_id]:
        raise AssertionError(f"the grade queued {queued}, expected exactly [{keyword_id}]")
    recompute_ms, rounds = timed(lambda: recompute_keywords(keyword_ids=[keyword_id])[0])
    if rounds != 1:
        raise AssertionError(f"recompute_keywords ran {rounds} rounds, expected exactly 1")
    return write_ms, recompute_ms


def random_slot_picks(
    evaluation_id: int, count: int, rng: random.Random
) -> list[tuple[int, int, int]]:
    """(slot id, keyword id, grade) for `count` grades on random keywords, chosen up front."""
    from apps.evaluations.models import FeedbackSlot, Keyword

    keyword_ids = list(
        Keyword.objects.filter(evaluation_id=evaluation_id).values_list("id", flat=True)
    )
    picks = []
    for _ in range(count):
        keyword_id = rng.choice(keyword_ids)
        slot_ids = list(
            FeedbackSlot.objects.filter(keyword_id=keyword_id).values_list("id", flat=True)
        )
        picks.append((rng.choice(slot_ids), keyword_id, rng.choice(SCALE_GRADES)))
    return picks


def time_single_grades(evaluations: dict[str, Evaluation], grades: int, rng: random.Random):
    """Interleave the evaluations grade by grade, so drift (caches, autovacuum) hits both."""
    picks = {label: random_slot_picks(e.id, grades + 5, rng) for label, e in evaluations.items()}
    timings = {label: GradeTimings([], []) for label in evaluations}
    with recompute_not_queued() as queued:
        for label in evaluations:  # warm-up, not counted: first queries, plan caches
            for pick in picks[label][:5]:
                grade_and_recompute(*pick, queued)
        for number in range(5, grades + 5):
            for label in evaluations:
                write_ms, recompute_ms = grade_and_recompute(*picks[label][number], queued)
                timings[label].write_ms.append(write_ms)
                timings[label].recompute_ms.append(recompute_ms)
    return timings


def queries_of_one_grade(evaluation_id: int, rng: random.Random) -> tuple[int, int]:
    """How many statements a grade write and its recompute send (not timed)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.judging.judgements import Giver, slot_judge

    [(slot_id, keyword_id, grade)] = random_slot_picks(evaluation_id, 1, rng)
    with recompute_not_queued() as queued:
        from apps.scoring.services import recompute_keywords

        with CaptureQueriesContext(connection) as write:
            slot_judge(slot_id=slot_id, giver=Giver.recorded(None, "bench"), grade=grade)
        assert queued == [keyword_id]
        with CaptureQueriesContext(connection) as recompute:
            recompute_keywords(keyword_ids=[keyword_id])
    return len(write.captured_queries), len(recompute.captured_queries)


# --- correctness ------------------------------------------------------------------------


def check_state(evaluation_id: int) -> list[str]:
    """Progress equals the slots graded; nothing is left marked or leased."""
    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword

    problems = []
    evaluation = Evaluation.objects.get(id=evaluation_id)
    graded = FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grade__isnull=False).count()
    if evaluation.graded_slots != graded:
        problems.append(f"graded_slots {evaluation.graded_slots} != {graded} graded slots")
    if evaluation.progress != graded / evaluation.total_slots:
        problems.append(f"progress {evaluation.progress} != {graded}/{evaluation.total_slots}")
    keywords = Keyword.objects.filter(evaluation_id=evaluation_id)
    if keywords.filter(needs_scoring=True).exists():
        problems.append("keywords are still marked")
    if keywords.filter(scoring_lease_until__isnull=False).exists():
        problems.append("keywords still hold a lease")
    return problems


def check_values_against_engine(evaluation_id: int, sample: int, rng: random.Random):
    """Stored keyword and snapshot values equal a fresh score_keyword, bit for bit."""
    from apps.evaluations.models import Keyword
    from apps.scoring.loading import load_keyword_inputs
    from apps.scoring.models import KeywordMetric

    problems = []
    keyword_ids = list(
        Keyword.objects.filter(evaluation_id=evaluation_id).values_list("id", flat=True)
    )
    for keyword_id in rng.sample(keyword_ids, min(sample, len(keyword_ids))):
        inputs = load_keyword_inputs(keyword_id=keyword_id)
        assert inputs is not None
        expected = inputs.score()
        stored = {
            (metric, k): value
            for metric, k, value in KeywordMetric.objects.filter(keyword_id=keyword_id).values_list(
                "metric", "k", "value"
            )
        }
        if stored != expected.metrics:
            problems.append(f"keyword {keyword_id}: stored {stored} != {expected.metrics}")
        snapshot_values = [snapshot.stored_value for snapshot in inputs.snapshots]
        if snapshot_values != expected.snapshot_values:
            problems.append(f"keyword {keyword_id}: snapshot values differ")
    return problems


# --- report -----------------------------------------------------------------------------


@dataclass
class Results:
    big: Shape
    small: Shape
    grades: int
    build_s: float
    full_ms: float
    small_full_ms: float
    timings: dict[str, GradeTimings]
    write_queries: int
    recompute_queries: int
    problems: list[str]


def run(args: argparse.Namespace) -> Results:
    """Build, time the full recompute, time single grades, then check correctness."""
    from apps.accounts.services import team_create
    from apps.scoring.services import recompute_evaluation

    rng = random.Random(args.seed)
    big = Shape(args.keywords, args.snapshots, args.strategy, args.graded_share)
    small = Shape(args.small_keywords, args.snapshots, args.strategy, args.graded_share)

    progress_note(f"building {big.slots} + {small.slots} slots")
    started = time.perf_counter()
    team = team_create(name="Bench", owner_email="bench@example.test")
    evaluations = {
        "big": build_evaluation(team, "Big", big, random_grades(big, rng), METRICS),
        "small": build_evaluation(team, "Small", small, random_grades(small, rng), METRICS),
    }
    analyze()
    build_s = time.perf_counter() - started

    progress_note("full recomputes")
    full_ms, _ = timed(lambda: recompute_evaluation(evaluation_id=evaluations["big"].id))
    small_full_ms, _ = timed(lambda: recompute_evaluation(evaluation_id=evaluations["small"].id))
    # Checked now, before single grades move the means away from exact.
    problems = benchkit.check_means(evaluations["big"].id) + check_state(evaluations["big"].id)

    progress_note(f"{args.grades} single grades on each evaluation")
    timings = time_single_grades(evaluations, args.grades, rng)
    write_queries, recompute_queries = queries_of_one_grade(evaluations["big"].id, rng)

    progress_note("checking correctness")
    for evaluation in evaluations.values():
        problems += benchkit.check_means(evaluation.id) + check_state(evaluation.id)
        problems += check_values_against_engine(evaluation.id, ENGINE_SAMPLE, rng)
    return Results(
        big=big,
        small=small,
        grades=args.grades,
        build_s=build_s,
        full_ms=full_ms,
        small_full_ms=small_full_ms,
        timings=timings,
        write_queries=write_queries,
        recompute_queries=recompute_queries,
        problems=problems,
    )


def report(results: Results) -> bool:
    """Print the figures with their targets; True when every target and check passes."""
    metrics = ", ".join(f"{metric}@{k}" for metric, k in METRICS)
    print(f"PostgreSQL database {benchkit.BENCH_DATABASE}; metrics {metrics}")
    for label, shape in (("big", results.big), ("small", results.small)):
        print(
            f"{label} evaluation: {shape.keywords} keywords x {shape.snapshots} snapshots x "
            f"{shape.strategy} slots = {shape.slots} slots, graded scale, "
            f"~{shape.graded_share:.0%} graded"
        )
    print(f"data built (COPY / bulk_create, ANALYZE) in {results.build_s:.1f} s (not a target)")
    print()

    full_ok = results.full_ms / 1000 <= FULL_RECOMPUTE_TARGET_S
    print(
        f"full recompute, big ({results.big.slots} slots): {results.full_ms / 1000:.2f} s"
        f"   target <= {FULL_RECOMPUTE_TARGET_S:.0f} s   {verdict(full_ok)}"
    )
    print(
        f"full recompute, small ({results.small.slots} slots): "
        f"{results.small_full_ms:.0f} ms (not a target)"
    )
    print()

    print(
        f"single grade: {results.grades} grades on random keywords of each evaluation, "
        "interleaved; the worker's recompute_keywords timed apart from the grade write"
    )
    medians = {}
    all_ok = full_ok
    for label in ("big", "small"):
        recompute = results.timings[label].recompute_ms
        medians[label] = statistics.median(recompute)
        ok = medians[label] <= SINGLE_RECOMPUTE_TARGET_MS
        all_ok &= ok
        print(
            f"  recompute ({label}): median {medians[label]:.1f} ms, "
            f"p95 {percentile(recompute, 0.95):.1f} ms"
            f"   target median <= {SINGLE_RECOMPUTE_TARGET_MS:.0f} ms   {verdict(ok)}"
        )
    ratio = medians["big"] / medians["small"]
    ratio_ok = ratio <= RATIO_TARGET
    all_ok &= ratio_ok
    print(
        f"  ratio big/small of the recompute medians: {ratio:.2f}"
        f"   target <= {RATIO_TARGET}   {verdict(ratio_ok)}"
    )
    for label in ("big", "small"):
        write = results.timings[label].write_ms
        print(
            f"  grade write ({label}, slot_record_grade): "
            f"median {statistics.median(write):.1f} ms, "
            f"p95 {percentile(write, 0.95):.1f} ms (not a target)"
        )
    print(
        f"  statements for one grade (big): write {results.write_queries}, "
        f"recompute {results.recompute_queries}"
    )
    print()

    print(
        f"correctness: incremental means == exact fsum means (within {TOLERANCE:g}), "
        f"progress, marks, leases, history points, {ENGINE_SAMPLE} sampled keywords per "
        f"evaluation == engine: {'OK' if not results.problems else 'FAILED'}"
    )
    for problem in results.problems[:20]:
        print("  " + problem)
    all_ok &= not results.problems
    print(f"overall: {verdict(all_ok)}")
    return all_ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keywords", type=int, default=10_000, help="big evaluation")
    parser.add_argument("--small-keywords", type=int, default=100, help="small evaluation")
    parser.add_argument("--grades", type=int, default=200, help="single grades per evaluation")
    parser.add_argument("--snapshots", type=int, default=20, help="snapshots per keyword")
    parser.add_argument("--strategy", type=int, default=3, choices=[1, 3], help="slots each")
    parser.add_argument("--graded-share", type=float, default=0.9, help="share graded")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    setup_django()
    return 0 if report(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
