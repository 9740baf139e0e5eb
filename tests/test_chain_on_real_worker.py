"""A chain on real parts, as deployed: a Celery worker on Redis and PostgreSQL runs the
first judge's lanes, the chain's task and the metrics pipeline, against a local model
server that answers at once (well under 100 ms), unsure of three results.

The first judge grades every result before the chain has looked at any, so the last slot
is scored while the chain still has work: the evaluation must stay open until the chain
has sent the three unsure results to people and people have graded them, and only then
finish. (It used to finish at 100 % first, and the chain then cleared results "for
people" in an evaluation nobody could grade any more.)"""

import time

import pytest

from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judges import controls
from apps.judges.models import ChainStep, JudgeRun, RunStatus, StepStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider
from apps.judging.judgements import Giver, slot_judge
from tests.factories import make_evaluation, make_grader
from tests.unsure_model import UNSURE, unsure_of_three
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

KEYWORDS = {"red shoes": 4, "blue hat": 4}


def status_of(evaluation: Evaluation) -> str:
    return Evaluation.objects.values_list("status", flat=True).get(id=evaluation.id)


def test_a_chain_whose_first_judge_answers_at_once_leaves_people_their_results_on_a_worker(
    postgres, real_broker, settings, tmp_path
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    broker_url, queue = real_broker
    evaluation = make_evaluation(scale="graded", strategy=1, keywords=KEYWORDS)
    grader = make_grader(evaluation.team, "grader@a.test")
    log = tmp_path / "worker.log"
    with FakeProvider() as server:
        server.respond_with(unsure_of_three)
        judge = judge_create(
            team=evaluation.team,
            name="Quick",
            protocol="openai",
            base_url=server.openai_url,
            model_name="quick-model",
            api_key="not-a-real-key-chain",
        )
        chain = controls.chain_start(
            evaluation=evaluation, first=judge.id, confidence_below=0.6, audit_percent=0
        )
        worker = start_worker(broker_url, queue, prefork=True, output=log)
        try:
            sent = ChainStep.objects.filter(chain=chain, status=StepStatus.AWAITING_PEOPLE)
            settled = wait_for(
                lambda: (
                    sent.count() == len(UNSURE)
                    and JudgeRun.objects.get(judge=judge).status == RunStatus.FINISHED
                ),
                seconds=45,
            )
            assert settled, log.read_text(errors="replace")[-5000:]
            time.sleep(2.0)  # the pipeline has scored the judge's grades by now
            assert len(server.requests) == len(KEYWORDS)  # one call a keyword, each at once
            assert set(sent.values_list("slot__snapshot__doc_id", flat=True)) == UNSURE
            assert status_of(evaluation) == Status.ACTIVE  # people have work in it

            waiting = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=True)
            assert set(waiting.values_list("snapshot__doc_id", flat=True)) == UNSURE
            *first_two, last = waiting.order_by("id")
            for slot in first_two:
                slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)
            time.sleep(2.0)
            assert status_of(evaluation) == Status.ACTIVE  # one result still waits
            slot_judge(slot_id=last.id, giver=Giver.recorded(grader), grade=0)

            finished = wait_for(lambda: status_of(evaluation) == Status.FINISHED, seconds=30)
        finally:
            stop_worker(worker)
    assert finished, log.read_text(errors="replace")[-5000:]
    graded = FeedbackSlot.objects.filter(evaluation=evaluation)
    assert graded.by_people().count() == len(UNSURE)
    assert graded.by_judges().count() == sum(KEYWORDS.values()) - len(UNSURE)
