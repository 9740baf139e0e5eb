"""The evaluation lifecycle over the API: create from a model, start (keywords run against
a real search server), edit, clone, archive, pin and the team baseline."""

import pytest

from apps.evaluations.models import Evaluation, Keyword, Status
from apps.lifecycle.steps import evaluation_finish_now
from tests.factories import make_evaluation, make_search_model, make_team

pytestmark = pytest.mark.django_db

METRICS = [{"metric": "ndcg", "k": 5}]


def create_from_model(api, model, **extra):
    body = {"name": "Shoes 1", "metrics": METRICS, "model": model.id, "keywords": ["a", "b"]}
    return api.post("/api/v1/evaluations/", {**body, **extra}, content_type="application/json")


def test_an_integration_creates_an_evaluation_from_a_model_starts_it_and_reads_its_runs(
    api, team_a, search_server, django_capture_on_commit_callbacks
):
    model = make_search_model(team_a, search_server.base_url)
    created = create_from_model(api, model).json()
    assert (created["model"], created["status"], created["keywords_run"]) == (
        model.id,
        "pending",
        0,
    )

    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"/api/v1/evaluations/{created['id']}/start/")

    assert started.status_code == 200
    after = api.get(f"/api/v1/evaluations/{created['id']}/").json()
    assert (after["status"], after["fetching"], after["keywords_run"]) == ("active", False, 2)
    assert (after["keywords_failed"], after["total_slots"]) == (0, 10)
    keywords = api.get(f"/api/v1/evaluations/{created['id']}/keywords/").json()["results"]
    assert len(keywords) == 2


def test_a_model_of_another_team_is_refused_naming_the_field(api, search_server):
    foreign = make_search_model(make_team(), search_server.base_url)

    response = create_from_model(api, foreign)

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "model", "message": f"no search model {foreign.id} in this team"}
    ]
    assert not Evaluation.objects.filter(name="Shoes 1").exists()


def test_a_pending_evaluation_is_edited_with_patch(api, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    response = api.patch(
        f"/api/v1/evaluations/{evaluation.id}/",
        {"name": "Edited", "strategy": 3, "metrics": [{"metric": "ap", "k": 3}], "tags": ["x"]},
        content_type="application/json",
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["name"], body["strategy"], body["tags"]) == ("Edited", 3, ["x"])
    assert [m["metric"] for m in body["metrics"]] == ["ap"]


def test_a_locked_setting_is_refused_with_its_field_and_an_active_one_with_409(api, team_a):
    active = make_evaluation(team=team_a)
    refused = api.patch(
        f"/api/v1/evaluations/{active.id}/", {"name": "x"}, content_type="application/json"
    )
    assert refused.status_code == 409

    api.post(f"/api/v1/evaluations/{active.id}/stop/")
    locked = api.patch(
        f"/api/v1/evaluations/{active.id}/", {"scale": "binary"}, content_type="application/json"
    )
    assert locked.status_code == 400
    assert locked.json()["errors"] == [
        {"field": "scale", "message": "locked once the evaluation has started"}
    ]


def test_clone_answers_the_copy(api, team_a):
    evaluation = make_evaluation(team=team_a)

    response = api.post(
        f"/api/v1/evaluations/{evaluation.id}/clone/",
        {"name": "Copy"},
        content_type="application/json",
    )

    assert response.status_code == 201
    assert (response.json()["name"], response.json()["status"]) == ("Copy", "pending")


def test_archive_pin_and_baseline_set_and_clear(api, team_a):
    evaluation = evaluation_finish_now(evaluation=make_evaluation(team=team_a))
    base = f"/api/v1/evaluations/{evaluation.id}"

    assert api.post(f"{base}/archive/").json()["archived"] is True
    assert api.delete(f"{base}/archive/").json()["archived"] is False
    assert api.post(f"{base}/pin/").json()["pinned"] is True
    assert api.delete(f"{base}/pin/").json()["pinned"] is False
    assert api.post(f"{base}/baseline/").json()["is_baseline"] is True
    team_a.refresh_from_db()
    assert team_a.baseline_evaluation_id == evaluation.id
    assert api.delete(f"{base}/baseline/").json()["is_baseline"] is False


def test_only_a_finished_evaluation_becomes_the_baseline(api, team_a):
    evaluation = make_evaluation(team=team_a)

    response = api.post(f"/api/v1/evaluations/{evaluation.id}/baseline/")

    assert response.status_code == 409
    assert "only a finished evaluation" in response.json()["detail"]


def test_archiving_an_active_evaluation_is_refused(api, team_a):
    response = api.post(f"/api/v1/evaluations/{make_evaluation(team=team_a).id}/archive/")
    assert response.status_code == 409


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("patch", "/"),
        ("post", "/clone/"),
        ("post", "/archive/"),
        ("post", "/pin/"),
        ("post", "/baseline/"),
        ("delete", "/baseline/"),
    ],
)
def test_another_teams_evaluation_answers_404_and_is_unchanged(api, method, suffix):
    foreign = evaluation_finish_now(evaluation=make_evaluation())

    response = getattr(api, method)(
        f"/api/v1/evaluations/{foreign.id}{suffix}", {}, content_type="application/json"
    )

    assert response.status_code == 404
    foreign.refresh_from_db()
    assert (foreign.archived, foreign.pinned) == (False, False)
    assert Evaluation.objects.count() == 1


def test_a_start_that_runs_keywords_can_be_paused_over_the_api(api, team_a, search_server):
    model = make_search_model(team_a, search_server.base_url)
    created = create_from_model(api, model).json()
    # Without the commit callbacks the queued run does not happen: the start stays running.
    api.post(f"/api/v1/evaluations/{created['id']}/start/")
    assert api.get(f"/api/v1/evaluations/{created['id']}/").json()["fetching"] is True
    assert api.delete(f"/api/v1/evaluations/{created['id']}/").status_code == 409

    paused = api.post(f"/api/v1/evaluations/{created['id']}/stop/").json()

    assert (paused["status"], paused["fetching"]) == ("pending", False)
    assert (
        Keyword.objects.filter(evaluation_id=created["id"], executed_at__isnull=False).count() == 0
    )
    assert Evaluation.objects.get(id=created["id"]).status == Status.PENDING
