"""/api/v1/evaluations/{id}/agreement/: kappa, alpha, each grader and the open
disagreements, called with a real team token."""

import pytest
from django.test import Client

from apps.accounts.models import Membership
from apps.evaluations.models import Snapshot
from apps.insights.tests.test_agreement_decisions import grade_snapshots
from apps.judging.decisions import snapshot_decide
from apps.judging.judgements import Giver, slot_judge
from tests.factories import make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


def agreement_url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/agreement/"


@pytest.fixture
def evaluation(team_a):
    graders = [make_grader(team_a, f"g{n}@a.test") for n in range(3)]
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 4})
    grade_snapshots(evaluation, [[0, 3, 1], [2, 2, 2], [1, 1, None], [3, 2, 3]], graders)
    return evaluation


def test_the_agreement_of_an_evaluation_with_its_statistics_and_graders(api, evaluation):
    response = api.get(agreement_url(evaluation))

    assert response.status_code == 200
    body = response.json()
    assert (body["scale"], body["ratings_per_item"], body["items"]) == ("graded", 3, 4)
    assert (body["graders"], body["grades"]) == (3, 11)
    assert body["kappa"]["method"] == "Fleiss' kappa"
    assert body["kappa"]["items"] == 3  # the result with two grades is left out
    assert body["alpha"]["method"] == "Krippendorff's alpha (ordinal)"
    assert body["alpha"]["items"] == 4
    assert isinstance(body["alpha"]["value"], float) and body["alpha"]["reason"] == ""
    assert body["alpha"]["band"] in {"poor", "slight", "fair", "moderate", "substantial"}
    assert body["observed_agreement"]["band"] is None  # bands are for chance-corrected values
    assert {row["grader"] for row in body["per_grader"]} == {"g0@a.test", "g1@a.test", "g2@a.test"}
    first = body["per_grader"][0]
    assert set(first) == {
        "grader",
        "imported",
        "graded",
        "compared",
        "agreeing",
        "agreement",
        "mean_distance",
    }
    assert (body["open_disagreements"], body["decisions"]) == (1, 0)  # [0, 3, 1]


def test_a_settled_disagreement_is_no_longer_counted_as_open(api, evaluation, team_a, owner):
    spread = Snapshot.objects.get(keyword__evaluation=evaluation, position=1)
    snapshot_decide(
        membership=Membership.objects.get(user=owner, team=team_a),
        snapshot_id=spread.id,
        grade=1,
    )

    body = api.get(agreement_url(evaluation)).json()

    assert (body["open_disagreements"], body["decisions"]) == (0, 1)


def test_an_evaluation_without_grades_answers_nulls_with_reasons(api, team_a):
    empty = make_evaluation(team=team_a, scale="binary", strategy=1)

    body = api.get(agreement_url(empty)).json()

    assert body["kappa"] == {
        "method": "Fleiss' kappa",
        "value": None,
        "items": 0,
        "reason": "it needs at least two grades per result",
        "band": None,
    }
    assert body["alpha"]["value"] is None
    assert body["alpha"]["reason"] == "no result has two grades yet"
    assert body["per_grader"] == [] and body["open_disagreements"] == 0


def test_another_teams_evaluation_is_not_found(api):
    theirs = make_evaluation(team=make_team(), start=False)

    response = api.get(agreement_url(theirs))

    assert response.status_code == 404
    assert response.json() == {"detail": "No Evaluation matches the given query.", "errors": []}


def test_without_a_token_the_answer_is_401(evaluation):
    assert Client().get(agreement_url(evaluation)).status_code == 401


def test_the_agreement_costs_a_bounded_number_of_queries(
    api, team_a, django_assert_max_num_queries
):
    graders = [make_grader(team_a) for _ in range(3)]
    big = make_evaluation(team=team_a, scale="detail", strategy=3, keywords={"a": 10, "b": 10})
    grade_snapshots(big, [[n % 10 + 1, (n * 7) % 10 + 1, 5] for n in range(20)], graders)
    slot_judge(
        slot_id=slots_of(big)[2].id, giver=Giver.recorded(None, "vendor"), grade=9
    )  # 4 graders

    with django_assert_max_num_queries(7):
        assert api.get(agreement_url(big)).status_code == 200
