"""AI judges on real parts: Celery workers on Redis and PostgreSQL run a judge's lanes
against a local server speaking the OpenAI protocol, with rate limits, outages and
answers off the scale. Every result ends graded once by the judge or listed as failed
with its reason, never both, never neither; a worker killed mid-run is replaced and the
run finishes with no result graded twice."""

import json
import threading

import pytest
from django.db.models import Count

from apps.evaluations.models import FeedbackSlot
from apps.judges import controls
from apps.judges.models import JudgeFailure, JudgeGrade, JudgeRun, RunStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen
from tests.factories import make_evaluation
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


class Model:
    """Answers each call from the ids it was sent: a 429 for the first call, a 500 for
    the fourth, grade 9 (off the scale) for r2 of every fifth; `delay_s` per answer."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls = 0
        self.lock = threading.Lock()
        self.delay_s = delay_s

    def __call__(self, seen: Seen) -> Reply:
        with self.lock:
            self.calls += 1
            number = self.calls
        if number == 1:
            return Reply.error(429, "slow down", **{"retry-after": "1"})
        if number == 4:
            return Reply.error(500, "boom")
        schema = seen.body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        judgements = [
            {"id": i, "grade": 9 if (i == "r2" and number % 5 == 0) else len(i) % 4, "reason": i}
            for i in ids
        ]
        reply = Reply.openai(json.dumps({"judgements": judgements}))
        reply.delay_s = self.delay_s
        return reply


def judge_and_evaluation(server: FakeProvider, keywords: int, results: int):
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={f"keyword {n}": results for n in range(keywords)}
    )
    judge = judge_create(
        team=evaluation.team,
        name="Lanes",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        results_per_call=results,
        calls_at_once=3,
    )
    return evaluation, judge


def settled(run_id: int) -> bool:
    return JudgeRun.objects.get(id=run_id).status == RunStatus.FINISHED


def assert_each_result_graded_once_or_failed(evaluation, judge, run) -> None:
    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    graded = set(slots.filter(grader=judge.user).exclude(grade=None).values_list("id", flat=True))
    failed = set(JudgeFailure.objects.filter(run=run, open=True).values_list("slot_id", flat=True))
    assert not graded & failed, "a result both graded and failed"
    assert graded | failed == set(slots.values_list("id", flat=True)), "a result neither"
    assert failed, "the off-scale answers were listed"
    assert all(
        "is not a graded grade" in r
        for r in JudgeFailure.objects.filter(run=run).values_list("reason", flat=True)
    )
    twice = JudgeGrade.objects.values("slot").annotate(n=Count("id")).filter(n__gt=1)
    assert not twice.exists()
    run.refresh_from_db()
    assert run.graded == len(graded) and run.failed == len(failed)


def test_lanes_on_a_real_worker_grade_every_result_once_or_list_it(celery_worker_process, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as server:
        server.respond_with(Model())
        evaluation, judge = judge_and_evaluation(server, keywords=12, results=5)
        run = controls.run_start(judge=judge, evaluation=evaluation)
        if not wait_for(lambda: settled(run.id), seconds=60):
            output = stop_worker(celery_worker_process)
            state = JudgeRun.objects.filter(id=run.id).values()[0]
            pytest.fail(f"the run did not finish in 60 s ({state}); the worker printed:\n{output}")
        assert_each_result_graded_once_or_failed(evaluation, judge, run)


def test_a_worker_killed_mid_run_is_replaced_and_nothing_is_graded_twice(
    postgres, real_broker, settings
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.SLOT_LOCK_SECONDS = 10
    broker_url, queue = real_broker
    lock = {"SLOT_LOCK_SECONDS": "10"}
    with FakeProvider() as server:
        server.respond_with(Model(delay_s=0.3))
        evaluation, judge = judge_and_evaluation(server, keywords=20, results=5)
        first = start_worker(broker_url, queue, extra_env=lock)
        run = controls.run_start(judge=judge, evaluation=evaluation)
        some = wait_for(lambda: JudgeRun.objects.get(id=run.id).graded >= 15, seconds=30)
        first.kill()  # no goodbye: its held results stay held until their lock runs out
        first.wait()
        assert some, "the first worker graded nothing"
        second = start_worker(broker_url, queue, extra_env=lock)
        try:
            controls.run_resume(run=run)  # what the sweep does for a run not seen lately
            finished = wait_for(lambda: settled(run.id), seconds=90)
        finally:
            output = stop_worker(second)
        assert finished, f"the run did not finish after the restart; the worker printed:\n{output}"
        assert_each_result_graded_once_or_failed(evaluation, judge, run)
