"""The regression gate with a model run now against a baseline (relevance_gate --model,
POST /api/v1/gate/): the baseline's keywords are asked of the candidate's search model on
a real search server, what both rankings return is graded already, an AI judge on a real
local model server grades the rest, and the gate answers once it is graded."""

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.endpoints.models import SearchEndpoint
from apps.evaluations.models import Evaluation, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from apps.schedules.models import RunState, ScheduledRun
from apps.schedules.runner import scheduled_runs_advance
from apps.tries.models import Try
from tests.factories import make_grader, make_search_model, slots_of

pytestmark = pytest.mark.django_db(transaction=True)

KEYWORDS = [f"keyword {n}" for n in range(8)]


def grade_all(evaluation, grade, who):
    for slot in slots_of(evaluation):
        if slot.grade is None:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(who), grade=grade)


@pytest.fixture
def baseline(team_a, search_server):
    """Today's ranking: eight keywords run on the search server, every result relevant."""
    model = make_search_model(team_a, search_server.base_url, name="Today")
    evaluation = evaluation_create_with_keywords(
        team=team_a,
        name="Today",
        metrics=[("precision", 5)],
        scale="binary",
        keywords=KEYWORDS,
        search_model=model,
    )
    evaluation_start(evaluation=evaluation)  # its keywords run here (tasks in-process)
    grade_all(Evaluation.objects.get(id=evaluation.id), 1, make_grader(team_a))
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED
    return evaluation


@pytest.fixture
def tomorrow(team_a, search_server):
    """A new ranking: the server answers it with other documents (it asks "... v2")."""
    model = make_search_model(team_a, search_server.base_url, name="Tomorrow")
    model.params = [["q", "#query# v2"]]
    model.save(update_fields=["params"])
    return model


@pytest.fixture
def strict_judge(team_a, settings):
    """An AI judge of the team that finds nothing relevant."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True

    def nothing_relevant(seen: Seen) -> Reply:
        schema = seen.body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        answer = {"judgements": [{"id": i, "grade": 0, "reason": "off"} for i in ids]}
        return Reply.openai(json.dumps(answer))

    with FakeProvider() as server:
        server.respond_with(nothing_relevant)
        yield judge_create(
            team=team_a,
            name="Strict",
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key-gate",
        )


def gate(team, *arguments):
    out = io.StringIO()
    try:
        call_command("relevance_gate", "--team", team.name, *arguments, stdout=out)
    except SystemExit as exit:
        return exit.code, out.getvalue()
    return 0, out.getvalue()


def test_a_worse_model_run_now_and_graded_by_a_judge_fails_the_gate(
    team_a, baseline, tomorrow, strict_judge
):
    code, report = gate(
        team_a,
        "--baseline",
        str(baseline.id),
        "--model",
        "Tomorrow",
        "--judge",
        "Strict",
        "--wait",
        "60",
        "--sources",
        "any",
    )
    assert code == 1, report
    candidate = ScheduledRun.objects.get().evaluation
    assert f"Candidate: evaluation {candidate.id}" in report
    assert "FAIL" in report and "REGRESSION" in report
    assert "judged by different sources, compared as they are" in report
    assert "Judged by: Today People, " in report and " AI" in report
    assert candidate.search_model_id == tomorrow.id
    assert set(candidate.keywords.values_list("text", flat=True)) == set(KEYWORDS)


def test_a_run_a_judge_graded_against_a_baseline_people_graded_is_undecided_unless_asked(
    team_a, baseline, tomorrow, strict_judge
):
    run_now = ("--baseline", str(baseline.id), "--model", "Tomorrow", "--judge", "Strict")
    code, report = gate(team_a, *run_now, "--wait", "60")
    assert code == 3, report
    assert "Not decided: judged by different sources" in report
    candidate = ScheduledRun.objects.get().evaluation
    asked = ("--baseline", str(baseline.id), "--candidate", str(candidate.id))

    code, report = gate(team_a, *asked, "--sources", "people")
    assert code == 3 and "No keyword in common to compare." in report, report
    code, report = gate(team_a, *asked, "--sources", "any")
    assert code == 1 and "REGRESSION" in report, report


def test_the_same_ranking_is_graded_already_and_passes_at_once(team_a, baseline):
    code, report = gate(team_a, "--baseline", str(baseline.id), "--model", "Today", "--wait", "30")
    assert code == 0, report
    candidate = ScheduledRun.objects.get().evaluation
    assert candidate.status == Status.FINISHED  # every result's grade was reused
    assert "PASS" in report


def test_without_a_judge_it_is_undecided_until_people_grade_it(team_a, baseline, tomorrow):
    code, report = gate(team_a, "--baseline", str(baseline.id), "--model", str(tomorrow.id))
    assert code == 3, report
    candidate = ScheduledRun.objects.get().evaluation
    assert f"--candidate {candidate.id}" in report
    grade_all(candidate, 1, make_grader(team_a))
    code, report = gate(team_a, "--baseline", str(baseline.id), "--candidate", str(candidate.id))
    assert code == 0, report


def test_an_unknown_model_or_judge_is_a_usage_error(team_a, baseline):
    with pytest.raises(Exception, match="--model: the team has no search model 'Nope'") as error:
        gate(team_a, "--baseline", str(baseline.id), "--model", "Nope")
    assert error.value.returncode == 2
    with pytest.raises(Exception, match="--judge: the team has no AI judge 'Nobody'"):
        gate(team_a, "--baseline", str(baseline.id), "--model", "Today", "--judge", "Nobody")
    assert not ScheduledRun.objects.exists()


def test_the_api_runs_a_model_now_as_a_try_and_its_run_answers_until_the_gate_decides(
    team_a, team_b, baseline, tomorrow
):
    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    answer = api.post(
        "/api/v1/gate/",
        {"baseline": baseline.id, "model": "Tomorrow"},
        content_type="application/json",
    )
    assert answer.status_code == 202, answer.content
    body = answer.json()
    run = ScheduledRun.objects.get(id=body["run"])
    assert body["poll"] == f"/api/v1/gate/runs/{run.id}/"
    assert body["try_url"] == f"/api/v1/tries/{body['try_id']}/"
    attempt = api.get(body["try_url"]).json()  # the model ran as a try (tasks in-process)
    assert (attempt["model"], attempt["state"]) == ("Tomorrow", "done")

    polled = api.get(body["poll"]).json()
    assert (polled["state"], polled["exit_code"], polled["candidate"]) == ("trying", 3, None)
    assert (polled["queries_done"], polled["queries_total"]) == (len(KEYWORDS), len(KEYWORDS))

    scheduled_runs_advance()  # beat's tick: the try is done, its results become the candidate
    polled = api.get(body["poll"]).json()
    candidate = Evaluation.objects.get(id=polled["candidate"])
    assert candidate.search_model_id == tomorrow.id and polled["candidate_name"] == candidate.name
    assert (polled["state"], polled["exit_code"]) == ("started", 3)
    assert polled["gate"]["outcome"] == "undecided"

    grade_all(candidate, 1, make_grader(team_a))
    polled = api.get(body["poll"]).json()
    assert (polled["exit_code"], polled["gate"]["outcome"]) == (0, "pass"), polled

    _token, theirs = api_token_create(team=team_b, name="ci")
    stranger = Client(headers={"Authorization": f"Bearer {theirs}"})
    assert stranger.get(body["poll"]).status_code == 404

    refused = api.post(
        "/api/v1/gate/", {"baseline": baseline.id, "model": "Nope"}, content_type="application/json"
    )
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {"field": "model", "message": "the team has no search model 'Nope'"}
    ]
    answer = stranger.post(
        "/api/v1/gate/",
        {"baseline": baseline.id, "model": "Today"},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert answer.json()["errors"] == [
        {"field": "baseline", "message": f"the team has no evaluation {baseline.id}"},
        {"field": "model", "message": "the team has no search model 'Today'"},
    ]


def test_a_model_whose_answers_cannot_be_read_fails_the_run_with_the_reason(
    team_a, baseline, tomorrow
):
    SearchEndpoint.objects.filter(pk=tomorrow.endpoint_id).update(mapper={"results": "x"})
    with pytest.raises(Exception, match="--model: the run did not start: the model's run failed"):
        gate(team_a, "--baseline", str(baseline.id), "--model", "Tomorrow")
    run = ScheduledRun.objects.get()
    assert run.state == RunState.FAILED and run.evaluation is None

    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    polled = api.get(f"/api/v1/gate/runs/{run.id}/").json()
    assert (polled["state"], polled["exit_code"]) == ("failed", 2)
    assert "response mapper is broken" in polled["reason"]


def test_a_baseline_without_keywords_is_refused_before_anything_runs(team_a, tomorrow):
    empty = evaluation_create_with_keywords(
        team=team_a, name="Empty", metrics=[("precision", 5)], scale="binary", keywords=[]
    )
    with pytest.raises(Exception, match="--baseline: it has no keywords to run"):
        gate(team_a, "--baseline", str(empty.id), "--model", "Tomorrow")
    assert not ScheduledRun.objects.exists() and not Try.objects.exists()


def test_a_model_that_finds_nothing_still_gives_the_candidate_every_keyword(
    team_a, baseline, tomorrow, search_server
):
    SearchEndpoint.objects.filter(pk=tomorrow.endpoint_id).update(
        url=search_server.base_url + "/empty"
    )
    gate(team_a, "--baseline", str(baseline.id), "--model", "Tomorrow")
    candidate = ScheduledRun.objects.get().evaluation
    keywords = candidate.keywords.all()
    assert sorted(keyword.text for keyword in keywords) == sorted(KEYWORDS)
    assert {(k.execution_message, k.executed_at is not None) for k in keywords} == {
        ("no results", True)
    }
    assert candidate.reuse_fresh_only and not candidate.auto_restart
