"""Saved query sets over the API: saved under a name, listed, run by a try by name,
removed; a name saved twice or a bad text is refused naming the field; another team's
set is not found."""

import pytest

from apps.tries.models import SavedQuerySet, Try
from apps.tries.tests.tuned import make_tuned_model

pytestmark = pytest.mark.django_db

SETS = "/api/v1/query-sets/"


def save(api, **body):
    return api.post(SETS, body, content_type="application/json")


def test_a_set_saved_under_a_name_is_listed_and_a_try_runs_its_queries(
    api, team_a, search_server, django_capture_on_commit_callbacks
):
    make_tuned_model(team_a, search_server)
    created = save(api, name="Head queries", queries=["shoes", " boots ", "shoes"])
    assert created.status_code == 201
    assert created.json()["queries"] == ["shoes", "boots"]
    assert [s["name"] for s in api.get(SETS).json()] == ["Head queries"]

    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(
            "/api/v1/tries/",
            {"model": "Tuned", "query_set": "Head queries"},
            content_type="application/json",
        )
    assert answer.status_code == 202
    attempt = Try.objects.get(id=answer.json()["id"])
    assert [q.text for q in attempt.queries.order_by("position")] == ["shoes", "boots"]
    assert attempt.query_set.name == "Head queries"


def test_a_name_saved_twice_and_bad_texts_are_refused_naming_the_field(api):
    assert save(api, name="Head", queries=["a"]).status_code == 201
    again = save(api, name="Head", queries=["", 5])
    assert again.status_code == 400
    assert [e["field"] for e in again.json()["errors"]] == ["name", "queries[0]", "queries[1]"]
    assert SavedQuerySet.objects.count() == 1


def test_another_teams_set_is_not_found_and_a_set_is_removed(api, team_b):
    theirs = SavedQuerySet.objects.create(team=team_b, name="Theirs", queries=["x"])
    assert api.get(f"{SETS}{theirs.id}/").status_code == 404
    assert api.delete(f"{SETS}{theirs.id}/").status_code == 404
    ours = save(api, name="Ours", queries=["a"]).json()
    assert api.get(f"{SETS}{ours['id']}/").json()["queries"] == ["a"]
    assert api.delete(f"{SETS}{ours['id']}/").status_code == 204
    assert not SavedQuerySet.objects.filter(id=ours["id"]).exists()
