"""Over the API a team's evaluation names are unique too, trimmed and in any case: create,
rename, clone and both imports answer 400 naming the `name` field."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.evaluations.models import Evaluation
from apps.evaluations.services import evaluation_create

from .test_import_export import IMPORT, QRELS, RUN, document

pytestmark = pytest.mark.django_db

METRICS = [{"metric": "ndcg", "k": 10}]


def name_refusal(response) -> list[dict]:
    assert response.status_code == 400, response.content
    return response.json()["errors"]


def taken(name: str) -> list[dict]:
    return [
        {"field": "name", "message": f"An evaluation named '{name}' already exists in this team"}
    ]


@pytest.fixture
def shoes(team_a) -> Evaluation:
    return evaluation_create(team=team_a, name="Shoes 1", metrics=[("ndcg", 10)])


def test_creating_an_evaluation_with_a_taken_name_is_400_naming_name(api, team_a, shoes):
    response = api.post(
        "/api/v1/evaluations/",
        {"name": " shoes 1 ", "metrics": METRICS},
        content_type="application/json",
    )

    assert name_refusal(response) == taken("shoes 1")
    assert Evaluation.objects.filter(team=team_a).count() == 1


def test_another_teams_name_is_free_for_this_team(api, team_b):
    evaluation_create(team=team_b, name="Shoes 1", metrics=[("ndcg", 10)])

    response = api.post(
        "/api/v1/evaluations/",
        {"name": "Shoes 1", "metrics": METRICS},
        content_type="application/json",
    )

    assert response.status_code == 201
    assert response.json()["name"] == "Shoes 1"


def test_renaming_to_a_taken_name_is_400_and_keeps_the_old_name(api, team_a, shoes):
    hats = evaluation_create(team=team_a, name="Hats 1", metrics=[("ndcg", 10)])

    response = api.patch(
        f"/api/v1/evaluations/{hats.id}/", {"name": "SHOES 1"}, content_type="application/json"
    )

    assert name_refusal(response) == taken("SHOES 1")
    hats.refresh_from_db()
    assert hats.name == "Hats 1"


def test_a_clone_named_with_a_taken_name_is_400(api, shoes):
    response = api.post(
        f"/api/v1/evaluations/{shoes.id}/clone/",
        {"name": "Shoes 1"},
        content_type="application/json",
    )

    assert name_refusal(response) == taken("Shoes 1")


def test_a_clone_without_a_name_takes_the_next_free_one(api, team_a, shoes):
    evaluation_create(team=team_a, name="Shoes 2", metrics=[("ndcg", 10)])

    response = api.post(
        f"/api/v1/evaluations/{shoes.id}/clone/", {}, content_type="application/json"
    )

    assert response.status_code == 201
    assert response.json()["name"] == "Shoes 3"


def test_importing_a_document_whose_name_is_taken_is_refused_whole(api, team_a):
    evaluation_create(team=team_a, name="holiday query set, TRY 4", metrics=[("ndcg", 10)])

    response = api.post(IMPORT, document(), content_type="application/json")

    assert name_refusal(response) == taken("Holiday query set, try 4")
    assert Evaluation.objects.filter(team=team_a).count() == 1


def test_importing_a_trec_run_under_a_taken_name_is_refused(api, team_a):
    evaluation_create(team=team_a, name="BM25 run", metrics=[("ndcg", 10)])

    response = api.post(
        "/api/v1/evaluations/import-trec/",
        {
            "run": SimpleUploadedFile("run.txt", RUN.encode()),
            "qrels": SimpleUploadedFile("qrels.txt", QRELS.encode()),
            "name": "bm25 run",
            "scale": "graded",
            "metrics": "ndcg@3",
        },
    )

    assert name_refusal(response) == taken("bm25 run")
    assert Evaluation.objects.filter(team=team_a).count() == 1
