"""Benchmark the agreement page, the disagreement queue and a lead's decision on PostgreSQL.

Run: .venv/bin/python bench/agreement_bench.py [--keywords N] [--snapshots N] [--runs N]

It drops and recreates its own database (relevo_bench_agreement), loads one graded
evaluation of keywords x snapshots x 3 slots (default 10,000 x 10 x 3 = 300,000 slots,
~90% graded by 12 graders who mostly agree: each grade is the result's true grade, one
off now and then), runs the recompute that scores it, and times, median of --runs:

1. `evaluation_agreement`: the read (one query for the imported graders' names, one for
   every graded slot as integers), the statistics and the open-disagreement count
   (numpy, over what was read), the graders' emails and the decided snapshots; and,
   apart, the SQL GROUP BY that finds the queue's disagreements in order;
2. the agreement page, the first page of the disagreement queue and the agreement API,
   through Django's test client (the whole request: session, rendering, JSON);
3. a lead's decision (`snapshot_decide`) and the recompute it queues, run here directly.

There is no numeric target for these; the figures are recorded in
bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
from collections.abc import Callable
from functools import partial
from typing import TypeVar
from unittest import mock

import benchkit
from benchkit import Shape, analyze, build_evaluation, progress_note, setup_django, timed

benchkit.use_database("relevo_bench_agreement")
os.environ["ALLOWED_HOSTS"] = "testserver"

GRADERS = 12
METRICS = [("ndcg", 10), ("precision", 10)]

T = TypeVar("T")


def noisy_grades(shape: Shape, rng: random.Random) -> list[list[list[int | None]]]:
    """Per keyword, per snapshot, per slot: the snapshot's true grade, one off a quarter
    of the time, or None for the ungraded share."""

    def grade(truth: int) -> int | None:
        if rng.random() >= shape.graded_share:
            return None
        if rng.random() < 0.25:
            return min(3, max(0, truth + rng.choice((-1, 1))))
        return truth

    return [
        [
            [grade(truth) for _ in range(shape.strategy)]
            for truth in (rng.choice((0, 1, 2, 3)) for _ in range(shape.snapshots))
        ]
        for _ in range(shape.keywords)
    ]


def spread_graders(evaluation_id: int) -> None:
    """The bench loader names every grader "bench"; give each slot one of GRADERS names,
    never the same one twice on a snapshot (as the queue guarantees)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE evaluations_feedbackslot SET external_grader = "
            "'grader-' || ((snapshot_id + index) %% %s) "
            "WHERE evaluation_id = %s AND grade IS NOT NULL",
            [GRADERS, evaluation_id],
        )


def median_ms(function: Callable[[], T], runs: int) -> tuple[float, float, T]:
    """Median and minimum over runs, after one warm-up call, and the last result."""
    result = function()
    times = []
    for _ in range(runs):
        elapsed, result = timed(function)
        times.append(elapsed)
    return statistics.median(times), min(times), result


def run(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.accounts.models import Membership, User
    from apps.accounts.services import team_create
    from apps.evaluations.models import Snapshot
    from apps.insights.agreement import selectors
    from apps.insights.agreement.report import agreement_report
    from apps.judging.decisions import snapshot_decide
    from apps.scoring import pipeline
    from apps.scoring.services import recompute_evaluation, recompute_keywords

    rng = random.Random(args.seed)
    shape = Shape(args.keywords, args.snapshots, 3, args.graded_share)
    progress_note(f"building {shape.slots} slots")
    team = team_create(name="Bench", owner_email="lead@bench.test")
    evaluation = build_evaluation(team, "Agreement", shape, noisy_grades(shape, rng), METRICS)
    spread_graders(evaluation.id)
    recompute_evaluation(evaluation_id=evaluation.id)
    analyze()
    graded = evaluation.__class__.objects.get(id=evaluation.id).graded_slots

    print(f"PostgreSQL database {benchkit.BENCH_DATABASE}")
    print(
        f"evaluation: {shape.keywords} keywords x {shape.snapshots} snapshots x 3 slots = "
        f"{shape.slots} slots, graded scale, {graded} graded by {GRADERS} graders"
    )
    print(f"median (min) of {args.runs} runs after a warm-up, in ms")
    print()

    progress_note("evaluation_agreement and its parts")
    read_ms, read_min, read = median_ms(lambda: selectors.evaluation_ratings(evaluation), args.runs)
    ratings = read.ratings
    stats_ms, stats_min, report = median_ms(
        lambda: agreement_report(ratings, scale="graded", ratings_per_item=3), args.runs
    )
    count_ms, count_min, open_count = median_ms(
        lambda: selectors.open_disagreement_count(evaluation), args.runs
    )  # the queue page's GROUP BY; the agreement page counts from the read instead
    whole_ms, whole_min, _ = median_ms(
        lambda: selectors.evaluation_agreement(evaluation), args.runs
    )
    with CaptureQueriesContext(connection) as queries:
        selectors.evaluation_agreement(evaluation)
    print(f"evaluation_agreement: {whole_ms:.0f} ({whole_min:.0f}) ms, {len(queries)} queries")
    print(
        f"  read graded slots ({len(ratings)} rows; names, then slots as integers): "
        f"{read_ms:.0f} ({read_min:.0f})"
    )
    print(f"  statistics (kappa, alpha, observed, per grader): {stats_ms:.0f} ({stats_min:.0f})")
    print(
        f"  (not part of it) the queue's GROUP BY over the slots, {open_count} open: "
        f"{count_ms:.0f} ({count_min:.0f})"
    )
    print(
        f"  values: kappa {report.kappa.value:.4f} over {report.kappa.items} results, "
        f"alpha (ordinal) {report.alpha.value:.4f} over {report.alpha.items}"
    )
    print()

    progress_note("pages and API through the test client")
    lead = Client()
    lead.force_login(User.objects.get(email="lead@bench.test"))
    from apps.accounts.api_tokens import api_token_create

    _token, text = api_token_create(team=team, name="bench")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    for label, client, url in (
        ("agreement page", lead, f"/evaluations/{evaluation.id}/agreement/"),
        ("disagreement queue, first page", lead, f"/evaluations/{evaluation.id}/disagreements/"),
        ("agreement API", api, f"/api/v1/evaluations/{evaluation.id}/agreement/"),
    ):
        ms, least, response = median_ms(partial(client.get, url), args.runs)
        assert response.status_code == 200, (url, response.status_code)
        print(f"{label}: {ms:.0f} ({least:.0f}) ms")
    print()

    progress_note("decisions")
    membership = Membership.objects.select_related("user").get(team=team, role="owner")
    snapshot_ids = list(
        Snapshot.objects.filter(keyword__evaluation=evaluation).values_list("id", "keyword_id")
    )
    decide_times, recompute_times = [], []
    with mock.patch.object(pipeline, "start_recompute"):  # run it here, timed apart
        for snapshot_id, keyword_id in rng.sample(snapshot_ids, args.decisions):
            ms, _ = timed(
                partial(
                    snapshot_decide,
                    membership=membership,
                    snapshot_id=snapshot_id,
                    grade=rng.choice((0, 1, 2, 3)),
                )
            )
            decide_times.append(ms)
            ms, _ = timed(partial(recompute_keywords, keyword_ids=[keyword_id]))
            recompute_times.append(ms)
    print(
        f"lead's decision ({args.decisions} on random results): write median "
        f"{statistics.median(decide_times):.1f} ms, its keyword's recompute median "
        f"{statistics.median(recompute_times):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keywords", type=int, default=10_000)
    parser.add_argument("--snapshots", type=int, default=10)
    parser.add_argument("--graded-share", type=float, default=0.9)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    setup_django()
    run(args)


if __name__ == "__main__":
    main()
