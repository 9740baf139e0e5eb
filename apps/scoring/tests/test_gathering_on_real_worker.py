"""With a broker, an evaluation's keywords changed within PIPELINE_GATHER_SECONDS of each
other are scored by one task (apps/scoring/gathering.py), on real Redis and a real
worker; no change is left out, whenever it lands."""

import pytest
import redis

from apps.core import queueing
from apps.evaluations.models import EvaluationMetric, Keyword
from apps.judging.judgements import Giver, slot_judge
from apps.scoring import gathering, pipeline, tasks
from tests.factories import make_evaluation, slots_of
from tests.worker import stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def published(monkeypatch):
    """The gathered recomputes published to the broker (they still are)."""
    seen: list[tuple[float, int]] = []
    real = pipeline.queue_in

    def spy(seconds, task, *args, **kwargs):
        if task is tasks.recompute_gathered:
            seen.append((seconds, *args))
        return real(seconds, task, *args, **kwargs)

    monkeypatch.setattr(pipeline, "queue_in", spy)
    return seen


def test_the_first_change_starts_a_gathering_and_the_next_ones_join_it(real_broker, settings):
    settings.PIPELINE_GATHER_SECONDS = 0.5
    url, _queue = real_broker
    assert gathering.gathering_begin(4242) is True
    assert gathering.gathering_begin(4242) is False  # one is waiting: join it
    assert gathering.gathering_begin(4243) is True  # another evaluation's own
    ttl_ms = redis.Redis.from_url(url).pttl(gathering._key(4242))
    assert 0 < ttl_ms <= (0.5 + gathering.KEY_GRACE_S) * 1000  # a lost task holds briefly
    gathering.gathering_end(4242)  # the task starts: the next change starts anew
    assert gathering.gathering_begin(4242) is True
    gathering.gathering_end(4242)
    gathering.gathering_end(4243)


def test_without_redis_every_first_change_queues_its_task(broker_down):
    assert gathering.gathering_begin(4242) is True
    assert gathering.gathering_begin(4242) is True


def test_many_keywords_graded_at_once_are_scored_by_one_task_of_a_real_worker(
    celery_worker_process, published, settings
):
    settings.PIPELINE_GATHER_SECONDS = 3.0  # longer than the grading takes, however slow
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={f"k{n}": 2 for n in range(12)})
    for slot in slots_of(evaluation):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(), grade=2)

    def scored() -> bool:
        return not Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists()

    if not wait_for(scored, seconds=30):
        output = stop_worker(celery_worker_process)
        pytest.fail(f"keywords still marked after 30 s; the worker's output:\n{output}")
    assert published == [(3.0, evaluation.id)]  # twelve first changes, one task
    cg = EvaluationMetric.objects.get(evaluation=evaluation, metric="cg")
    assert cg.value == 4 and cg.value_count == 12


def test_a_change_after_the_gathered_task_started_is_scored_by_the_next(
    real_broker, published, settings, postgres
):
    settings.PIPELINE_GATHER_SECONDS = 0.5
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"a": 1, "b": 1})
    a, b = slots_of(evaluation)
    slot_judge(slot_id=a.id, giver=Giver.recorded(), grade=3)
    assert published == [(0.5, evaluation.id)]

    assert tasks.recompute_gathered(evaluation.id) == 1  # what the worker runs: a only
    slot_judge(slot_id=b.id, giver=Giver.recorded(), grade=1)  # lands after it started

    assert published == [(0.5, evaluation.id), (0.5, evaluation.id)]  # a task of its own
    assert tasks.recompute_gathered(evaluation.id) == 1
    assert not Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists()
    assert EvaluationMetric.objects.get(evaluation=evaluation, metric="cg").value == 2
    assert not queueing.broker_recently_down()
