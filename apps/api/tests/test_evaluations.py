"""/api/v1/evaluations: list, get, create, delete, start, stop and finish, called through
the real URLs with a real team token, by team A's integration (the caller) and about team
B's evaluations (another team's objects)."""

import pytest
from django.test import Client

from apps.accounts.models import Tag
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    Status,
)
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_finish_now
from apps.scoring.models import KeywordMetric
from apps.scoring.services import recompute_marked
from tests.factories import make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db

LIST = "/api/v1/evaluations/"


def detail(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/"


def bearer(text: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {text}"})


def problems(response) -> dict[str | None, str]:
    """The answer's errors as {field: message}; asserts the error shape on the way."""
    body = response.json()
    assert set(body) == {"detail", "errors"}
    assert all(set(error) == {"field", "message"} for error in body["errors"])
    return {error["field"]: error["message"] for error in body["errors"]}


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Evaluation, EvaluationMetric, Keyword, Snapshot, FeedbackSlot, Tag)
    }


# --- The cast ---------------------------------------------------------------------------


@pytest.fixture
def grader_of_a(team_a):
    return make_grader(team_a, "grader@a.test")


@pytest.fixture
def theirs(team_b) -> Evaluation:
    return make_evaluation(team=team_b, start=False, keywords={"their query": 2})


def graded(team, grades: dict[str, list[int | None]], **settings) -> Evaluation:
    """An evaluation whose results are graded as given (None: left ungraded), its metrics
    computed. Left fully graded, it has finished by itself."""
    evaluation = make_evaluation(
        team=team, keywords={text: len(given) for text, given in grades.items()}, **settings
    )
    grader = make_grader(team)
    for text, given in grades.items():
        for slot, grade in zip(slots_of(evaluation, text), given, strict=True):
            if grade is not None:
                slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=grade)
    recompute_marked()
    evaluation.refresh_from_db()
    return evaluation


# --- List -------------------------------------------------------------------------------


def test_list_shows_the_teams_evaluations_newest_first(api, team_a, theirs):
    first = make_evaluation(team=team_a, start=False)
    second = make_evaluation(team=team_a)

    response = api.get(LIST)

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [e["id"] for e in body["results"]] == [second.id, first.id]
    assert theirs.id not in [e["id"] for e in body["results"]]
    assert body["results"][0]["status"] == "active"
    assert body["results"][1]["status"] == "pending"


def test_list_filters_by_status(api, team_a):
    pending = make_evaluation(team=team_a, start=False)
    active = make_evaluation(team=team_a)
    finished = evaluation_finish_now(evaluation=make_evaluation(team=team_a))

    def ids(query: str) -> list[int]:
        return [e["id"] for e in api.get(f"{LIST}?{query}").json()["results"]]

    assert ids("status=pending") == [pending.id]
    assert ids("status=active") == [active.id]
    assert ids("status=finished") == [finished.id]


def test_list_filters_by_scale(api, team_a):
    binary = make_evaluation(team=team_a, scale="binary", metrics=[("precision", 5)])
    make_evaluation(team=team_a, scale="graded")

    response = api.get(f"{LIST}?scale=binary")

    assert [e["id"] for e in response.json()["results"]] == [binary.id]


def test_list_filters_by_tag_name(api, team_a, team_b):
    apparel = Tag.objects.create(team=team_a, name="apparel")
    tagged = make_evaluation(team=team_a, tags=[apparel])
    make_evaluation(team=team_a)
    # Another team's tag of the same name does not bring its evaluations in.
    make_evaluation(team=team_b, tags=[Tag.objects.create(team=team_b, name="apparel")])

    response = api.get(f"{LIST}?tag=apparel")

    assert [e["id"] for e in response.json()["results"]] == [tagged.id]
    assert response.json()["results"][0]["tags"] == ["apparel"]


def test_list_searches_name_and_description_ignoring_case(api, team_a):
    by_name = make_evaluation(team=team_a)
    Evaluation.objects.filter(id=by_name.id).update(name="Holiday shoes, try 4")
    by_description = make_evaluation(team=team_a, description="Looks at HOLIDAY queries")
    make_evaluation(team=team_a, description="nothing to see")

    response = api.get(f"{LIST}?search=holiday")

    assert {e["id"] for e in response.json()["results"]} == {by_name.id, by_description.id}


def test_list_refuses_an_unknown_status_and_scale_naming_each(api):
    response = api.get(f"{LIST}?status=running&scale=huge")

    assert response.status_code == 400
    errors = problems(response)
    assert set(errors) == {"status", "scale"}
    assert "'running' is not one of pending, active, finished" in errors["status"]


@pytest.mark.parametrize("name", ["search", "tag"])
def test_list_refuses_a_nul_character_in_a_text_filter(name, api, team_a):
    # Found by schemathesis: PostgreSQL refuses NUL in text, and the list answered 500.
    make_evaluation(team=team_a, start=False)

    response = api.get(LIST, {name: "shoes\x00"})

    assert response.status_code == 400
    assert problems(response) == {name: "must not contain NUL (0x00) characters"}


def test_list_is_paginated(api, team_a):
    made = [make_evaluation(team=team_a, start=False, keywords={}) for _ in range(5)]
    newest_first = [e.id for e in reversed(made)]

    page_one = api.get(f"{LIST}?page_size=2").json()
    page_three = api.get(f"{LIST}?page_size=2&page=3").json()

    assert page_one["count"] == 5
    assert [e["id"] for e in page_one["results"]] == newest_first[:2]
    assert page_one["previous"] is None
    assert "page=2" in page_one["next"]
    assert [e["id"] for e in page_three["results"]] == newest_first[4:]
    assert page_three["next"] is None


def test_a_page_past_the_end_is_a_json_404(api, team_a):
    make_evaluation(team=team_a, start=False)

    response = api.get(f"{LIST}?page=9")

    assert response.status_code == 404
    assert problems(response) == {}


def test_page_size_is_capped_at_500(api, team_a):
    make_evaluation(team=team_a, start=False)

    response = api.get(f"{LIST}?page_size=100000")

    assert response.status_code == 200
    assert response.json()["count"] == 1


# Measured on SQLite and PostgreSQL: the token, the count, the page, its metrics and its
# tags, and whose grades they rest on (source_mix.py: one read for the page's evaluations
# whose grades changed since it was last read). The same for 1 and 12 on the page.
LIST_QUERIES = 6


@pytest.mark.parametrize("size", [1, 12])
def test_list_reads_a_fixed_number_of_queries(size, api, team_a, django_assert_max_num_queries):
    apparel = Tag.objects.create(team=team_a, name="apparel")
    for _ in range(size):
        make_evaluation(team=team_a, tags=[apparel], keywords={"a": 2, "b": 2})

    with django_assert_max_num_queries(LIST_QUERIES):
        response = api.get(LIST)

    assert len(response.json()["results"]) == size


# --- Get --------------------------------------------------------------------------------


def test_get_answers_the_settings_and_every_metric_at_full_precision(api, team_a):
    evaluation = graded(
        team_a,
        {"red shoes": [3, 0, 2, 1, 3, 0, 2], "blue shirt": [1, 2, 0, 0, 3, 1, None]},
        metrics=[("ndcg", 10), ("dcg", 5), ("precision", 5)],
        description="Holiday set",
    )

    response = api.get(detail(evaluation))

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == evaluation.id
    assert body["name"] == evaluation.name
    assert body["description"] == "Holiday set"
    assert body["status"] == "active"
    assert body["scale"] == "graded"
    assert body["keywords"] == 2
    assert (body["graded_slots"], body["total_slots"]) == (13, 14)
    assert body["progress"] == evaluation.progress
    stored = {(m.metric, m.k): m for m in EvaluationMetric.objects.filter(evaluation=evaluation)}
    assert [(m["metric"], m["k"]) for m in body["metrics"]] == [
        ("ndcg", 10),
        ("dcg", 5),
        ("precision", 5),
    ]
    for metric in body["metrics"]:
        value = stored[(metric["metric"], metric["k"])].value
        assert value is not None
        assert metric["value"] == value  # the float itself, not a rounded copy
        assert metric["keywords_counted"] == stored[(metric["metric"], metric["k"])].value_count
    assert [m["label"] for m in body["metrics"]] == ["nDCG@10", "DCG@5", "P@5"]
    # Values with many digits survive: the metric really is not a round number.
    assert any(len(repr(m["value"])) > 8 for m in body["metrics"])


def test_get_answers_null_for_a_metric_without_a_value(api, team_a):
    evaluation = make_evaluation(team=team_a)

    body = api.get(detail(evaluation)).json()

    assert [m["value"] for m in body["metrics"]] == [None, None]
    assert [m["label"] for m in body["metrics"]] == ["nDCG@10", "P@5"]


def test_get_of_another_teams_evaluation_is_404(api, theirs):
    response = api.get(detail(theirs))

    assert response.status_code == 404
    assert problems(response) == {}


def test_get_of_an_evaluation_that_does_not_exist_is_404(api):
    assert api.get("/api/v1/evaluations/987654/").status_code == 404


def test_get_of_an_id_beyond_any_integer_column_is_404(api):
    assert api.get(f"/api/v1/evaluations/{2**70}/").status_code == 404


# Measured: the token, the evaluation, its metrics and its tags, and whose grades they
# rest on (read once per change of its grades).
GET_QUERIES = 5


@pytest.mark.parametrize("keywords", [1, 15])
def test_get_reads_a_fixed_number_of_queries(keywords, api, team_a, django_assert_max_num_queries):
    evaluation = make_evaluation(team=team_a, keywords={f"q{i}": 3 for i in range(keywords)})

    with django_assert_max_num_queries(GET_QUERIES):
        response = api.get(detail(evaluation))

    assert response.json()["keywords"] == keywords


# --- Create -----------------------------------------------------------------------------


def full_document(**changes) -> dict:
    document = {
        "name": "Holiday query set, try 4",
        "description": "Before the winter sale",
        "scale": "binary",
        "strategy": 3,
        "profile": "trec",
        "show_position": True,
        "scoring_guidelines": "**Relevant** means: would buy.",
        "reuse": "keyword_doc",
        "auto_restart": True,
        "transformers": {"graded": {"0": 0, "1": 3}},
        "tags": ["apparel", " winter "],
        "metrics": [{"metric": "precision", "k": 5}, {"metric": "ap", "k": 10}],
        "keywords": ["red running shoes", "  blue shirt ", "", "red running shoes", "hat"],
    }
    document.update(changes)
    return document


def test_create_stores_the_settings_metrics_keywords_and_tags(api, team_a):
    response = api.post(LIST, full_document(), content_type="application/json")

    assert response.status_code == 201, response.json()
    evaluation = Evaluation.objects.get(team=team_a)
    assert evaluation.name == "Holiday query set, try 4"
    assert evaluation.description == "Before the winter sale"
    assert (evaluation.scale, evaluation.strategy, evaluation.profile) == ("binary", 3, "trec")
    assert evaluation.show_position is True
    assert evaluation.scoring_guidelines == "**Relevant** means: would buy."
    assert evaluation.reuse == "keyword_doc"
    assert evaluation.auto_restart is True
    assert evaluation.transformers == {"graded": {"0": 0, "1": 3}}
    assert evaluation.status == Status.PENDING
    assert list(evaluation.metrics.order_by("position").values_list("metric", "k")) == [
        ("precision", 5),
        ("ap", 10),
    ]
    assert list(evaluation.keywords.order_by("position").values_list("text", flat=True)) == [
        "red running shoes",
        "blue shirt",
        "hat",
    ]
    assert sorted(evaluation.tags.values_list("name", flat=True)) == ["apparel", "winter"]
    assert set(Tag.objects.filter(team=team_a).values_list("name", flat=True)) == {
        "apparel",
        "winter",
    }
    body = response.json()
    assert body["id"] == evaluation.id
    assert body["keywords"] == 3
    assert body["tags"] == ["apparel", "winter"]
    assert [(m["metric"], m["k"], m["value"]) for m in body["metrics"]] == [
        ("precision", 5, None),
        ("ap", 10, None),
    ]


def test_create_takes_defaults_for_what_is_left_out(api, team_a):
    response = api.post(
        LIST,
        {"name": "Minimal", "metrics": [{"metric": "ndcg", "k": 10}]},
        content_type="application/json",
    )

    assert response.status_code == 201
    body = response.json()
    assert (body["scale"], body["strategy"], body["profile"], body["reuse"]) == (
        "graded",
        1,
        "searchtweak",
        "none",
    )
    assert body["keywords"] == 0
    assert body["tags"] == []


def test_create_reads_metric_names_in_any_case(api, team_a):
    response = api.post(
        LIST,
        {
            "name": "Shouted",
            "metrics": [{"metric": "NDCG", "k": 10}, {"metric": " Precision ", "k": 5}],
        },
        content_type="application/json",
    )

    assert response.status_code == 201, response.json()
    stored = EvaluationMetric.objects.filter(evaluation_id=response.json()["id"])
    assert sorted(stored.values_list("metric", "k")) == [("ndcg", 10), ("precision", 5)]
    twice = api.post(
        LIST,
        {"name": "Twice", "metrics": [{"metric": "ndcg", "k": 10}, {"metric": "NDCG", "k": 10}]},
        content_type="application/json",
    )
    assert twice.status_code == 400 and "listed twice" in str(twice.json())


def test_create_reuses_an_existing_tag_of_the_team(api, team_a):
    existing = Tag.objects.create(team=team_a, name="apparel", colour="#ff0000")

    api.post(LIST, full_document(tags=["apparel"]), content_type="application/json")

    assert list(Evaluation.objects.get().tags.all()) == [existing]
    assert Tag.objects.filter(team=team_a).count() == 1


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        ({"name": "  "}, {"name"}),
        ({"name": "x" * 201}, {"name"}),
        ({"scale": "huge"}, {"scale"}),
        ({"strategy": 2}, {"strategy"}),
        ({"profile": "bing"}, {"profile"}),
        ({"reuse": "always"}, {"reuse"}),
        ({"metrics": []}, {"metrics"}),
        ({"metrics": [{"metric": "ndcg", "k": -1}]}, {"metrics[0].k"}),
        ({"metrics": [{"metric": "ndcg", "k": 1001}]}, {"metrics[0].k"}),
        (
            {"metrics": [{"metric": "ndcg", "k": 10}, {"metric": "magic", "k": "ten"}]},
            {"metrics[1].metric", "metrics[1].k"},
        ),
        ({"metrics": [{"k": 10}]}, {"metrics[0].metric"}),
        ({"keywords": ["fine", "x" * 501]}, {"keywords[1]"}),
        ({"tags": ["x" * 61]}, {"tags[0]"}),
        ({"transformers": {"graded": {"0": "high"}}}, {"transformers.graded.0"}),
        # Found by the service, after the serializer: a repeated metric and a rule that
        # leaves out a grade of the native scale.
        (
            {"metrics": [{"metric": "ap", "k": 10}, {"metric": "ap", "k": 10}]},
            {"metrics[1]"},
        ),
        ({"transformers": {"graded": {"0": 0}}}, {"transformers.graded.1"}),
        (
            {"name": "", "scale": "huge", "metrics": [{"metric": "ndcg", "k": -1}]},
            {"name", "scale", "metrics[0].k"},
        ),
    ],
)
def test_create_refuses_bad_input_naming_each_field_and_writes_nothing(
    changes, fields, api, team_a
):
    before = row_counts()

    response = api.post(LIST, full_document(**changes), content_type="application/json")

    assert response.status_code == 400
    errors = problems(response)
    assert {field for field in errors if field is not None} >= fields
    assert set(errors) <= fields | {None}, errors
    assert all(errors.values())
    assert row_counts() == before


def test_create_refuses_a_body_that_is_not_an_object(api):
    response = api.post(LIST, [1, 2], content_type="application/json")

    assert response.status_code == 400
    assert list(problems(response)) == [None]


def test_create_refuses_a_body_that_is_not_json(api):
    response = api.post(LIST, "{not json", content_type="application/json")

    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_create_writes_nothing_when_the_service_refuses_after_tags_were_named(api, team_a):
    before = row_counts()

    response = api.post(
        LIST,
        full_document(tags=["brand-new"], metrics=[{"metric": "ap", "k": 5}] * 2),
        content_type="application/json",
    )

    assert response.status_code == 400
    assert not Tag.objects.filter(name="brand-new").exists()
    assert row_counts() == before


# --- Delete -----------------------------------------------------------------------------


# Measured on SQLite: the token, the evaluation, the active check, then Django's cascade
# (the ids of metrics, keywords and snapshots, then one DELETE per table, unretrieved
# judgements included). The same for 1 and 12 keywords. 22 before AI judges; their
# tables joined the cascade (the evaluation's judge runs, and the judge grades and
# failures of its slots): 4 more, none of them per keyword. Calibration and chains added
# 4 more (gold sets drawn from it are kept, their link to it cleared; its chain and the
# chain's steps go with it). The keywords' notes (information needs) 1 more. Schedules
# and the decision order added 5, none per keyword: the schedules whose setup it is and
# the scheduled runs it is the evaluation, previous run or baseline of have their link
# cleared (4), and its decision order and those that name it as the rival go with it
# (1). Grades copied from it into other evaluations keep their source and lose the link
# to it (1). The keywords' TREC query ids go with them (1). Tries whose queries came from
# it, that were measured against it or sent to it lose those links (3).
DELETE_QUERIES = 41


def test_delete_removes_a_pending_evaluation_and_everything_in_it(api, team_a):
    evaluation = make_evaluation(team=team_a, start=False, keywords={"a": 3, "b": 2})
    kept = make_evaluation(team=team_a, start=False, keywords={"c": 1})

    response = api.delete(detail(evaluation))

    assert response.status_code == 204
    assert response.content == b""
    assert not Evaluation.objects.filter(id=evaluation.id).exists()
    assert not Keyword.objects.filter(evaluation_id=evaluation.id).exists()
    assert not Snapshot.objects.filter(keyword__evaluation_id=evaluation.id).exists()
    assert not FeedbackSlot.objects.filter(evaluation_id=evaluation.id).exists()
    assert not EvaluationMetric.objects.filter(evaluation_id=evaluation.id).exists()
    assert Keyword.objects.filter(evaluation=kept).count() == 1


def test_delete_removes_a_finished_evaluation(api, team_a):
    evaluation = evaluation_finish_now(evaluation=make_evaluation(team=team_a))

    assert api.delete(detail(evaluation)).status_code == 204
    assert not Evaluation.objects.filter(id=evaluation.id).exists()


def test_delete_of_an_active_evaluation_is_refused_with_409_and_keeps_it(api, team_a):
    evaluation = make_evaluation(team=team_a)
    before = row_counts()

    response = api.delete(detail(evaluation))

    assert response.status_code == 409
    assert "active" in response.json()["detail"]
    assert list(problems(response).values()) == [response.json()["detail"]]
    assert row_counts() == before


def test_delete_of_another_teams_evaluation_is_404_and_keeps_it(api, theirs):
    response = api.delete(detail(theirs))

    assert response.status_code == 404
    assert Evaluation.objects.filter(id=theirs.id).exists()


@pytest.mark.parametrize("keywords", [1, 12])
def test_delete_reads_and_writes_a_number_of_queries_that_does_not_grow_per_keyword(
    keywords, api, team_a, grader_of_a, django_assert_max_num_queries
):
    evaluation = make_evaluation(
        team=team_a, start=False, keywords={f"q{i}": 3 for i in range(keywords)}
    )
    for slot in slots_of(evaluation)[::2]:
        slot_judge(slot_id=slot.id, giver=Giver.recorded(grader_of_a), grade=1)
    recompute_marked()

    with django_assert_max_num_queries(DELETE_QUERIES):
        response = api.delete(detail(evaluation))

    assert response.status_code == 204


# --- Start, stop, finish ----------------------------------------------------------------


def post(api, evaluation, action: str):
    return api.post(f"{detail(evaluation)}{action}/")


def test_start_opens_a_pending_evaluation(api, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    response = post(api, evaluation, "start")

    assert response.status_code == 200
    assert response.json()["status"] == "active"
    assert response.json()["started_at"] is not None
    evaluation.refresh_from_db()
    assert evaluation.status == Status.ACTIVE


def test_stop_pauses_an_active_evaluation_and_keeps_its_grades(api, team_a):
    evaluation = graded(team_a, {"q": [1, 2, None]})

    response = post(api, evaluation, "stop")

    assert response.status_code == 200
    assert response.json()["status"] == "pending"
    assert response.json()["graded_slots"] == 2
    evaluation.refresh_from_db()
    assert evaluation.status == Status.PENDING
    assert FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).count() == 2


def test_finish_ends_an_active_evaluation_whatever_its_progress(api, team_a):
    evaluation = graded(team_a, {"q": [3, 1, None]}, metrics=[("ndcg", 3)])

    response = post(api, evaluation, "finish")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "finished"
    assert body["finished_at"] is not None
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED
    assert body["metrics"][0]["value"] == EvaluationMetric.objects.get(evaluation=evaluation).value


@pytest.mark.parametrize(
    ("status", "action", "reason"),
    [
        ("active", "start", "only a pending evaluation can start; this one is active"),
        ("finished", "start", "only a pending evaluation can start; this one is finished"),
        (
            "pending",
            "stop",
            "only an active or starting evaluation can pause; this one is pending",
        ),
        (
            "finished",
            "stop",
            "only an active or starting evaluation can pause; this one is finished",
        ),
        ("pending", "finish", "only an active evaluation can finish; this one is pending"),
        ("finished", "finish", "only an active evaluation can finish; this one is finished"),
    ],
)
def test_a_transition_the_status_does_not_allow_is_refused_with_409_and_a_reason(
    status, action, reason, api, team_a
):
    evaluation = make_evaluation(team=team_a, start=status != "pending")
    if status == "finished":
        evaluation_finish_now(evaluation=evaluation)

    response = post(api, evaluation, action)

    assert response.status_code == 409
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"] == reason
    assert problems(response) == {None: reason}
    evaluation.refresh_from_db()
    assert evaluation.status == status


@pytest.mark.parametrize("action", ["start", "stop", "finish"])
def test_a_transition_of_another_teams_evaluation_is_404_and_changes_nothing(action, api, team_b):
    theirs = make_evaluation(team=team_b, start=action != "start")
    before = theirs.status

    response = post(api, theirs, action)

    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == before


# Measured on SQLite and PostgreSQL, the same for 1 and 12 keywords: the token, the
# evaluation, the change, and the answer (evaluation, metrics, tags). Finishing also
# makes the means exact and records a history point: one read per metric (2 here).
# finish: one more on PostgreSQL since the recompute locks the evaluation's row first
# (apps/scoring/store.py, "Lock order"); still the same for 1 keyword and for 12.
# Opening reads whether the queue is in decision order (start, 1 more); a
# finish reads who hears it, webhooks and e-mails (2 more: nobody listens here). The answer
# says whose grades its numbers rest on (1 more, read once per change of its grades).
TRANSITION_QUERIES = {"start": 13, "stop": 8, "finish": 23}


@pytest.mark.parametrize("action", ["start", "stop", "finish"])
@pytest.mark.parametrize("keywords", [1, 12])
def test_a_transition_reads_a_fixed_number_of_queries(
    action, keywords, api, team_a, django_assert_max_num_queries
):
    evaluation = graded(
        team_a,
        {f"q{i}": [1, 2, None] for i in range(keywords)},
        metrics=[("ndcg", 10), ("ap", 5)],
    )
    if action == "start":
        post(api, evaluation, "stop")

    with django_assert_max_num_queries(TRANSITION_QUERIES[action]):
        response = post(api, evaluation, action)

    assert response.status_code == 200


def test_keyword_metrics_survive_a_finish_unchanged(api, team_a):
    evaluation = graded(team_a, {"q": [3, 1, 0, None]}, metrics=[("ndcg", 4)])
    before = list(KeywordMetric.objects.filter(keyword__evaluation=evaluation).values("value"))

    post(api, evaluation, "finish")

    after = list(KeywordMetric.objects.filter(keyword__evaluation=evaluation).values("value"))
    assert after == before
