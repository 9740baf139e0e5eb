"""Keywords added, renamed and removed over the API with a real team token: the same rules
as the edit page (apps.lifecycle.keyword_editing), each problem naming its field."""

import pytest
from django.utils import timezone

from apps.evaluations.models import Evaluation, Keyword, Snapshot
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start, evaluation_stop
from apps.lifecycle.tests.test_keyword_editing import texts
from tests.factories import make_evaluation, make_grader, make_search_model, slots_of

pytestmark = pytest.mark.django_db


def keywords_url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/keywords/"


def keyword_url(keyword) -> str:
    return f"/api/v1/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/"


@pytest.fixture
def pending(team_a) -> Evaluation:
    return make_evaluation(team=team_a, keywords={"red shoes": 0, "blue hat": 0}, start=False)


def test_keywords_are_added_after_the_others_and_the_answer_says_which(api, pending):
    response = api.post(
        keywords_url(pending),
        {"keywords": [" green scarf ", "", "red shoes", "green scarf", "wool socks"]},
        content_type="application/json",
    )

    assert response.status_code == 201
    body = response.json()
    assert [(k["keyword"], k["position"]) for k in body["added"]] == [
        ("green scarf", 3),
        ("wool socks", 4),
    ]
    assert body["skipped"] == 3
    assert texts(pending) == ["red shoes", "blue hat", "green scarf", "wool socks"]


@pytest.mark.parametrize(
    ("keywords", "field"),
    [([], "keywords"), (["fine", "x" * 501], "keywords[1]"), ("red shoes", "keywords")],
)
def test_bad_keywords_to_add_are_400_naming_the_place(api, pending, keywords, field):
    response = api.post(
        keywords_url(pending), {"keywords": keywords}, content_type="application/json"
    )

    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == [field]
    assert texts(pending) == ["red shoes", "blue hat"]


def test_a_keyword_is_renamed_and_answered_as_the_list_shows_it(api, pending):
    keyword = pending.keywords.get(text="blue hat")

    response = api.patch(
        keyword_url(keyword), {"keyword": "blue cap"}, content_type="application/json"
    )

    assert response.status_code == 200
    assert (response.json()["keyword"], response.json()["snapshots"]) == ("blue cap", [])
    assert texts(pending) == ["red shoes", "blue cap"]


def test_renaming_to_another_keywords_text_is_400_naming_keyword(api, pending):
    keyword = pending.keywords.get(text="blue hat")

    response = api.patch(
        keyword_url(keyword), {"keyword": "red shoes"}, content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "keyword", "message": "'red shoes' is already a keyword of this evaluation"}
    ]


def test_renaming_a_run_keyword_of_a_model_drops_its_results(api, team_a):
    model = make_search_model(team_a, "https://search.example")
    evaluation = make_evaluation(
        team=team_a, keywords={"red shoes": 2}, start=False, search_model=model
    )
    evaluation.keywords.update(executed_at=timezone.now())
    evaluation_start(evaluation=evaluation)
    slot_judge(
        slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(make_grader(team_a)), grade=2
    )
    evaluation_stop(evaluation=evaluation)
    keyword = evaluation.keywords.get()

    response = api.patch(
        keyword_url(keyword), {"keyword": "red boots"}, content_type="application/json"
    )

    assert response.status_code == 200
    assert not Snapshot.objects.filter(keyword=keyword).exists()
    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots) == (0, 0)


def test_a_keyword_is_removed_with_its_results(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2, "blue hat": 1}, start=False)
    keyword = evaluation.keywords.get(text="red shoes")

    response = api.delete(keyword_url(keyword))

    assert response.status_code == 204
    assert texts(evaluation) == ["blue hat"]
    evaluation.refresh_from_db()
    assert evaluation.total_slots == 1


def test_an_open_evaluations_keywords_are_409_and_unchanged(api, team_a):
    evaluation = make_evaluation(team=team_a)  # started: open for grading
    keyword = evaluation.keywords.get()

    answers = [
        api.post(keywords_url(evaluation), {"keywords": ["more"]}, content_type="application/json"),
        api.patch(keyword_url(keyword), {"keyword": "other"}, content_type="application/json"),
        api.delete(keyword_url(keyword)),
    ]

    assert [answer.status_code for answer in answers] == [409, 409, 409]
    assert answers[0].json()["detail"] == (
        "only a pending evaluation's keywords can change; this one is active"
    )
    assert texts(evaluation) == ["red shoes"]


def test_another_teams_evaluation_or_keyword_is_404(api, team_a, team_b):
    theirs = make_evaluation(team=team_b, start=False)
    their_keyword = theirs.keywords.get()
    ours = make_evaluation(team=team_a, start=False)
    through_ours = f"/api/v1/evaluations/{ours.id}/keywords/{their_keyword.id}/"

    assert (
        api.post(
            keywords_url(theirs), {"keywords": ["x"]}, content_type="application/json"
        ).status_code
        == 404
    )
    assert (
        api.patch(
            keyword_url(their_keyword), {"keyword": "x"}, content_type="application/json"
        ).status_code
        == 404
    )
    assert api.delete(keyword_url(their_keyword)).status_code == 404
    assert api.delete(through_ours).status_code == 404
    assert Keyword.objects.filter(id=their_keyword.id, text="red shoes").exists()
