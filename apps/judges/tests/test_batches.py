"""Not-urgent runs, against a real local server speaking both providers' batch
interfaces: every result graded once through one batch at half the synchronous cost,
failed lines listed with why or asked again, expired calls claimed again, a batch
applied once however its polls race, the budget held, a cancelled run's batch cancelled
at the provider, and "not urgent" set from the form and the API."""

import json
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot
from apps.judges import batch_calls, batch_runs, controls
from apps.judges.models import (
    BatchState,
    JudgeBatch,
    JudgeBatchRequest,
    JudgeCall,
    JudgeFailure,
    JudgeGrade,
    JudgeRun,
    RunStatus,
)
from apps.judges.services import judge_create, model_settings
from tests.factories import client_for, make_evaluation

from .fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-batch"
NOW = timedelta(0)  # poll at once, whatever the last poll
PROTOCOLS = ["openai", "anthropic"]


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(autouse=True)
def grading(server, settings):
    """The model grades every result it is sent (r1: 1, r2: 2, r3: 3, ...), the same
    whether asked synchronously or in a batch."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    server.script(Reply.openai("{}"))
    server.respond_with(lambda seen: answer(seen.body))


def ids_in(body):
    schema = (
        body["response_format"]["json_schema"]["schema"]
        if "response_format" in body
        else body["output_config"]["format"]["schema"]
    )
    return schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]


def keyword_of(body):
    user = body["messages"][-1]["content"]
    return user.split("\n", 1)[0].removeprefix("Keyword: ")


def answer(body, status=200):
    if status != 200:
        return Reply.error(status, f"failed with {status}")
    ids = ids_in(body)
    text = json.dumps(
        {"judgements": [{"id": i, "grade": int(i[1:]) % 4, "reason": f"why {i}"} for i in ids]}
    )
    if "output_config" in body:
        return Reply.anthropic(text, tokens=(1000, 100))
    return Reply.openai(text, tokens=(1000, 100))


def judge_of(evaluation, server, protocol, **given):
    return judge_create(
        team=evaluation.team,
        name=f"Judge {protocol}",
        protocol=protocol,
        base_url=server.openai_url if protocol == "openai" else server.anthropic_url,
        model_name="model-test",
        api_key=API_KEY,
        price_input_per_million="1.00",
        price_output_per_million="2.00",
        **given,
    )


def evaluation_and_judge(server, protocol, **given):
    """An active graded evaluation (red shoes: 3 results, blue hat: 2; one slot each) of
    a team of its own (no cache shared), and a judge of the team."""
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={"red shoes": 3, "blue hat": 2}
    )
    return evaluation, judge_of(evaluation, server, protocol, **given)


def not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks):
    """Assigned not urgent: the run sends its first batch as it starts."""
    with django_capture_on_commit_callbacks(execute=True):
        run = controls.run_assign(judge=judge, evaluation=evaluation, urgent=False)
    return JudgeRun.objects.get(id=run.id)


def graded(evaluation, judge):
    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    return dict(slots.exclude(grade=None).values_list("snapshot__doc_id", "grade"))


def held(evaluation, judge):
    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user, grade=None)
    return sorted(slots.values_list("snapshot__doc_id", flat=True))


def sent_bodies(server, protocol):
    """The calls' bodies the server received in batches, by keyword."""
    calls = [
        call
        for batch in server.batches.values()
        if batch.protocol == protocol
        for call in batch.calls
    ]
    return {keyword_of(body): body for _, body in calls}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_not_urgent_run_grades_every_result_once_through_one_batch_at_half_the_price(
    server, protocol, django_capture_on_commit_callbacks
):
    # The same results graded now, synchronously, by another team's judge.
    now_evaluation, now_judge = evaluation_and_judge(server, protocol)
    with django_capture_on_commit_callbacks(execute=True):
        now_run = controls.run_start(judge=now_judge, evaluation=now_evaluation)
    now_run.refresh_from_db()
    assert now_run.status == RunStatus.FINISHED and now_run.graded == 5
    synchronous = {keyword_of(seen.body): seen.body for seen in server.requests}

    evaluation, judge = evaluation_and_judge(server, protocol)
    server.batches.clear()
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    assert (batch.state, batch.requests) == (BatchState.OUT, 2)
    assert held(evaluation, judge) == sorted(
        [f"red shoes-doc-{n}" for n in (1, 2, 3)] + [f"blue hat-doc-{n}" for n in (1, 2)]
    )
    # Each line carries exactly what the synchronous call sent.
    assert sent_bodies(server, protocol) == synchronous

    said = batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    assert said == "finished: nothing left for the judge"
    run.refresh_from_db()
    batch.refresh_from_db()
    assert batch.state == BatchState.APPLIED and batch.applied_at is not None
    assert run.status == RunStatus.FINISHED and (run.graded, run.failed) == (5, 0)
    assert graded(evaluation, judge) == {
        "red shoes-doc-1": 1,
        "red shoes-doc-2": 2,
        "red shoes-doc-3": 3,
        "blue hat-doc-1": 1,
        "blue hat-doc-2": 2,
    }
    assert JudgeGrade.objects.filter(run=run).count() == 5
    assert (run.calls, run.input_tokens, run.output_tokens) == (
        now_run.calls,
        now_run.input_tokens,
        now_run.output_tokens,
    )
    assert run.cost == now_run.cost / 2 == Decimal("0.001200")  # 2 x (1000 x 1 + 100 x 2) / 2
    logged = JudgeCall.objects.filter(run=run).order_by("id")
    assert [call.cost for call in logged] == [Decimal("0.000600")] * 2
    assert all("Keyword: " in call.user_prompt and call.parsed for call in logged)
    assert API_KEY not in json.dumps([call.error for call in logged])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failed_line_is_listed_with_why_and_one_that_may_pass_goes_in_the_next_batch(
    server, protocol, django_capture_on_commit_callbacks
):
    tries = {"blue hat": 0}

    def line(custom_id, body):
        keyword = keyword_of(body)
        if keyword == "red shoes":
            return answer(body, status=400)
        tries[keyword] += 1
        return answer(body, status=500 if tries[keyword] == 1 else 200)

    server.batch_script(answer=line)
    evaluation, judge = evaluation_and_judge(server, protocol)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)

    failures = JudgeFailure.objects.filter(run=run, open=True)
    assert sorted(f.slot.snapshot.doc_id for f in failures) == [
        "red shoes-doc-1",
        "red shoes-doc-2",
        "red shoes-doc-3",
    ]
    assert all(f.reason.startswith("rejected: ") for f in failures)
    # blue hat was asked again in a second batch, and graded there.
    first, second = JudgeBatch.objects.filter(run=run).order_by("id")
    assert (first.requests, second.requests) == (2, 1)
    assert second.state == BatchState.OUT
    assert JudgeBatchRequest.objects.get(batch=second).tries == 2
    assert held(evaluation, judge) == ["blue hat-doc-1", "blue hat-doc-2"]
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert graded(evaluation, judge) == {"blue hat-doc-1": 1, "blue hat-doc-2": 2}
    assert (run.status, run.calls, run.graded, run.failed) == (RunStatus.FINISHED, 3, 2, 3)
    failed_calls = JudgeCall.objects.filter(run=run).exclude(failure="")
    assert sorted(call.failure for call in failed_calls) == ["rejected", "unavailable"]


def test_a_call_that_keeps_failing_is_listed_as_failed_after_three_tries(
    server, django_capture_on_commit_callbacks
):
    server.batch_script(answer=lambda custom_id, body: answer(body, status=429))
    evaluation, judge = evaluation_and_judge(server, "openai")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    for _ in range(3):
        batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert JudgeBatch.objects.filter(run=run).count() == 3
    assert (run.status, run.calls, run.failed) == (RunStatus.FINISHED, 6, 5)
    reasons = set(JudgeFailure.objects.filter(run=run).values_list("reason", flat=True))
    assert reasons == {"rate_limited: HTTP 429: failed with 429"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_results_of_calls_an_expired_batch_never_ran_are_claimed_again(
    server, protocol, django_capture_on_commit_callbacks
):
    def line(custom_id, body):
        return None if keyword_of(body) == "blue hat" else answer(body)

    server.batch_script(end="expired", answer=line, polls=1)
    evaluation, judge = evaluation_and_judge(server, protocol)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    assert batch_runs.batch_advance(run_id=run.id, poll_every=NOW).startswith("waiting")
    (batch,) = JudgeBatch.objects.filter(run=run)
    assert batch.provider_status == "in_progress"

    server.batch_script()  # the next batch runs every call
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    batch.refresh_from_db()
    assert batch.provider_status == ("expired" if protocol == "openai" else "ended")
    assert sorted(graded(evaluation, judge)) == [f"red shoes-doc-{n}" for n in (1, 2, 3)]
    assert not JudgeFailure.objects.filter(run=run).exists()
    # blue hat, given back, went out again at once.
    again = JudgeBatch.objects.filter(run=run).latest("id")
    assert again.id != batch.id and again.requests == 1
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert len(graded(evaluation, judge)) == 5
    assert (run.status, run.calls, run.graded) == (RunStatus.FINISHED, 2, 5)


def sent_and_fetched(server, protocol, django_capture_on_commit_callbacks):
    """A not-urgent run's batch, and its results as a worker fetched them (not applied)."""
    evaluation, judge = evaluation_and_judge(server, protocol)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    settings = model_settings(judge)
    polled = batch_calls.batch_poll(settings, batch.provider_batch_id)
    return run, batch, batch_calls.batch_results(settings, batch.provider_batch_id, polled, 2)


def test_a_batch_is_applied_once_when_a_worker_that_fetched_its_results_died(
    server, django_capture_on_commit_callbacks
):
    run, batch, results = sent_and_fetched(server, "openai", django_capture_on_commit_callbacks)
    # The worker that fetched them died before applying; the next poll fetches and
    # applies them, and the first worker's late apply writes nothing.
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    assert batch_runs.batch_apply(batch_id=batch.id, results=results) is False
    run.refresh_from_db()
    assert (run.calls, run.graded, run.cost) == (2, 5, Decimal("0.001200"))
    assert JudgeCall.objects.filter(run=run).count() == 2
    assert JudgeGrade.objects.filter(run=run).count() == 5


@pytest.mark.django_db(transaction=True)
def test_two_polls_racing_apply_a_batch_once(server, postgres, django_capture_on_commit_callbacks):
    run, batch, results = sent_and_fetched(server, "anthropic", django_capture_on_commit_callbacks)
    applied: list[bool] = []
    together = threading.Barrier(2)

    def poll() -> None:
        try:
            together.wait()
            applied.append(batch_runs.batch_apply(batch_id=batch.id, results=results))
        finally:
            connection.close()

    threads = [threading.Thread(target=poll) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(applied) == [False, True]
    run.refresh_from_db()
    assert (run.calls, run.graded) == (2, 5)
    assert JudgeCall.objects.filter(run=run).count() == 2


def test_the_budget_holds_batches_reserved_at_their_most_at_the_batch_price(
    server, django_capture_on_commit_callbacks
):
    evaluation, judge = evaluation_and_judge(server, "openai", budget_calls=1)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    assert batch.requests == 1 and batch.reserved_calls == 1
    run.refresh_from_db()
    assert run.reserved_calls == 1
    # Reserved while the batch is out, long after a synchronous call's would lapse.
    assert run.reserved_until > batch.created_at + timedelta(hours=24)
    said = batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    assert said.startswith("stopped: the budget of 1 calls is reached")
    run.refresh_from_db()
    assert (run.status, run.calls, run.reserved_calls) == (RunStatus.BUDGET_REACHED, 1, 0)
    assert len(graded(evaluation, judge)) == 3 and held(evaluation, judge) == []


def test_a_cost_budget_is_reserved_at_half_the_price(server, django_capture_on_commit_callbacks):
    evaluation, judge = evaluation_and_judge(server, "openai", budget_cost="1")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    # Half of what the same calls would reserve synchronously: their bound in tokens
    # at the judge's prices.
    assert batch.reserved_cost == (
        Decimal(batch.reserved_tokens - 2 * judge.max_output_tokens) * 1
        + 2 * judge.max_output_tokens * 2
    ) / Decimal(2_000_000)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cancelling_a_not_urgent_run_cancels_its_batch_at_the_provider(
    server, protocol, django_capture_on_commit_callbacks
):
    server.batch_script(polls=5)
    evaluation, judge = evaluation_and_judge(server, protocol)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    controls.run_cancel(run=run)
    assert server.batches[batch.provider_batch_id].cancelled
    cancel = "/v1/batches/" if protocol == "openai" else "/v1/messages/batches/"
    assert [seen.path for seen in server.batch_calls(cancel) if seen.path.endswith("/cancel")] == [
        f"{cancel}{batch.provider_batch_id}/cancel"
    ]
    assert held(evaluation, judge) == []  # given back
    batch.refresh_from_db()
    assert batch.note == "cancelled by a lead"
    # The provider ends it without running anything: nothing graded, nothing spent.
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    batch.refresh_from_db()
    run.refresh_from_db()
    assert batch.state == BatchState.APPLIED
    assert (run.status, run.calls, run.graded, run.cost) == (RunStatus.CANCELLED, 0, 0, 0)
    assert graded(evaluation, judge) == {}


def test_a_batch_the_provider_refuses_pauses_the_run_and_gives_its_results_back(
    server, django_capture_on_commit_callbacks
):
    server.batch_script(refuse="model-test does not take batches")
    evaluation, judge = evaluation_and_judge(server, "openai")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED
    assert run.note == "paused: the provider refused the batch: model-test does not take batches"
    assert held(evaluation, judge) == [] and not JudgeFailure.objects.exists()


def test_a_rejected_key_at_sending_pauses_the_run_with_the_reason(
    server, django_capture_on_commit_callbacks
):
    server.batch_script(error=Reply.error(401, "Incorrect API key"))
    evaluation, judge = evaluation_and_judge(server, "anthropic")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.PAUSED and "Incorrect API key" in run.note
    assert API_KEY not in run.note
    (batch,) = JudgeBatch.objects.filter(run=run)
    assert batch.state == BatchState.NOT_SENT and held(evaluation, judge) == []


def test_an_outage_at_sending_waits_and_the_next_sweep_sends_again(
    server, django_capture_on_commit_callbacks
):
    server.batch_script(error=Reply.error(503, "overloaded"))
    evaluation, judge = evaluation_and_judge(server, "openai")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.RUNNING and run.wait_until is not None
    assert held(evaluation, judge) == []
    assert batch_runs.batch_advance(run_id=run.id).startswith("waiting: unavailable")
    JudgeRun.objects.filter(id=run.id).update(wait_until=None)
    server.batch_script()
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert (run.status, run.graded) == (RunStatus.FINISHED, 5)
    states = list(JudgeBatch.objects.filter(run=run).values_list("state", flat=True))
    assert states == [BatchState.NOT_SENT, BatchState.APPLIED]


def test_polls_keep_the_batchs_results_held_and_wait_their_interval(
    server, settings, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    server.batch_script(polls=10)
    evaluation, judge = evaluation_and_judge(server, "openai")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    old = timezone.now() - timedelta(seconds=settings.SLOT_LOCK_SECONDS + 1)
    FeedbackSlot.objects.filter(evaluation=evaluation).update(assigned_at=old)
    polls = len(server.batch_calls("/v1/batches/"))
    batch_runs.batch_advance(run_id=run.id)  # polled when sent: not due yet
    assert len(server.batch_calls("/v1/batches/")) == polls
    renewed = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    assert renewed.count() == 5
    assert all(slot.assigned_at and slot.assigned_at > old for slot in renewed)


def test_a_batch_that_cannot_be_polled_past_the_providers_window_gives_its_results_back(
    server, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    server.batch_script(polls=10)
    evaluation, judge = evaluation_and_judge(server, "openai")
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    server.batches.clear()  # the provider no longer knows it: every poll is a 404
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    batch.refresh_from_db()
    assert batch.state == BatchState.OUT and batch.note.startswith("the last poll failed")
    assert len(held(evaluation, judge)) == 5

    long_ago = timezone.now() - timedelta(hours=26)
    JudgeBatch.objects.filter(id=batch.id).update(submitted_at=long_ago)
    server.batch_script()
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    batch.refresh_from_db()
    assert batch.state == BatchState.APPLIED
    # Claimed again at once into a new batch, and graded from it.
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    run.refresh_from_db()
    assert (run.status, run.graded, run.calls) == (RunStatus.FINISHED, 5, 2)


def test_a_run_made_urgent_again_sends_no_batch_and_its_lanes_grade_what_is_left(
    server, django_capture_on_commit_callbacks
):
    server.batch_script(polls=1, answer=lambda custom_id, body: answer(body, status=503))
    evaluation, judge = evaluation_and_judge(server, "openai", results_per_call=3)
    run = not_urgent_run(evaluation, judge, django_capture_on_commit_callbacks)
    (batch,) = JudgeBatch.objects.filter(run=run)
    with django_capture_on_commit_callbacks(execute=True):
        controls.run_assign(judge=judge, evaluation=evaluation, urgent=True)
    # Its lanes wait for the batch's results, which the batch holds.
    assert held(evaluation, judge) and not graded(evaluation, judge)
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)  # ended: every call failed
    batch_runs.batch_advance(run_id=run.id, poll_every=NOW)
    assert JudgeBatch.objects.filter(run=run).count() == 1  # none sent after it
    assert held(evaluation, judge) == []  # given back for the lanes, not asked again
    with django_capture_on_commit_callbacks(execute=True):
        controls.run_resume(run=run)
    run.refresh_from_db()
    assert (run.status, run.urgent, len(graded(evaluation, judge))) == (
        RunStatus.FINISHED,
        True,
        5,
    )
    assert batch.id == JudgeBatch.objects.get(run=run).id


def test_the_lead_assigns_a_judge_not_urgent_from_the_evaluation_page(
    owner, team_a, server, django_capture_on_commit_callbacks
):
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"red shoes": 2})
    judge = judge_of(evaluation, server, "openai")
    server.batch_script(polls=5)
    lead = client_for(owner)
    panel_url = f"/evaluations/{evaluation.id}/judges/panel/"
    assert "Not urgent (the provider's batch interface, half the price" in (
        lead.get(panel_url).content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        assigned = lead.post(
            f"/evaluations/{evaluation.id}/judges/", {"judge": judge.id, "not_urgent": "1"}
        )
    assert assigned.status_code == 302
    run = JudgeRun.objects.get(judge=judge, evaluation=evaluation)
    assert run.urgent is False
    host = "in a batch at 127.0.0.1, submitted "
    panel = lead.get(panel_url, headers={"HX-Request": "true"}).content.decode()
    assert host in panel and ", 1 request</span>" in panel and "not urgent" in panel
    page = lead.get(f"/judges/runs/{run.id}/").content.decode()
    assert "Not urgent: its calls go through the provider's batch interface" in page
    assert host in page


def test_an_integration_assigns_a_judge_not_urgent_and_bad_input_is_named(
    team_a, server, django_capture_on_commit_callbacks
):
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"red shoes": 2})
    judge = judge_of(evaluation, server, "anthropic")
    server.batch_script(polls=5)
    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    path = f"/api/v1/judges/{judge.id}/runs/"

    refused = api.post(
        path, {"evaluation": evaluation.id, "urgent": "no"}, content_type="application/json"
    )
    assert refused.status_code == 400
    (error,) = refused.json()["errors"]
    assert error["field"] == "urgent" and error["message"].startswith("true or false")
    assert not JudgeRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            path, {"evaluation": evaluation.id, "urgent": False}, content_type="application/json"
        )
    assert started.status_code == 201, started.content
    one = api.get(f"/api/v1/judge-runs/{started.json()['id']}/").json()
    assert one["urgent"] is False
    (out,) = one["batches_out"]
    assert (out["at"], out["requests"]) == ("127.0.0.1", 1)
    assert out["provider_batch_id"].startswith("msgbatch_")
