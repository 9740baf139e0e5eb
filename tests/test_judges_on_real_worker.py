"""An AI judge's budgets and a model it cannot reach, on real parts: Celery workers on
Redis and PostgreSQL run the judge's lanes against a local server speaking the OpenAI
protocol (apps/judges/tests/fake_provider.py).

- Budgets are caps across the lanes: a budget of 3 calls with 4 calls at once (one lane
  of four, and 8 at once: two lanes on the worker's two processes) makes exactly 3
  calls to the model, and a token or cost budget is never passed; the run ends "Budget
  reached" with the other results left ungraded and unheld, for people.
- A judge whose base URL is a closed local port fails its run after
  AI_JUDGE_FAIL_AFTER_SECONDS (the worker's setting), with the address in the reason,
  and the worker tells the team's webhook (judge_run.failed).
"""

import json
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest

from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judges import controls
from apps.judges.models import Judge, JudgeFailure, JudgeRun, RunStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen
from apps.judges.tests.test_budgets import mosts_of_first_calls
from apps.judges.tests.test_unreachable import closed_port_url
from apps.notifications import services as notifications
from apps.notifications.models import Delivery
from tests.factories import make_evaluation
from tests.webhook_receiver import WebhookReceiver
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

KEYWORDS = 12  # of one result each: one call a keyword


class Model:
    """Grades every result it is sent 1, after `delay_s` (so a step's calls are in
    flight together), and reports what a call may take at most: input tokens as the
    bytes of its messages, output tokens as its max_tokens. A run that sent a call its
    budget could not pay would show it in its spending."""

    def __init__(self, delay_s: float = 0.3) -> None:
        self.delay_s = delay_s
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, seen: Seen) -> Reply:
        with self.lock:
            self.calls += 1
        schema = seen.body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        judgements = [{"id": rid, "grade": 1, "reason": "-"} for rid in ids]
        prompt = sum(len(m["content"].encode()) for m in seen.body["messages"])
        reply = Reply.openai(
            json.dumps({"judgements": judgements}), tokens=(prompt, seen.body["max_tokens"])
        )
        reply.delay_s = self.delay_s
        return reply


def budgeted_run(server: FakeProvider, calls_at_once: int, **judge_fields) -> JudgeRun:
    """A judge's run on KEYWORDS keywords of one result each, its lanes queued on the
    broker (no worker takes them yet)."""
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={f"keyword {n:02d}": 1 for n in range(KEYWORDS)}
    )
    judge = judge_create(
        team=evaluation.team,
        name="Budgeted",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        results_per_call=1,
        calls_at_once=calls_at_once,
        max_output_tokens=500,
        price_input_per_million="1000",
        price_output_per_million="2000",
        **judge_fields,
    )
    return controls.run_start(judge=judge, evaluation=evaluation)


def run_on_a_prefork_worker(run: JudgeRun, real_broker, tmp_path: Path) -> JudgeRun:
    """Start the worker production runs (two processes) and wait for the run to end."""
    broker_url, queue = real_broker
    log = tmp_path / "worker.log"
    worker = start_worker(broker_url, queue, prefork=True, output=log)
    try:
        ended = wait_for(
            lambda: JudgeRun.objects.get(id=run.id).status != RunStatus.RUNNING, seconds=45
        )
        if ended:
            time.sleep(1.0)  # a lane that would call after the end would do it by now
    finally:
        stop_worker(worker)
    run.refresh_from_db()
    assert ended, (
        f"the run did not end in 45 s ({run.note}); the worker printed:\n"
        + (log.read_text(errors="replace")[-5000:])
    )
    return run


def assert_rest_left_to_people(run: JudgeRun, graded: int) -> None:
    """The judge graded `graded` results; the others are ungraded, held by nobody, in an
    evaluation still open for people."""
    slots = FeedbackSlot.objects.filter(evaluation_id=run.evaluation_id)
    judge_user = Judge.objects.values_list("user_id", flat=True).get(id=run.judge_id)
    assert slots.filter(grader_id=judge_user).exclude(grade=None).count() == graded
    assert slots.filter(grade=None, grader=None).count() == KEYWORDS - graded
    assert Evaluation.objects.get(id=run.evaluation_id).status == Status.ACTIVE
    assert (run.reserved_calls, run.reserved_tokens, run.reserved_cost) == (0, 0, 0)


@pytest.mark.parametrize("calls_at_once", [4, 8], ids=["one lane of 4", "two lanes of 4"])
def test_a_budget_of_three_calls_makes_three_calls_whatever_the_calls_at_once(
    postgres, real_broker, settings, tmp_path, calls_at_once
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    model = Model()
    with FakeProvider() as server:
        server.respond_with(model)
        run = budgeted_run(server, calls_at_once, budget_calls=3)
        run = run_on_a_prefork_worker(run, real_broker, tmp_path)

    assert model.calls == 3
    assert (run.status, run.calls, run.graded) == (RunStatus.BUDGET_REACHED, 3, 3)
    assert "the budget of 3 calls is reached" in run.note
    assert_rest_left_to_people(run, graded=3)


@pytest.mark.parametrize("budget", ["tokens", "cost"])
def test_a_token_or_cost_budget_is_never_passed_by_two_lanes(
    postgres, real_broker, settings, tmp_path, budget
):
    """8 calls at once (two lanes of four) against a budget three calls at their most
    cannot pay: the run spends within it, and stops only when the next call does not
    fit."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    model = Model()
    with FakeProvider() as server:
        server.respond_with(model)
        run = budgeted_run(server, calls_at_once=8)
        # What each call may spend at most (the keywords are alike: every call's most
        # is the same), read before any worker takes the lanes.
        most = mosts_of_first_calls(run, 1)[0]
        judge = run.judge
        if budget == "tokens":
            judge.budget_tokens = 3 * most.tokens - 1
        else:
            judge.budget_cost = (most.cost * 5 / 2).quantize(Decimal("0.01"))  # cents
        judge.save()
        judge.refresh_from_db()
        limit = judge.budget_tokens if budget == "tokens" else judge.budget_cost
        run = run_on_a_prefork_worker(run, real_broker, tmp_path)

    spent = run.input_tokens + run.output_tokens if budget == "tokens" else run.cost
    next_most = most.tokens if budget == "tokens" else most.cost
    assert run.status == RunStatus.BUDGET_REACHED, run.note
    assert spent <= limit, f"spent {spent} of a budget of {limit}"
    assert spent + next_most > limit, "it stopped while the next call still fitted"
    assert model.calls == run.calls and 2 <= run.calls < KEYWORDS
    shown = f"{limit} tokens" if budget == "tokens" else f"US${limit}"  # costs in dollars
    assert f"the budget of {shown} " in run.note
    assert_rest_left_to_people(run, graded=run.calls)


def test_a_judge_at_a_closed_port_fails_its_run_and_the_worker_tells_the_team(
    postgres, real_broker, settings
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True  # the webhook's check, in this process
    broker_url, queue = real_broker
    fail_after = 2
    worker = start_worker(
        broker_url,
        queue,
        extra_env={
            "AI_JUDGE_FAIL_AFTER_SECONDS": str(fail_after),
            "WEBHOOKS_ALLOW_PRIVATE_ADDRESSES": "1",
        },
    )
    try:
        with WebhookReceiver() as receiver:
            evaluation = make_evaluation(
                scale="graded", strategy=1, keywords={"red shoes": 2, "blue hat": 1}
            )
            _webhook, receiver.secret = notifications.webhook_create(
                team=evaluation.team, name="Ops", url=receiver.url, events=["judge_run.failed"]
            )
            address = closed_port_url()
            judge = judge_create(
                team=evaluation.team,
                name="Far",
                protocol="openai",
                base_url=address,
                model_name="gpt-test",
            )
            started = time.monotonic()
            run = controls.run_start(judge=judge, evaluation=evaluation)

            def failed() -> bool:
                return JudgeRun.objects.get(id=run.id).status == RunStatus.FAILED

            if not wait_for(failed, seconds=30):
                state = JudgeRun.objects.filter(id=run.id).values("status", "note")[0]
                pytest.fail(
                    f"not failed in 30 s ({state}); the worker said:\n{stop_worker(worker)}"
                )
            took = time.monotonic() - started
            if not wait_for(lambda: bool(receiver.delivered()), seconds=20):
                pytest.fail(f"the team was not told; the worker said:\n{stop_worker(worker)}")
            (told,) = receiver.delivered()
    finally:
        stop_worker(worker)

    run.refresh_from_db()
    assert took >= fail_after, "it failed before AI_JUDGE_FAIL_AFTER_SECONDS"
    assert run.note.startswith(f"no answer from {address}/chat/completions for {fail_after} s: ")
    assert "unavailable" in run.note and "refused" in run.note.lower()
    (delivery,) = Delivery.objects.filter(event="judge_run.failed")
    assert told.signed_right and told.json["event"] == "judge_run.failed"
    assert told.json["data"]["reason"] == run.note == json.loads(delivery.body)["data"]["reason"]
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).exists()
    assert not JudgeFailure.objects.filter(run=run).exists()  # no result is the judge's failure
