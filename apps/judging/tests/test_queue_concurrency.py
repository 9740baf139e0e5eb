"""The grader's queue under real concurrency: many threads, each on its own PostgreSQL
connection, claiming and grading at once. SQLite serialises every writer, so these
tests only mean something on PostgreSQL (the `postgres` fixture skips elsewhere)."""

import random
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.db.models import Count

from apps import engine
from apps.accounts.models import Membership
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Keyword
from apps.judging import judgements
from apps.judging.judgements import Giver, slot_judge
from apps.judging.services import slot_claim_next
from apps.scoring.loading import load_keyword_inputs
from apps.scoring.models import KeywordMetric
from tests.factories import make_evaluation, make_grader

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

THREAD_SECONDS = 120


def run_in_threads(count: int, work: Callable[[int], Any]) -> tuple[list[Any], list[str]]:
    """Run work(0..count-1) in as many threads, started together; each thread uses its own
    database connection and closes it. Returns the results and every thread's traceback."""
    results: list[Any] = [None] * count
    errors: list[str] = []
    start_together = threading.Barrier(count)

    def runner(number: int) -> None:
        try:
            start_together.wait()
            results[number] = work(number)
        except BaseException:
            errors.append(traceback.format_exc())
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(n,), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + THREAD_SECONDS
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = sum(thread.is_alive() for thread in threads)
    assert stuck == 0, f"{stuck} threads still running after {THREAD_SECONDS} s (deadlock?)"
    return results, errors


def slots_held_twice_on_one_snapshot(evaluation: Evaluation) -> list[dict[str, Any]]:
    return list(
        FeedbackSlot.objects.filter(evaluation=evaluation, grader__isnull=False)
        .values("snapshot_id", "grader_id")
        .annotate(slots=Count("id"))
        .filter(slots__gt=1)
    )


def test_thirty_two_graders_grade_every_slot_exactly_once_and_lose_no_update(postgres):
    keywords = {f"keyword {n:02d}": 5 for n in range(40)}
    evaluation = make_evaluation(
        strategy=3,
        scale="graded",
        metrics=[("ndcg", 5), ("precision", 5), ("cg", 3)],
        keywords=keywords,
    )
    total = evaluation.total_slots
    assert total == 40 * 5 * 3
    for n in range(32):
        make_grader(evaluation.team, email=f"crowd{n:02d}@example.test")
    memberships = list(
        Membership.objects.filter(team=evaluation.team, user__email__startswith="crowd")
        .select_related("user")
        .order_by("user__email")
    )
    valid_grades = engine.get_scale(evaluation.scale).grades

    def grade_until_the_queue_is_empty(number: int) -> int:
        membership = memberships[number]
        rng = random.Random(number)
        # A bound, so a queue that never empties fails instead of hanging.
        for graded in range(total + 1):
            slot = slot_claim_next(membership=membership)
            if slot is None:
                return graded
            slot_judge(
                slot_id=slot.id, giver=Giver.grader(membership.user), grade=rng.choice(valid_grades)
            )
        raise AssertionError(f"grader {number} was still given work after {total} grades")

    graded_per_thread, errors = run_in_threads(32, grade_until_the_queue_is_empty)

    assert not errors, f"{len(errors)} threads failed; the first:\n{errors[0]}"
    graded = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=True).exists()
    assert graded.count() == total == sum(graded_per_thread)
    assert not graded.filter(grader__isnull=True).exists()
    assert slots_held_twice_on_one_snapshot(evaluation) == []

    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.progress) == (total, 1.0)
    assert evaluation.status == "finished"
    assert not Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists()

    # No lost update: every stored value equals the engine's result on the final grades.
    keyword_means: dict[tuple[str, int], list[float]] = {}
    for keyword in Keyword.objects.filter(evaluation=evaluation):
        inputs = load_keyword_inputs(keyword_id=keyword.id)
        assert inputs is not None
        scored = inputs.score()
        expected = scored.metrics
        stored_snapshot_values = [snapshot.stored_value for snapshot in inputs.snapshots]
        assert stored_snapshot_values == pytest.approx(scored.snapshot_values, abs=1e-12)
        stored = {
            (row.metric, row.k): row.value for row in KeywordMetric.objects.filter(keyword=keyword)
        }
        assert stored == pytest.approx(expected, abs=1e-12), keyword.text
        assert keyword.graded_slots == 15
        for key, value in expected.items():
            if value is not None:
                keyword_means.setdefault(key, []).append(value)
    for evaluation_metric in EvaluationMetric.objects.filter(evaluation=evaluation):
        key = (evaluation_metric.metric, evaluation_metric.k)
        assert evaluation_metric.value == pytest.approx(
            engine.mean_of(keyword_means[key]), abs=1e-12
        ), key


def test_a_double_click_storm_of_one_grader_hands_out_one_slot_and_no_integrity_error(
    postgres,
):
    evaluation = make_evaluation(strategy=3, keywords={f"keyword {n}": 5 for n in range(4)})
    grader = make_grader(evaluation.team)
    membership = Membership.objects.select_related("user").get(team=evaluation.team, user=grader)

    for _round in range(5):
        claimed, errors = run_in_threads(16, lambda _n: slot_claim_next(membership=membership))

        assert not errors, f"{len(errors)} threads failed; the first:\n{errors[0]}"
        assert None not in claimed
        # Every click got the one slot the grader now holds.
        held = FeedbackSlot.objects.filter(grader=grader, grade__isnull=True)
        assert {slot.id for slot in claimed} == {held.get().id}
        assert slots_held_twice_on_one_snapshot(evaluation) == []
        slot_judge(slot_id=claimed[0].id, giver=Giver.grader(grader), grade=2)

    assert FeedbackSlot.objects.filter(grader=grader, grade__isnull=False).count() == 5
    assert slots_held_twice_on_one_snapshot(evaluation) == []


def test_a_claim_during_a_grade_that_starts_a_snapshot_waits_instead_of_finding_nothing(
    postgres,
):
    # The first grade of a snapshot locks its other slots for a moment; the claim must
    # not take those free but locked slots for "nothing left". The grade writer locks
    # them, then starts them; here it is slowed down between starting them and
    # committing.
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 1})
    first = Membership.objects.select_related("user").get(
        user=make_grader(evaluation.team), team=evaluation.team
    )
    second = Membership.objects.select_related("user").get(
        user=make_grader(evaluation.team), team=evaluation.team
    )
    held = slot_claim_next(membership=first)
    assert held is not None
    grade_is_writing = threading.Event()
    start_snapshot = judgements._set_started

    def start_snapshot_slowly(slot_ids: list[int], *, started: bool) -> None:
        start_snapshot(slot_ids, started=started)  # its slots stay locked to the commit
        grade_is_writing.set()
        time.sleep(0.5)  # the grade's transaction stays open a little longer

    def grade_or_claim(number: int) -> FeedbackSlot | None:
        if number == 0:
            return slot_judge(slot_id=held.id, giver=Giver.recorded(first.user), grade=2)
        assert grade_is_writing.wait(10)
        return slot_claim_next(membership=second)

    with mock.patch.object(judgements, "_set_started", start_snapshot_slowly):
        (_graded, claimed), errors = run_in_threads(2, grade_or_claim)

    assert not errors, f"{len(errors)} threads failed; the first:\n{errors[0]}"
    assert claimed is not None
    assert claimed.snapshot_id == held.snapshot_id and claimed.id != held.id
