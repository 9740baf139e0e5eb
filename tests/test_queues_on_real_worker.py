"""The pipeline's queue on real parts: a grade's recompute is published to the pipeline's
queue in Redis, not the default one, and a worker started as the tests start one
(tests/worker.py) takes the tasks of both."""

import pytest
import redis

from apps.core.queueing import queue_now
from apps.evaluations.models import EvaluationMetric
from apps.judges.tasks import resume_stalled_runs
from apps.judging.judgements import Giver, slot_judge
from config.celery import app as celery_app
from tests.factories import make_evaluation, slots_of
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_grades_recompute_waits_in_the_pipeline_queue_and_a_worker_reads_both(
    postgres, real_broker
):
    broker_url, queue = real_broker
    pipeline_queue = celery_app.conf.pipeline_queue
    waiting = redis.Redis.from_url(broker_url).llen
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"red shoes": 3})
    already = waiting(pipeline_queue), waiting(queue)

    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(), grade=3)
    queue_now(resume_stalled_runs)  # a task of the default queue (no run: it does nothing)

    assert (waiting(pipeline_queue), waiting(queue)) == (already[0] + 1, already[1] + 1)
    worker = start_worker(broker_url, queue)
    try:

        def both_taken_and_scored() -> bool:
            metric = EvaluationMetric.objects.get(evaluation=evaluation)
            return waiting(pipeline_queue) == waiting(queue) == 0 and metric.value == 3

        taken = wait_for(both_taken_and_scored, seconds=30)
    finally:
        output = stop_worker(worker)
    assert taken, f"the worker left tasks waiting; it printed:\n{output}"
