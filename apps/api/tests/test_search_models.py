"""/api/v1/models/ and /api/v1/models/{id}/, called with a real team token."""

import pytest
from django.test import Client

from apps.accounts.models import Tag
from apps.endpoints.tests.factories import make_endpoint, make_model
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db


@pytest.fixture
def model(team_a):
    endpoint = make_endpoint(
        team_a,
        name="Catalogue",
        url="https://search.example.com/s",
        method="POST",
        timeout_seconds=2.5,
        headers="Authorization: Bearer search-secret",
    )
    model = make_model(
        team_a,
        endpoint,
        name="Default ranking",
        description="what ships today",
        params="q=#query#\napi_key=param-secret",
        default_keywords="red shoes\n\nblue shirt",
    )
    model.tags.set(
        [Tag.objects.create(team=team_a, name="shoes"), Tag.objects.create(team=team_a, name="eu")]
    )
    make_evaluation(team=team_a, search_model=model, start=False)
    return model


def test_the_list_shows_each_model_with_its_endpoint_tags_and_default_keywords(api, model):
    response = api.get("/api/v1/models/")

    assert response.status_code == 200
    body = response.json()
    assert (body["count"], body["next"], body["previous"]) == (1, None, None)
    [shown] = body["results"]
    assert shown["id"] == model.id
    assert (shown["name"], shown["description"]) == ("Default ranking", "what ships today")
    assert shown["endpoint"] == {
        "id": model.endpoint_id,
        "name": "Catalogue",
        "method": "POST",
        "url": "https://search.example.com/s",
        "timeout_seconds": 2.5,
    }
    assert shown["tags"] == ["eu", "shoes"]
    assert shown["default_keywords"] == ["red shoes", "blue shirt"]
    assert (shown["body_type"], shown["evaluations"]) == ("json", 1)
    assert shown["created_at"] and shown["updated_at"]


def test_the_search_systems_credentials_are_never_in_an_answer(api, model):
    answers = api.get("/api/v1/models/").content + api.get(f"/api/v1/models/{model.id}/").content

    assert b"search-secret" not in answers and b"param-secret" not in answers


def test_one_model_is_answered_as_in_the_list(api, model):
    listed = api.get("/api/v1/models/").json()["results"][0]

    response = api.get(f"/api/v1/models/{model.id}/")

    assert response.status_code == 200
    assert response.json() == listed


def test_the_list_is_paginated(api, team_a):
    endpoint = make_endpoint(team_a)
    for number in range(5):
        make_model(team_a, endpoint, name=f"Model {number}")

    first = api.get("/api/v1/models/?page_size=2").json()
    last = api.get("/api/v1/models/?page_size=2&page=3").json()

    assert first["count"] == 5
    assert [m["name"] for m in first["results"]] == ["Model 0", "Model 1"]
    assert first["next"].endswith("/api/v1/models/?page=2&page_size=2")
    assert [m["name"] for m in last["results"]] == ["Model 4"]


def test_another_teams_models_are_not_listed_and_not_found(api, team_b):
    theirs = make_model(team_b, name="Their ranking")

    assert api.get("/api/v1/models/").json()["count"] == 0
    response = api.get(f"/api/v1/models/{theirs.id}/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No SearchModel matches the given query.", "errors": []}


def test_a_model_that_does_not_exist_is_not_found(api):
    assert api.get("/api/v1/models/999999/").status_code == 404


def test_without_a_token_the_answer_is_401(model):
    for path in ("/api/v1/models/", f"/api/v1/models/{model.id}/"):
        response = Client().get(path)
        assert response.status_code == 401, path
        assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_the_models_are_read_only(api, model):
    assert api.post("/api/v1/models/", {}, content_type="application/json").status_code == 405
    assert api.delete(f"/api/v1/models/{model.id}/").status_code == 405


@pytest.mark.parametrize("count", [2, 10])
def test_the_list_takes_the_same_queries_however_many_models(
    api, team_a, count, django_assert_max_num_queries
):
    endpoint = make_endpoint(team_a)
    tag = Tag.objects.create(team=team_a, name="shoes")
    for number in range(count):
        make_model(team_a, endpoint, name=f"Model {number}").tags.set([tag])

    # Token, its last use, the page count, the page, its tags.
    with django_assert_max_num_queries(5):
        assert len(api.get("/api/v1/models/").json()["results"]) == count
