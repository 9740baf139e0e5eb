"""Ids, grades and cutoffs sent to the pages and the API are read by one helper
(apps/core/typed.py): text that is a digit to str.isdigit but not to int ("²"), and a
number past its column, get a 4xx naming the field, never a server error."""

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationRun, JudgeChain
from apps.judges.services import judge_create
from apps.judging.decisive import decisive_status
from apps.judging.judgements import Giver, slot_judge
from tests.factories import client_for, make_evaluation, make_grader, make_search_model, slots_of

pytestmark = pytest.mark.django_db

SUPERSCRIPT_TWO = "²"  # "²".isdigit() is True; int("²") raises ValueError


@pytest.fixture
def lead(owner):
    return client_for(owner, raise_request_exception=False)


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, keywords={"red shoes": 3, "blue shirt": 3})


@pytest.fixture
def judge(team_a, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    return judge_create(
        team=team_a,
        name="Local",
        protocol="openai",
        base_url="http://127.0.0.1:9/v1",
        model_name="m",
    )


@pytest.fixture
def api(team_a):
    _token, text = api_token_create(team=team_a, name="ci")
    return Client(headers={"Authorization": f"Bearer {text}"}, raise_request_exception=False)


# --- The grading page -------------------------------------------------------------------


@pytest.mark.parametrize("grade", ["32768", "-32769", str(2**63), SUPERSCRIPT_TWO, "١"])
def test_a_grade_no_scale_has_and_no_column_holds_is_a_400_naming_the_grade(
    grade, team_a, evaluator
):
    make_evaluation(team=team_a, scale="binary")
    client = client_for(evaluator, raise_request_exception=False)
    client.get("/feedback/")
    held = FeedbackSlot.objects.get(grader=evaluator, grade__isnull=True)

    response = client.post(
        f"/feedback/slots/{held.id}/grade/", {"grade": grade}, headers={"HX-Request": "true"}
    )

    assert response.status_code == 400
    assert "grade: None is not a binary grade (0, 1)" in response.content.decode()
    held.refresh_from_db()
    assert held.grade is None


def test_a_leads_queue_of_an_evaluation_id_past_every_column_is_not_found(evaluation, lead):
    assert lead.get(f"/feedback/?evaluation={2**63}").status_code == 404
    assert lead.get(f"/feedback/?evaluation={SUPERSCRIPT_TWO}").status_code == 404


# --- The judges' forms --------------------------------------------------------------------


def test_calibrating_a_judge_given_as_superscript_two_names_the_judge(
    team_a, evaluation, judge, lead
):
    for slot in slots_of(evaluation)[:2]:
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "vendor-1"), grade=1)
    gold = gold_set_create(team=team_a, name="Gold", baseline=evaluation.id, keywords=2, seed=1)

    response = lead.post(
        f"/judges/calibration/{gold.id}/calibrate/", {"judge": SUPERSCRIPT_TWO}, follow=True
    )

    assert response.status_code == 200
    assert "judge: choose one of the team&#x27;s judges" in response.content.decode()
    assert not CalibrationRun.objects.exists()


@pytest.mark.parametrize("field", ["first", "second_opinion", "escalate_to"])
def test_a_judge_chain_given_a_judge_as_superscript_two_names_the_field(
    field, evaluation, judge, lead
):
    given = {"first": str(judge.id), field: SUPERSCRIPT_TWO}

    response = lead.post(f"/evaluations/{evaluation.id}/judges/chain/", given, follow=True)

    assert response.status_code == 200
    assert f"{field}: the team has no judge" in response.content.decode()
    assert not JudgeChain.objects.exists()


# --- The decisive order --------------------------------------------------------------------


@pytest.fixture
def rival(team_a):
    return make_evaluation(team=team_a, keywords={"red shoes": 3, "blue shirt": 3})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("rival", SUPERSCRIPT_TWO, "rival: &#x27;²&#x27; is not an evaluation of this team"),
        ("metric", "dcg@30000", "metric: k is at most 1000, not 30000"),
        ("metric", "dcg@40000", "metric: &#x27;dcg@40000&#x27;: k is at most 1000"),
        ("metric", f"dcg@{2**63}", "is not metric@k"),
        ("metric", f"dcg@{SUPERSCRIPT_TWO}", "is not metric@k"),
    ],
)
def test_the_decisive_order_form_refuses_a_rival_or_a_cutoff_no_column_holds(
    field, value, message, evaluation, rival, lead
):
    given = {"rival": str(rival.id), "metric": "dcg@10", "min_change": "0", field: value}

    response = lead.post(f"/evaluations/{evaluation.id}/decisive-order/", given)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert decisive_status(evaluation=evaluation) is None


@pytest.mark.parametrize("metric", ["dcg@30000", "dcg@40000", f"dcg@{2**63}"])
def test_the_decisive_order_api_refuses_a_cutoff_no_column_holds_naming_the_metric(
    metric, evaluation, rival, api
):
    response = api.put(
        f"/api/v1/evaluations/{evaluation.id}/decisive-order/",
        {"rival": rival.id, "metric": metric},
        content_type="application/json",
    )

    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["metric"]
    assert decisive_status(evaluation=evaluation) is None


# --- The comparison and the gate ----------------------------------------------------------


def test_comparing_with_a_pair_chosen_as_superscript_two_names_vs(evaluation, rival, lead):
    response = lead.get(
        f"/evaluations/compare/?e={evaluation.id}&e={rival.id}&vs={SUPERSCRIPT_TWO}"
    )

    assert response.status_code == 400
    assert "vs: &#x27;²&#x27; is not one of the compared evaluations" in response.content.decode()


@pytest.mark.parametrize("field", ["model", "judge"])
def test_the_gate_api_given_a_model_or_judge_as_superscript_two_names_it(
    field, team_a, evaluation, judge, api
):
    make_search_model(team_a, "http://127.0.0.1:9", name="Tomorrow")
    body = {"baseline": evaluation.id, "model": "Tomorrow", field: SUPERSCRIPT_TWO}

    response = api.post("/api/v1/gate/", body, content_type="application/json")

    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == [field]


def test_the_judge_runs_api_filter_takes_only_an_id(evaluation, api):
    for given in (SUPERSCRIPT_TWO, str(2**63), "-1"):
        response = api.get(f"/api/v1/judge-runs/?evaluation={given}")
        assert response.status_code == 400
        assert response.json()["errors"][0]["field"] == "evaluation"


def test_a_disagreement_decided_with_a_grade_past_its_column_names_the_grade(team_a, owner, lead):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"red shoes": 1})
    first, second, _third = slots_of(evaluation)
    grader = make_grader(team_a)
    slot_judge(slot_id=first.id, giver=Giver.recorded(grader), grade=0)
    slot_judge(slot_id=second.id, giver=Giver.recorded(None, "vendor-1"), grade=3)
    url = f"/evaluations/{evaluation.id}/disagreements/{first.snapshot_id}/decide/"

    for grade in ("32768", str(2**63), SUPERSCRIPT_TWO):
        response = lead.post(url, {"grade": grade}, headers={"HX-Request": "true"})
        assert response.status_code in (200, 400), response.content[:500]
        assert "grade" in response.content.decode()


def test_a_transformer_rule_keyed_by_superscript_two_is_a_400_naming_the_rule(api):
    body = {
        "name": "Binary view",
        "scale": "graded",
        "metrics": [{"metric": "ndcg", "k": 10}],
        "transformers": {"binary": {"0": 0, "1": 0, "2": 1, SUPERSCRIPT_TWO: 1}},
    }

    response = api.post("/api/v1/evaluations/", body, content_type="application/json")

    assert response.status_code == 400
    assert any(error["field"].startswith("transformers") for error in response.json()["errors"])
