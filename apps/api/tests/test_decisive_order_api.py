"""/api/v1/evaluations/{id}/decisive-order/: switch the decision order on and off and
read where the comparison stands; other teams 404, bad input 400 naming the field."""

import json

import pytest

from apps.judging.judgements import Giver, slot_judge
from apps.judging.services import slot_claim_next
from apps.judging.tests.test_decisive_order import DECISION_ORDER, rival_and_candidate
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db


def url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/decisive-order/"


def put(api, evaluation, **body):
    return api.put(url(evaluation), json.dumps(body), content_type="application/json")


def test_put_orders_the_queue_and_get_says_when_judging_can_stop(api, team_a, owner):
    rival, candidate = rival_and_candidate(team_a)

    answer = put(api, candidate, rival=rival.id, metric="dcg@2")

    assert answer.status_code == 200
    body = answer.json()
    assert (body["on"], body["rival"], body["metric"], body["decided"]) == (
        True,
        rival.id,
        "dcg@2",
        False,
    )
    assert (body["keywords"], body["open_results"], body["remaining_grades"]) == (2, 4, 6)
    membership = owner.memberships.get(team=team_a)
    first = slot_claim_next(membership=membership, evaluation=candidate)
    assert (first.keyword.text, first.snapshot.position) == DECISION_ORDER[0]
    slot_judge(slot_id=first.id, giver=Giver.grader(owner), grade=3)

    now = api.get(url(candidate)).json()

    assert (now["decided"], now["verdict"]) == (True, "this evaluation ahead")
    assert now["low"] > 0
    assert now["message"].endswith("whatever the 5 remaining grades are; judging can stop.")


def test_delete_gives_back_keyword_order(api, team_a):
    rival, candidate = rival_and_candidate(team_a)
    put(api, candidate, rival=rival.id, metric="dcg@2")

    assert api.delete(url(candidate)).status_code == 204
    assert api.get(url(candidate)).json()["on"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"metric": "dcg@2"}, "rival"),
        ({"rival": "same", "metric": "dcg@2"}, "rival"),
        ({"rival": "rival", "metric": "err@10"}, "metric"),
        ({"rival": "rival", "metric": "dcg@2", "min_change": 5000}, "min_change"),
    ],
)
def test_bad_input_is_400_naming_the_field(api, team_a, body, field):
    rival, candidate = rival_and_candidate(team_a)
    body = {**body}
    if "rival" in body:
        body["rival"] = {"same": candidate.id, "rival": rival.id}[body["rival"]]

    answer = put(api, candidate, **body)

    assert answer.status_code == 400
    assert field in json.dumps(answer.json())


def test_another_teams_evaluation_is_404_and_so_is_a_rival_of_another_team(api, team_a):
    theirs = make_evaluation(team=make_team(), keywords={"alpha": 3})
    rival, candidate = rival_and_candidate(team_a)

    assert api.get(url(theirs)).status_code == 404
    assert put(api, theirs, rival=rival.id, metric="dcg@2").status_code == 404
    assert api.delete(url(theirs)).status_code == 404
    refused = put(api, candidate, rival=theirs.id, metric="dcg@2")
    assert refused.status_code == 400
    assert "rival" in json.dumps(refused.json())
