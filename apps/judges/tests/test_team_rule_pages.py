"""The team's rule on the pages: a judge that fails it is marked on the judges' list and
its own page, is not offered under "Let a judge grade", and the API refuses it naming
the field; a gold set's baseline is one of the evaluations people graded."""

import json

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot
from apps.judges import calibration, controls, runs
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationRun, CalibrationStatus, JudgeRun
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation

from .fake_provider import Reply
from .test_calibration import people_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


def _judge(team, name, server):
    return judge_create(
        team=team, name=name, protocol="openai", base_url=server.openai_url, model_name=name
    )


@pytest.fixture
def judges(team_a, server):
    """Trusted, calibrated on binary to alpha 0.9, and Untried; the team requires 0.5."""
    people = make_evaluation(team=team_a, strategy=3, keywords={"k 0": 2, "k 1": 2})
    people_grade(people, lambda keyword, number: number % 2)
    gold = gold_set_create(team=team_a, name="Gold", baseline=people.id, seed=1)
    trusted, untried = _judge(team_a, "Trusted", server), _judge(team_a, "Untried", server)
    CalibrationRun.objects.create(
        gold_set=gold,
        judge=trusted,
        model_name="Trusted",
        prompt_version="default-binary-v2",
        status=CalibrationStatus.FINISHED,
        alpha=0.9,
    )
    calibration.gate_set(team=team_a, min_alpha="0.5")
    return trusted, untried


def _assign_choices(lead, evaluation) -> str:
    panel = lead.get(f"/evaluations/{evaluation.id}/judges/panel/", HTTP_HX_REQUEST="true")
    text = panel.content.decode()
    return (
        text.split('id="assign-judge"')[1].split("</select>")[0] if "assign-judge" in text else ""
    )


def test_a_judge_failing_the_team_s_rule_is_marked_and_not_offered_to_grade(owner, team_a, judges):
    trusted, untried = judges
    lead = client_for(owner)
    binary = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})

    listed = lead.get("/judges/").content.decode()
    marked = "fails the team's rule: alpha 0.50 or more required, it has no calibration"
    assert listed.count(marked) == 1
    assert listed.index("Untried") < listed.index(marked)
    assert 'data-testid="below-rule"' in lead.get(f"/judges/{untried.id}/edit/").content.decode()
    assert (
        'data-testid="below-rule"' not in lead.get(f"/judges/{trusted.id}/edit/").content.decode()
    )

    choices = _assign_choices(lead, binary)
    assert "Trusted (Trusted)" in choices and "Untried" not in choices
    panel = lead.get(f"/evaluations/{binary.id}/judges/panel/", HTTP_HX_REQUEST="true")
    assert "Not offered, as they fail the team's rule: Untried" in panel.content.decode()

    # Calibrated with the binary default prompt only: not offered on a graded evaluation.
    graded = make_evaluation(team=team_a, scale="graded", keywords={"blue hat": 1})
    assert "Trusted" not in _assign_choices(lead, graded)

    refused = lead.post(f"/evaluations/{binary.id}/judges/", {"judge": untried.id}, follow=True)
    assert "it has no calibration" in refused.content.decode()
    assert not JudgeRun.objects.filter(judge=untried).exists()

    calibration.gate_set(team=team_a, min_alpha="")
    assert "Untried" in _assign_choices(lead, binary)
    assert marked not in lead.get("/judges/").content.decode()


def test_the_api_refuses_a_judge_failing_the_team_s_rule_with_400_naming_the_field(team_a, judges):
    trusted, untried = judges
    evaluation = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})
    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})

    def assign(judge):
        body = json.dumps({"evaluation": evaluation.id})
        return api.post(f"/api/v1/judges/{judge.id}/runs/", body, content_type="application/json")

    refused = assign(untried)
    assert refused.status_code == 400
    errors = refused.json()["errors"]
    assert [error["field"] for error in errors] == ["judge"]
    assert "it has no calibration" in errors[0]["message"]
    assert not JudgeRun.objects.filter(judge=untried).exists()
    assert assign(trusted).status_code == 201


def test_a_gold_set_s_baseline_is_offered_only_among_evaluations_people_graded(
    owner, team_a, server
):
    by_people = make_evaluation(team=team_a, strategy=3, keywords={"k 0": 2, "k 1": 2})
    people_grade(by_people, lambda keyword, number: number % 2)
    by_judge = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})
    judge = _judge(team_a, "Grader", server)
    run = controls.run_start(judge=judge, evaluation=by_judge)
    server.script(
        Reply.openai(
            '{"judgements": [{"id": "r1", "grade": 1, "reason": "a"},'
            ' {"id": "r2", "grade": 0, "reason": "b"}]}'
        )
    )
    runs.run_step(run_id=run.id)
    graded = FeedbackSlot.objects.filter(evaluation=by_judge, grade__isnull=False)
    assert graded.count() == 2
    ungraded = make_evaluation(team=team_a, keywords={"q": 1})

    page = client_for(owner).get("/judges/calibration/").content.decode()
    baseline = page.split('name="baseline"')[1].split("</select>")[0]
    candidate = page.split('name="candidate"')[1].split("</select>")[0]
    assert f'value="{by_people.id}"' in baseline
    assert f'value="{by_judge.id}"' not in baseline and f'value="{ungraded.id}"' not in baseline
    assert f'value="{by_judge.id}"' in candidate  # a candidate's lists are all it gives


def _chain_choices(lead, evaluation, name) -> str:
    text = _panel_text(lead, evaluation)
    chain_form = text.split('data-testid="chain-form"')[1].split("</form>")[0]
    return chain_form.split(f'name="{name}"')[1].split("</select>")[0]


def _panel_text(lead, evaluation) -> str:
    panel = lead.get(f"/evaluations/{evaluation.id}/judges/panel/", HTTP_HX_REQUEST="true")
    return panel.content.decode()


def test_set_up_a_chain_offers_no_judge_failing_the_team_s_rule(owner, team_a, judges):
    trusted, untried = judges
    lead = client_for(owner)
    binary = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})

    for link in ("first", "second_opinion", "escalate_to"):
        choices = _chain_choices(lead, binary, link)
        assert f'value="{trusted.id}"' in choices and "Trusted" in choices, link
        assert f'value="{untried.id}"' not in choices and "Untried" not in choices, link
    assert "Not offered, as they fail the team's rule: Untried" in _panel_text(lead, binary)

    calibration.gate_set(team=team_a, min_alpha="")
    assert f'value="{untried.id}"' in _chain_choices(lead, binary, "first")
