"""A judge that cannot be reached: Test connection shows the model's answer, or the error
with the address called (pages and API, against a real local server and a closed port);
a run whose every call fails for AI_JUDGE_FAIL_AFTER_SECONDS stops as Failed with the
reason, tells the team (judge_run.failed) and resumes; a finished run with results it
could not grade says so, and its counters agree after a retry."""

import json
import socket
import time

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot
from apps.judges import controls, runs
from apps.judges.models import JudgeFailure, JudgeRun, RunStatus
from apps.judges.services import judge_create, judge_update
from apps.notifications import services as notifications
from apps.notifications.models import Delivery
from tests.factories import client_for, make_evaluation

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


def closed_port_url() -> str:
    """A local address where nothing listens: a port taken, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def judge_at(evaluation, base_url: str, **fields):
    return judge_create(
        team=evaluation.team,
        name="Far",
        protocol="openai",
        base_url=base_url,
        model_name="gpt-test",
        **fields,
    )


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(
        team=team_a, scale="graded", strategy=1, keywords={"red shoes": 2, "blue hat": 1}
    )


@pytest.fixture
def lead(owner):
    return client_for(owner)


@pytest.fixture
def api(team_a) -> Client:
    _token, text = api_token_create(team=team_a, name="ci")
    return Client(headers={"Authorization": f"Bearer {text}"})


def test_a_run_whose_model_cannot_be_reached_fails_after_the_set_time_and_resumes(
    evaluation, server, settings
):
    settings.AI_JUDGE_FAIL_AFTER_SECONDS = 0.3
    notifications.webhook_create(
        team=evaluation.team,
        name="Ops",
        url="https://hooks.example.invalid/relevo",
        events=["judge_run.failed"],
    )
    address = closed_port_url()
    judge = judge_at(evaluation, address)
    run = controls.run_start(judge=judge, evaluation=evaluation)

    first = runs.run_step(run_id=run.id)
    assert first.action == "wait" and "unavailable" in first.why
    assert first.seconds <= 1.3  # it tries again by the time it would fail
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.failing_since is not None
    time.sleep(0.4)
    JudgeRun.objects.filter(id=run.id).update(wait_until=None)  # its backoff passed
    last = runs.run_step(run_id=run.id)

    assert last.action == "stop"
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert f"no answer from {address}/chat/completions for 0.3 s" in run.note
    assert "Connection refused" in run.note or "connect" in run.note.lower()
    (told,) = Delivery.objects.filter(event="judge_run.failed")
    assert json.loads(told.body)["data"]["reason"] == run.note
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).exists()
    assert not JudgeFailure.objects.exists()  # no result is the judge's failure

    # The lead mends the address and resumes: the run grades.
    judge_update(judge=judge, base_url=server.openai_url)
    server.respond_with(lambda seen: graded(seen, 2))
    controls.run_resume(run=run)
    run.refresh_from_db()
    assert (run.status, run.failing_since) == (RunStatus.RUNNING, None)
    assert runs.run_steps(run_id=run.id, calls=2, go_on=lambda: True).action == "stop"
    run.refresh_from_db()
    assert (run.status, run.graded) == (RunStatus.FINISHED, 3)


def test_an_answer_between_failures_starts_the_time_again(evaluation, server, settings):
    settings.AI_JUDGE_FAIL_AFTER_SECONDS = 60
    judge = judge_at(evaluation, server.openai_url)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    server.script(Reply.error(503, "down"))
    runs.run_step(run_id=run.id)
    run.refresh_from_db()
    assert run.failing_since is not None
    JudgeRun.objects.filter(id=run.id).update(wait_until=None)
    server.respond_with(lambda seen: graded(seen, 1))
    assert runs.run_step(run_id=run.id) == runs.GO
    run.refresh_from_db()
    assert run.failing_since is None and run.status == RunStatus.RUNNING


def graded(seen, grade: int | None) -> Reply:
    """Every result of the call graded `grade`; None: off the scale (it fails)."""
    schema = seen.body["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
    value = 9 if grade is None else grade
    judgements = [{"id": rid, "grade": value, "reason": "-"} for rid in ids]
    return Reply.openai(json.dumps({"judgements": judgements}))


def test_a_finished_run_says_what_it_could_not_grade_and_its_counters_agree_after_a_retry(
    evaluation, server, lead
):
    judge = judge_at(evaluation, server.openai_url)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    server.respond_with(lambda seen: graded(seen, None))
    runs.run_steps(run_id=run.id, calls=2, go_on=lambda: True)
    run.refresh_from_db()
    assert (run.status, run.graded, run.failed) == (RunStatus.FINISHED, 0, 3)

    page = lead.get(reverse("judges:run_detail", args=[run.id]))
    status = page.content.decode()
    assert "Finished, " in status and "3 could not be graded</a>: " in status
    assert reverse("judges:run_control", args=[run.id, "retry"]) in status

    server.respond_with(lambda seen: graded(seen, 2))
    lead.post(reverse("judges:run_control", args=[run.id, "retry"]))
    runs.run_steps(run_id=run.id, calls=2, go_on=lambda: True)
    run.refresh_from_db()
    assert (run.status, run.graded, run.failed) == (RunStatus.FINISHED, 3, 0)
    assert not JudgeFailure.objects.filter(run=run, open=True).exists()


def test_test_connection_shows_the_models_answer(evaluation, server, lead):
    judge = judge_at(evaluation, server.openai_url)
    server.script(Reply.openai("OK", tokens=(21, 1)))

    page = lead.post(reverse("judges:judge_test_connection", args=[judge.id]), follow=True)

    text = page.content.decode()
    assert f"gpt-test at {server.openai_url}/chat/completions answered &#x27;OK&#x27;" in text
    (request,) = server.requests
    assert request.path == "/v1/chat/completions" and request.body["max_tokens"] == 32


def test_test_connection_against_a_closed_port_shows_the_error_with_the_address(evaluation, lead):
    address = closed_port_url()
    judge = judge_at(evaluation, address, api_key="sk-never-shown-1234")

    page = lead.post(reverse("judges:judge_test_connection", args=[judge.id]), follow=True)

    text = page.content.decode()
    assert f"gpt-test at {address}/chat/completions could not be reached: unavailable" in text
    assert "sk-never-shown" not in text


def test_the_apis_test_connection(evaluation, server, api):
    judge = judge_at(evaluation, server.openai_url)
    server.script(Reply.openai("OK"))
    client = api
    url = f"/api/v1/judges/{judge.id}/test-connection/"

    answered = client.post(url).json()

    assert answered["ok"] is True and answered["answer"] == "OK"
    assert answered["address"] == f"{server.openai_url}/chat/completions"
    judge_update(judge=judge, base_url=closed_port_url())
    failed = client.post(url).json()
    assert failed["ok"] is False and failed["failure"] == "unavailable"
    assert failed["address"] in failed["sentence"] and failed["error"]
