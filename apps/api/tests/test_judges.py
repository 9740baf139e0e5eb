"""/api/v1/judges: a team adds, reads, changes and removes its AI judges; every problem
names its field; the API key goes in and never comes out; another team's judge is 404."""

import json

import pytest

from apps.judges.models import Judge

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-api-QRST"
JUDGE = {
    "name": "GPT grader",
    "protocol": "openai",
    "base_url": "https://api.openai.com/v1",
    "model_name": "gpt-4o-mini",
    "api_key": API_KEY,
    "results_per_call": 10,
    "calls_at_once": 8,
    "budget_cost": "25.00",
    "price_input_per_million": "0.15",
    "price_output_per_million": "0.60",
}


def post(api, body, path="/api/v1/judges/"):
    return api.post(path, json.dumps(body), content_type="application/json")


def test_a_judge_is_added_and_its_key_never_comes_back(api):
    added = post(api, JUDGE)
    assert added.status_code == 201, added.content
    assert API_KEY not in added.content.decode()
    body = added.json()
    assert body["has_api_key"] and body["api_key_hint"] == "…QRST"
    assert (body["results_per_call"], body["calls_at_once"]) == (10, 8)
    listed = api.get("/api/v1/judges/")
    one = api.get(f"/api/v1/judges/{body['id']}/")
    for answer in (listed, one):
        assert answer.status_code == 200 and API_KEY not in answer.content.decode()
    stored = Judge.objects.get(id=body["id"])
    assert API_KEY not in stored.api_key_encrypted


def test_every_problem_names_its_field_and_nothing_is_written(api):
    bad = {
        **JUDGE,
        "protocol": "gemini",
        "base_url": "ftp://models.example",
        "results_per_call": 50,
        "calls_at_once": 0,
        "temperature": 3,
        "timeout_seconds": 3600,
        "colour": "red",
    }
    answer = post(api, bad)
    assert answer.status_code == 400
    text = answer.content.decode()
    for field in (
        "protocol",
        "base_url",
        "results_per_call",
        "calls_at_once",
        "temperature",
        "timeout_seconds",
        "colour",
    ):
        assert field in text, field
    assert API_KEY not in text
    assert not Judge.objects.exists()


def test_a_model_server_on_this_machine_needs_the_deployments_permission(api, settings):
    local = {**JUDGE, "base_url": "http://127.0.0.1:11434/v1", "name": "Ollama"}
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = False
    refused = post(api, local)
    assert refused.status_code == 400
    assert "AI_JUDGES_ALLOW_PRIVATE_ADDRESSES" in refused.content.decode()
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    assert post(api, local).status_code == 201


def test_a_name_is_used_once_per_team(api):
    assert post(api, JUDGE).status_code == 201
    again = post(api, JUDGE)
    assert again.status_code == 400 and "name" in again.content.decode()


def test_a_change_keeps_the_key_unless_it_is_replaced_or_removed(api):
    judge_id = post(api, JUDGE).json()["id"]
    url = f"/api/v1/judges/{judge_id}/"
    changed = api.patch(url, json.dumps({"calls_at_once": 2}), content_type="application/json")
    assert changed.json()["calls_at_once"] == 2 and changed.json()["api_key_hint"] == "…QRST"
    new_key = "not-a-real-key-new-ABCD"
    replaced = api.patch(url, json.dumps({"api_key": new_key}), content_type="application/json")
    assert replaced.json()["api_key_hint"] == "…ABCD" and new_key not in replaced.content.decode()
    removed = api.patch(url, json.dumps({"api_key": ""}), content_type="application/json")
    assert removed.json()["has_api_key"] is False


def test_another_teams_judge_is_not_found(api, team_b):
    from apps.judges.services import judge_create

    theirs = judge_create(team=team_b, **JUDGE)
    for answer in (
        api.get(f"/api/v1/judges/{theirs.id}/"),
        api.patch(f"/api/v1/judges/{theirs.id}/", "{}", content_type="application/json"),
        api.delete(f"/api/v1/judges/{theirs.id}/"),
    ):
        assert answer.status_code == 404
    assert Judge.objects.filter(id=theirs.id).exists()
    assert api.get("/api/v1/judges/").json() == []


def test_a_judge_is_removed(api):
    judge_id = post(api, JUDGE).json()["id"]
    assert api.delete(f"/api/v1/judges/{judge_id}/").status_code == 204
    assert api.get(f"/api/v1/judges/{judge_id}/").status_code == 404
