"""Tries over the API with a real team token: POST answers 202 and the try's URL, GET
gives its lists, metrics with judged@k and verdict; secrets never come back; another
team's try is not found; bad input is refused naming the field."""

import pytest

from apps.tries.models import Try
from apps.tries.tests.tuned import KEYWORDS, doc_id, import_grades, make_tuned_model

pytestmark = pytest.mark.django_db

TRIES = "/api/v1/tries/"


@pytest.fixture
def tuned_model(team_a, search_server):
    return make_tuned_model(team_a, search_server)


def post_try(api, capture, **body):
    with capture(execute=True):
        return api.post(TRIES, body, content_type="application/json")


def test_a_try_posted_answers_202_and_its_url_gives_the_verdict(
    api, team_a, tuned_model, django_capture_on_commit_callbacks
):
    import_grades(team_a, ranks=range(1, 11))
    capture = django_capture_on_commit_callbacks
    first = post_try(api, capture, model="Tuned", queries=KEYWORDS, metrics="ndcg@5")
    assert first.status_code == 202
    second = post_try(
        api,
        capture,
        model=tuned_model.id,
        queries=KEYWORDS,
        params=[["boost", "1"]],
        headers={"X-Secret": "s3cret-value"},
        baseline_try=1,
        metrics="ndcg@5",
        notes="boost down",
    )
    assert second.status_code == 202
    url = second.json()["url"]
    assert second["Location"] == url and url.endswith(f"{TRIES}{second.json()['id']}/")

    answer = api.get(url)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["number"], body["state"], body["queries_done"]) == (2, "done", 10)
    assert (body["verdict"], body["exit_code"], body["baseline"]) == ("worse", 1, "try 1")
    metric = body["metrics"][0]
    assert metric["metric"] == "nDCG@5" or metric["metric"].lower().startswith("ndcg")
    assert metric["judged"] == metric["baseline_judged"] == 1.0
    assert metric["difference"] < 0 and metric["ci_high"] < 0
    query = body["queries"][0]
    assert query["results"][0]["doc_id"] == doc_id(KEYWORDS[0], 10)
    assert query["results"][0]["judged_by"] == "people"
    assert query["baseline_results"][0]["doc_id"] == doc_id(KEYWORDS[0], 1)
    assert body["header_names"] == ["X-Secret"]
    assert "s3cret-value" not in answer.content.decode()


def test_bad_input_is_refused_naming_the_field(api, tuned_model):
    answer = api.post(
        TRIES,
        {"model": "Tuned", "queries": ["a"], "knobs": {"query": 1}, "depth": 1000},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "depth" in [error["field"] for error in answer.json()["errors"]]
    assert not Try.objects.exists()
    answer = api.post(
        TRIES,
        {"model": "Tuned", "queries": ["a"], "knobs": {"query": 1}},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert [error["field"] for error in answer.json()["errors"]] == ["knobs.query"]


def test_another_teams_try_is_not_found(
    api, team_b, search_server, django_capture_on_commit_callbacks
):
    from apps.tries.starting import TryRequest, try_start

    theirs = make_tuned_model(team_b, search_server)
    attempt = try_start(team=team_b, user=None, asked=TryRequest(model=theirs.id, queries=["a"]))
    assert api.get(f"{TRIES}{attempt.id}/").status_code == 404
    answer = api.post(
        TRIES, {"model": theirs.id, "queries": ["a"]}, content_type="application/json"
    )
    assert answer.status_code == 400
    assert [error["field"] for error in answer.json()["errors"]] == ["model"]


def test_the_list_holds_the_teams_tries_newest_first_and_filters_by_model(
    api, team_a, team_b, tuned_model, search_server
):
    from apps.tries.starting import TryRequest, try_start

    for notes in ("first", "second"):
        try_start(
            team=team_a, user=None, asked=TryRequest(model="Tuned", queries=["a"], notes=notes)
        )
    theirs = make_tuned_model(team_b, search_server)
    try_start(team=team_b, user=None, asked=TryRequest(model=theirs.id, queries=["a"]))

    listed = api.get(TRIES).json()
    assert [(t["number"], t["notes"]) for t in listed] == [(2, "second"), (1, "first")]
    assert api.get(TRIES, {"model": theirs.id}).json() == []
    assert api.get(TRIES, {"model": "x\x00"}).status_code == 400


def test_each_bad_query_is_named_by_its_index(api, tuned_model):
    answer = api.post(
        TRIES, {"model": "Tuned", "queries": ["ok", "", "a" * 600]}, content_type="application/json"
    )
    assert answer.status_code == 400
    assert [error["field"] for error in answer.json()["errors"]] == ["queries[1]", "queries[2]"]
