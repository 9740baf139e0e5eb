"""The API's routes: every one named, every v1 path ending with a slash, and the paths
v1 answered without a trailing slash (ten of them) still answering as before,
with the same views, while the schema lists each operation once."""

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, resolve, reverse

from apps.api import urls
from apps.evaluations.models import Evaluation, Status
from apps.lifecycle.steps import evaluation_finish_now
from tests.factories import make_evaluation

from .test_hostile_input import document
from .test_trec_pool import trec_form

pytestmark = pytest.mark.django_db

V1 = "/api/v1/evaluations"


def every_route(patterns=None, prefix="/api/"):
    """(path, pattern) for every route of apps.api.urls, as mounted at /api/."""
    for pattern in urls.urlpatterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from every_route(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), pattern


def test_every_api_route_has_a_name_of_its_own():
    names = [pattern.name for _path, pattern in every_route()]

    assert all(names), [path for path, pattern in every_route() if not pattern.name]
    assert len(names) == len(set(names))


def test_every_api_route_is_reversed_in_the_api_namespace():
    assert reverse("api:evaluation_list") == f"{V1}/"
    assert reverse("api:evaluation_import") == f"{V1}/import/"
    assert reverse("api:evaluation_start", args=[7]) == f"{V1}/7/start/"
    assert reverse("api:evaluation_start_unslashed", args=[7]) == f"{V1}/7/start"
    assert reverse("api:schema") == "/api/schema/"
    assert reverse("api:docs") == "/api/docs/"


def test_every_v1_route_ends_with_a_slash():
    assert [str(route.pattern) for route in urls.v1 if not str(route.pattern).endswith("/")] == []


@pytest.mark.parametrize("old", urls.unslashed, ids=lambda route: route.name)
def test_an_old_path_is_its_route_without_the_slash_with_the_same_view(old):
    [route] = [route for route in urls.v1 if f"{route.name}_unslashed" == old.name]

    assert str(old.pattern) == str(route.pattern).removesuffix("/")
    assert old.callback.cls is route.callback.cls
    # Kept out of the schema by the view it routes to, not by a list to keep up to date.
    assert old.callback.initkwargs == {"schema": None}


def test_the_schema_lists_no_old_path():
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert [path for path in json.loads(response.content)["paths"] if not path.endswith("/")] == []


# --- The old paths answer -----------------------------------------------------------------


def test_an_old_import_path_takes_a_json_document(api):
    response = api.post(f"{V1}/import", document(), content_type="application/json")

    assert response.status_code == 201, response.content[:300]
    assert resolve(f"{V1}/import").url_name == "evaluation_import_unslashed"


def test_an_old_import_path_keeps_the_imports_size_limit(api, settings):
    # Over the limit of other requests, under the imports' (apps/core/request_limits.py).
    settings.REQUEST_MAX_BYTES = 2_000
    settings.IMPORT_MAX_REQUEST_BYTES = 100_000
    body = json.dumps(document()).encode() + b" " * 3_000

    response = api.generic("POST", f"{V1}/import", body, content_type="application/json")

    assert response.status_code == 201, response.content[:300]


def test_an_old_trec_import_path_takes_an_upload(api):
    response = api.post(f"{V1}/import-trec", trec_form())

    assert response.status_code == 201, response.content[:300]


def test_old_lifecycle_paths_start_stop_and_finish(api, team_a):
    evaluation = make_evaluation(team=team_a, start=False)
    old = f"{V1}/{evaluation.id}"

    assert api.post(f"{old}/start").json()["status"] == "active"
    assert api.post(f"{old}/stop").json()["status"] == "pending"
    api.post(f"{old}/start")
    assert api.post(f"{old}/finish").json()["status"] == "finished"
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED


def test_old_paths_clone_archive_pin_and_set_the_baseline(api, team_a):
    evaluation = evaluation_finish_now(evaluation=make_evaluation(team=team_a))
    old = f"{V1}/{evaluation.id}"

    copy = api.post(f"{old}/clone", {"name": "Copy"}, content_type="application/json")
    assert copy.status_code == 201
    assert Evaluation.objects.get(id=copy.json()["id"]).name == "Copy"
    assert api.post(f"{old}/archive").json()["archived"] is True
    assert api.delete(f"{old}/archive").json()["archived"] is False
    assert api.post(f"{old}/pin").json()["pinned"] is True
    assert api.delete(f"{old}/pin").json()["pinned"] is False
    assert api.post(f"{old}/baseline").json()["is_baseline"] is True
    assert api.delete(f"{old}/baseline").json()["is_baseline"] is False


def test_an_old_export_path_answers_what_the_new_one_does(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"shoes": 2})

    def body(path):
        response = api.get(path, {"format": "csv"})
        assert response.status_code == 200
        return b"".join(response.streaming_content) if response.streaming else response.content

    assert body(f"{V1}/{evaluation.id}/export") == body(f"{V1}/{evaluation.id}/export/")
    assert api.head(f"{V1}/{evaluation.id}/export", {"format": "csv"}).status_code == 200


def test_an_old_path_refuses_another_teams_evaluation_as_the_new_one_does(api):
    theirs = make_evaluation(start=False)

    assert api.post(f"{V1}/{theirs.id}/start").status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == Status.PENDING
