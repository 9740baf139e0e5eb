"""The pipeline with real parts: a Celery worker process on Redis, and a broker that is down."""

import time

import pytest

from apps.core import queueing
from apps.evaluations.models import EvaluationMetric, Keyword
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.tasks import recompute_marked
from tests.factories import make_evaluation, slots_of
from tests.worker import stop_worker, wait_for


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_turns_a_grade_into_new_metrics_within_seconds(celery_worker_process):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"red shoes": 3})
    first = slots_of(evaluation)[0]

    slot_judge(slot_id=first.id, giver=Giver.recorded(), grade=3)

    def metric_is_updated() -> bool:
        return EvaluationMetric.objects.get(evaluation=evaluation).value == 3

    updated = wait_for(metric_is_updated, seconds=30)
    if not updated:
        output = stop_worker(celery_worker_process)
        pytest.fail(f"the worker did not update the metric in 30 s; its output:\n{output}")
    assert not Keyword.objects.get(text="red shoes").needs_scoring


@pytest.mark.django_db(transaction=True)
def test_grading_succeeds_with_the_broker_down_and_the_sweep_makes_metrics_exact(broker_down):
    evaluation = make_evaluation(metrics=[("cg", 5), ("ndcg", 3)], keywords={"a": 3, "b": 3})
    slots = slots_of(evaluation)

    started = time.monotonic()
    for slot, grade in zip(slots, [3, 2, 0, 1, 1, 3], strict=True):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(), grade=grade)
    elapsed = time.monotonic() - started

    assert elapsed < 3, f"grading waited on the broker for {elapsed:.1f} s"
    # The first grade tried the broker, was refused, and paused queueing for the rest.
    assert queueing._broker_unavailable_until > time.monotonic()
    assert slots_of(evaluation)[0].grade == 3  # every grade was saved
    assert Keyword.objects.filter(needs_scoring=True).count() == 2
    assert EvaluationMetric.objects.get(evaluation=evaluation, metric="cg").value is None

    recompute_marked()  # what beat runs every minute once the broker is back

    assert not Keyword.objects.filter(needs_scoring=True).exists()
    cg = EvaluationMetric.objects.get(evaluation=evaluation, metric="cg")
    assert cg.value == pytest.approx((5 + 5) / 2)
    assert cg.means_exact
