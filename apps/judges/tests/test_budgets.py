"""A judge's budgets are caps, against a real local server speaking the OpenAI protocol:
a step is cut to what is left before its calls are sent (calls, tokens at their most,
cost at their most), so a run never passes a budget however many calls it makes at
once, and it says "Budget reached" only beside results the budget could not pay."""

import json
import threading
from decimal import Decimal

import pytest
from django.db import connection

from apps.evaluations.models import FeedbackSlot
from apps.judges import asking, budgets, claims, controls, runs
from apps.judges.models import JudgeRun, RunStatus
from apps.judges.services import judge_create
from tests.factories import make_evaluation

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


def graded_all(seen) -> Reply:
    """Grade 1 for every result the call was sent, 1,000 tokens in and 100 out (a real
    model's count: under the bytes of the prompt it was sent)."""
    schema = seen.body["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
    judgements = [{"id": rid, "grade": 1, "reason": "-"} for rid in ids]
    return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 100))


def run_of(server, keywords: int, **judge_fields) -> JudgeRun:
    """A run of a judge on `keywords` keywords of one result each: a call a keyword."""
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={f"keyword {n}": 1 for n in range(keywords)}
    )
    judge = judge_create(
        team=evaluation.team,
        name="Budgeted",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        **judge_fields,
    )
    server.respond_with(graded_all)
    return controls.run_start(judge=judge, evaluation=evaluation)


def to_the_end(run: JudgeRun, calls: int) -> runs.Step:
    return runs.run_steps(run_id=run.id, calls=calls, go_on=lambda: True)


def ungraded(run: JudgeRun) -> int:
    return FeedbackSlot.objects.filter(evaluation=run.evaluation, grade=None).count()


def nothing_held(run: JudgeRun) -> bool:
    held = FeedbackSlot.objects.filter(evaluation=run.evaluation, grade=None, grader__isnull=False)
    return not held.exists()


def test_a_budget_of_three_calls_with_four_at_once_makes_three(server):
    run = run_of(server, keywords=6, budget_calls=3)

    step = runs.run_step(run_id=run.id, calls=4)

    assert step == runs.GO
    assert len(server.requests) == 3
    run.refresh_from_db()
    assert (run.calls, run.graded, run.reserved_calls) == (3, 3, 0)
    assert nothing_held(run)  # the fourth call's result went back
    step = runs.run_step(run_id=run.id, calls=4)
    assert step.action == "stop" and "budget of 3 calls is reached" in step.why
    run.refresh_from_db()
    assert run.status == RunStatus.BUDGET_REACHED and run.calls == 3
    assert len(server.requests) == 3 and ungraded(run) == 3


def test_lanes_stepping_at_once_share_the_budget(server, settings):
    """Four lanes begin their steps before any is stored: the reservations, not the
    calls already counted, keep them within the budget."""
    run = run_of(server, keywords=8, budget_calls=3)
    begun = [runs._begin(run.id, 1, in_threads=True) for _ in range(4)]

    assert sum(isinstance(step, runs._Begun) for step in begun) == 3
    # The fourth waits for the three in flight: whether the budget is reached is
    # known once they are answered.
    assert begun[3].action == "wait"
    for step in begun[:3]:
        step.store()
    run.refresh_from_db()
    assert (run.calls, run.graded, run.reserved_calls) == (3, 3, 0)
    after = runs._begin(run.id, 1, in_threads=True)
    assert after.action == "stop" and "budget of 3 calls is reached" in after.why
    assert len(server.requests) == 3 and nothing_held(run)


def test_a_run_whose_budget_is_spent_by_its_last_results_is_finished(server):
    run = run_of(server, keywords=3, budget_calls=3)

    step = to_the_end(run, calls=4)

    run.refresh_from_db()
    assert step.action == "stop" and "nothing left" in step.why
    assert (run.status, run.calls, run.graded) == (RunStatus.FINISHED, 3, 3)


def mosts_of_first_calls(run: JudgeRun, calls: int) -> list[budgets.Most]:
    """What the run's next calls may spend at most, as a step reckons it (the claim is
    given back)."""
    run = JudgeRun.objects.select_related("judge", "evaluation", "prompt").get(id=run.id)
    batches = claims.claim(run, run.judge.results_per_call, calls)
    made = runs.calls_from_cache(run, batches)
    claims.give_back(run, [slot for batch in batches for slot in batch])
    return [asking.most_spent(run.judge, made.prompt, call.task) for call in made.to_ask]


def test_the_token_budget_holds_for_calls_at_their_most(server):
    run = run_of(server, keywords=8, max_output_tokens=500)
    first, second, third, _ = mosts_of_first_calls(run, 4)
    budget = first.tokens + second.tokens + third.tokens - 1  # two fit, not three
    run.judge.budget_tokens = budget
    run.judge.save()

    runs.run_step(run_id=run.id, calls=4)

    assert len(server.requests) == 2
    to_the_end(run, calls=4)
    run.refresh_from_db()
    assert run.input_tokens + run.output_tokens <= budget
    assert run.status == RunStatus.BUDGET_REACHED and ungraded(run) > 0
    assert "tokens is reached" in run.note and nothing_held(run)


def test_the_cost_budget_holds_for_calls_at_their_most(server):
    run = run_of(
        server,
        keywords=10,
        max_output_tokens=1000,
        price_input_per_million="1000",
        price_output_per_million="2000",
    )
    (most,) = mosts_of_first_calls(run, 1)
    budget = (most.cost * 5 / 2).quantize(Decimal("0.01"))  # two fit, not three
    run.judge.budget_cost = budget
    run.judge.save()

    runs.run_step(run_id=run.id, calls=4)

    assert len(server.requests) == 2
    to_the_end(run, calls=4)
    run.refresh_from_db()
    assert run.cost <= budget
    assert run.status == RunStatus.BUDGET_REACHED and ungraded(run) > 0
    assert f"budget of US${budget} is reached" in run.note


def test_a_reservation_of_a_lane_that_died_lapses(server):
    from datetime import timedelta

    from django.utils import timezone

    run = run_of(server, keywords=2, budget_calls=2)
    # A lane reserved two calls, then its worker died before it settled them.
    JudgeRun.objects.filter(id=run.id).update(
        reserved_calls=2, reserved_until=timezone.now() + timedelta(minutes=5)
    )
    step = runs.run_step(run_id=run.id)
    assert step.action == "wait" and not server.requests
    JudgeRun.objects.filter(id=run.id).update(reserved_until=timezone.now())

    assert runs.run_step(run_id=run.id) == runs.GO
    run.refresh_from_db()
    assert (run.calls, run.graded) == (1, 1)


@pytest.mark.django_db(transaction=True)
def test_many_threads_reserving_at_once_never_pass_the_budget(server, postgres):
    """Reservation alone, from threads on PostgreSQL (SQLite locks the table instead):
    the conditional UPDATE is the only gate."""
    run = run_of(server, keywords=1, budget_calls=6)
    run = JudgeRun.objects.select_related("judge").get(id=run.id)
    assert run.calls == 1  # committed at once, the run graded its one result
    most = budgets.Most(tokens=10, cost=Decimal(0))
    got: list[int] = []
    lock = threading.Lock()

    def lane() -> None:
        try:
            taken = budgets.reserve(run, [most, most])
            with lock:
                got.append(taken.calls)
        finally:
            connection.close()  # each thread's own connection

    lanes = [threading.Thread(target=lane) for _ in range(6)]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    assert sum(got) == 5
    run.refresh_from_db()
    assert run.reserved_calls == 5
