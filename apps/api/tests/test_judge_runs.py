"""/api/v1/judge-runs: an integration assigns a judge, watches its progress, pauses,
resumes and cancels it, reads its failures and exports its call log as JSON Lines;
another team's runs are 404."""

import json

import pytest

from apps.judges import runs
from apps.judges.models import JudgeRun, RunStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-api-run"


@pytest.fixture
def server(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def judge_and_evaluation(team_a, server):
    evaluation = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})
    judge = judge_create(
        team=team_a,
        name="Judge",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        api_key=API_KEY,
    )
    return judge, evaluation


def post(api, path, body=None):
    return api.post(path, json.dumps(body or {}), content_type="application/json")


def test_a_run_is_started_watched_and_its_log_exported(api, server, judge_and_evaluation):
    judge, evaluation = judge_and_evaluation
    started = post(api, f"/api/v1/judges/{judge.id}/runs/", {"evaluation": evaluation.id})
    assert started.status_code == 201, started.content
    run_id = started.json()["id"]
    server.script(
        Reply.openai(
            '{"judgements": [{"id": "r1", "grade": 1, "reason": "yes"},'
            ' {"id": "r2", "grade": 7, "reason": "?"}]}'
        )
    )
    runs.run_step(run_id=run_id)  # what a lane does
    one = api.get(f"/api/v1/judge-runs/{run_id}/").json()
    assert (one["calls"], one["graded"], one["failed"], one["failures_open"]) == (1, 1, 1, 1)
    listed = api.get(f"/api/v1/judge-runs/?evaluation={evaluation.id}").json()
    assert [run["id"] for run in listed["results"]] == [run_id]
    failures = api.get(f"/api/v1/judge-runs/{run_id}/failures/").json()["results"]
    assert (
        failures[0]["keyword"] == "red shoes" and "7 is not a binary grade" in failures[0]["reason"]
    )
    log = api.get(f"/api/v1/judge-runs/{run_id}/calls/")
    assert log["Content-Type"] == "application/x-ndjson"
    text = b"".join(log.streaming_content).decode()
    (line,) = [json.loads(row) for row in text.splitlines()]
    assert line["model"] == "gpt-test" and line["parsed"]["r1"] == {"grade": 1, "reason": "yes"}
    assert "Keyword: red shoes" in line["user_prompt"] and API_KEY not in text


def test_pause_resume_cancel_and_retry(api, judge_and_evaluation):
    judge, evaluation = judge_and_evaluation
    run_id = post(api, f"/api/v1/judges/{judge.id}/runs/", {"evaluation": evaluation.id}).json()[
        "id"
    ]
    assert post(api, f"/api/v1/judge-runs/{run_id}/pause/").json()["status"] == "paused"
    assert post(api, f"/api/v1/judge-runs/{run_id}/resume/").json()["status"] == "running"
    assert post(api, f"/api/v1/judge-runs/{run_id}/retry-failures/").status_code == 200
    assert post(api, f"/api/v1/judge-runs/{run_id}/cancel/").json()["status"] == "cancelled"
    again = post(api, f"/api/v1/judge-runs/{run_id}/resume/")
    assert again.status_code in (400, 409) and "cancelled" in again.content.decode()
    assert JudgeRun.objects.get(id=run_id).status == RunStatus.CANCELLED


def test_bad_input_and_other_teams_runs(api, team_b, judge_and_evaluation):
    judge, _evaluation = judge_and_evaluation
    bad = post(api, f"/api/v1/judges/{judge.id}/runs/", {"evaluation": "x"})
    assert bad.status_code == 400 and "evaluation" in bad.content.decode()
    theirs = make_evaluation(team=team_b, keywords={"q": 1})
    assert (
        post(api, f"/api/v1/judges/{judge.id}/runs/", {"evaluation": theirs.id}).status_code == 404
    )
    other_judge = judge_create(
        team=team_b,
        name="Theirs",
        protocol="openai",
        base_url="https://x.example/v1",
        model_name="m",
    )
    their_run = JudgeRun.objects.create(judge=other_judge, evaluation=theirs, prompt_version="v")
    for path in ("", "failures/", "calls/"):
        assert api.get(f"/api/v1/judge-runs/{their_run.id}/{path}").status_code == 404
    assert post(api, f"/api/v1/judge-runs/{their_run.id}/pause/").status_code == 404
    assert api.get("/api/v1/judge-runs/?evaluation=abc").status_code == 400


def test_an_evaluation_filter_that_is_not_an_id_is_refused_not_a_server_error(api):
    for odd in ("²", "12a", "9" * 40):
        answer = api.get("/api/v1/judge-runs/", {"evaluation": odd})
        assert answer.status_code == 400


def test_the_share_of_each_result_s_slots_is_taken_and_checked(api, team_a, server):
    judge = judge_create(
        team=team_a,
        name="Judge",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        api_key=API_KEY,
    )
    three = make_evaluation(team=team_a, scale="binary", strategy=3, keywords={"q": 2})
    one = make_evaluation(team=team_a, scale="binary", strategy=1, keywords={"q": 2})
    path = f"/api/v1/judges/{judge.id}/runs/"
    for evaluation, wrong in [(three, 4), (three, 0), (three, "3"), (three, 2.5), (one, 3)]:
        refused = post(api, path, {"evaluation": evaluation.id, "slots_per_result": wrong})
        assert refused.status_code == 400, wrong
        assert [error["field"] for error in refused.json()["errors"]] == ["slots_per_result"]
    assert not JudgeRun.objects.filter(judge=judge).exists()

    server.script(Reply.openai('{"judgements": []}'))
    started = post(api, path, {"evaluation": three.id, "slots_per_result": 3})
    assert started.status_code == 201, started.content
    assert started.json()["slots_per_result"] == 3
    assert JudgeRun.objects.get(judge=judge, evaluation=three).slots_per_result == 3
    by_default = post(api, path, {"evaluation": one.id})
    assert by_default.status_code == 201 and by_default.json()["slots_per_result"] == 1
