"""Benchmark the lead's pages on a big evaluation on PostgreSQL.

Run: .venv/bin/python bench/lead_pages_bench.py [--keywords N] [--snapshots N] [--runs N]

It drops and recreates its own database (relevo_bench_lead_pages), loads one graded
evaluation of keywords x snapshots x 1 slot (default 10,000 x 10 = 100,000 slots, 90%
graded), scores it, spreads its grades over 20 members and 30 days, gives each metric a
history of 3,000 minutes, pins it and one metric, and times through Django's test client
(the whole request: session, queries, rendering), median (min) of --runs after a warm-up:
the evaluation page (first page; sorted by a metric, 250 a page; filtered to keywords
with open results), the live answer an open page asks after a change, a keyword's page, the
leaderboard (30 days) and the dashboard. Each line gives the number of queries too.

There is no numeric target for these; the figures are recorded in
bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
from functools import partial

import benchkit
from benchkit import Shape, analyze, build_evaluation, progress_note, setup_django, timed

benchkit.use_database("relevo_bench_lead_pages")
os.environ["ALLOWED_HOSTS"] = "testserver"

MEMBERS = 20
HISTORY_MINUTES = 3_000
METRICS = [("ndcg", 10), ("precision", 10), ("err", 10)]


def graded_share_of(shape: Shape, rng: random.Random) -> list[list[list[int | None]]]:
    return [
        [
            [rng.choice((0, 1, 2, 3)) if rng.random() < shape.graded_share else None]
            for _ in range(shape.snapshots)
        ]
        for _ in range(shape.keywords)
    ]


def spread_grades(evaluation_id: int, member_ids: list[int]) -> None:
    """Give each graded slot one of the members and a moment in the last 30 days."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE evaluations_feedbackslot SET grader_id = (%s::int[])[1 + id %% %s], "
            "external_grader = '', graded_at = now() - (id %% 43200) * interval '1 minute' "
            "WHERE evaluation_id = %s AND grade IS NOT NULL",
            [member_ids, len(member_ids), evaluation_id],
        )


def add_history(evaluation_id: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO evaluations_evaluationmetricpoint (evaluation_metric_id, minute, value, "
            "progress) SELECT m.id, date_trunc('minute', now()) - n * interval '1 minute', "
            "m.value * (1 - n / 6000.0), 0.9 * (1 - n / 3000.0) "
            "FROM evaluations_evaluationmetric m, generate_series(0, %s) n "
            "WHERE m.evaluation_id = %s ON CONFLICT DO NOTHING",
            [HISTORY_MINUTES - 1, evaluation_id],
        )


def run(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from apps.accounts.models import User
    from apps.accounts.services import member_add, team_create
    from apps.evaluations.models import Evaluation, EvaluationMetric
    from apps.scoring.services import recompute_evaluation

    rng = random.Random(args.seed)
    shape = Shape(args.keywords, args.snapshots, 1, args.graded_share)
    progress_note(f"building {shape.slots} slots")
    team = team_create(name="Bench", owner_email="lead@bench.test")
    members = [
        member_add(team=team, email=f"grader{n}@bench.test", role="evaluator").user.id
        for n in range(MEMBERS)
    ]
    evaluation = build_evaluation(team, "Lead pages", shape, graded_share_of(shape, rng), METRICS)
    recompute_evaluation(evaluation_id=evaluation.id)
    spread_grades(evaluation.id, members)
    add_history(evaluation.id)
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True)
    EvaluationMetric.objects.filter(evaluation=evaluation, metric="ndcg").update(pinned=True)
    analyze()
    evaluation.refresh_from_db()
    keyword = evaluation.keywords.order_by("position").first()

    print(f"PostgreSQL database {benchkit.BENCH_DATABASE}")
    print(
        f"evaluation: {shape.keywords} keywords x {shape.snapshots} snapshots x 1 slot = "
        f"{shape.slots} slots, {evaluation.graded_slots} graded by {MEMBERS} members over "
        f"30 days; {len(METRICS)} metrics with {HISTORY_MINUTES} history points each"
    )
    print(f"median (min) of {args.runs} runs after a warm-up, in ms")
    print()

    lead = Client()
    lead.force_login(User.objects.get(email="lead@bench.test"))
    page = f"/evaluations/{evaluation.id}/"
    for label, url in (
        ("evaluation page, first 50 keywords", page),
        ("evaluation page, sorted by -ndcg@10, 250 a page", f"{page}?sort=-ndcg@10&size=250"),
        ("evaluation page, only keywords with open results", f"{page}?only=ungraded"),
        (
            "live answer (what each open page asks after a change)",
            f"{reverse('insights:live_evaluation', args=[evaluation.id])}"
            f"?shown={evaluation.status_shown}",
        ),
        ("a keyword's page", f"{page}keywords/{keyword.id}/"),
        ("leaderboard, last 30 days", "/leaderboard/"),
        ("dashboard with the pins", "/"),
    ):
        response = lead.get(url)
        assert response.status_code == 200, (url, response.status_code)
        times = []
        for _ in range(args.runs):
            elapsed, response = timed(partial(lead.get, url))
            times.append(elapsed)
        with CaptureQueriesContext(connection) as queries:
            lead.get(url)
        print(
            f"{label}: {statistics.median(times):.0f} ({min(times):.0f}) ms, {len(queries)} queries"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keywords", type=int, default=10_000)
    parser.add_argument("--snapshots", type=int, default=10)
    parser.add_argument("--graded-share", type=float, default=0.9)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    setup_django()
    run(args)


if __name__ == "__main__":
    main()
