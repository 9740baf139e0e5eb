"""/api/v1/judge-prompts: a team keeps its own prompts for AI judges; a change of the
instructions is a new version and the old ones stay; a judge takes one by id; problems
name their field; another team's prompt is 404."""

import json

import pytest

from apps.judges import prompts
from tests.factories import make_team

pytestmark = pytest.mark.django_db

STRICT = "Be strict.\n{scale}\nAnswer with JSON only."


def problems(answer) -> list[str]:
    return [f"{error['field']}: {error['message']}" for error in answer.json()["errors"]]


def send(api, method, path, body):
    return getattr(api, method)(path, json.dumps(body), content_type="application/json")


def test_a_prompt_is_added_from_the_default_edited_into_versions_and_given_to_a_judge(api):
    added = send(api, "post", "/api/v1/judge-prompts/", {"name": "Shop"})
    assert added.status_code == 201, added.content
    prompt = added.json()
    assert [v["number"] for v in prompt["versions"]] == [1]
    assert "RESULTS BEGIN" in prompt["versions"][0]["instructions"]

    url = f"/api/v1/judge-prompts/{prompt['id']}/"
    edited = send(api, "patch", url, {"instructions": STRICT})
    assert edited.status_code == 200
    assert [v["version"] for v in edited.json()["versions"]] == [
        f"prompt-{prompt['id']}-v2",
        f"prompt-{prompt['id']}-v1",
    ]

    judge = {
        "name": "GPT",
        "protocol": "openai",
        "base_url": "https://api.openai.com/v1",
        "model_name": "gpt-4o-mini",
        "prompt": prompt["id"],
    }
    created = send(api, "post", "/api/v1/judges/", judge)
    assert created.status_code == 201 and created.json()["prompt"] == prompt["id"]
    back_to_default = send(
        api, "patch", f"/api/v1/judges/{created.json()['id']}/", {"prompt": None}
    )
    assert back_to_default.json()["prompt"] is None


def test_problems_name_their_fields(api):
    refused = send(
        api, "post", "/api/v1/judge-prompts/", {"name": "", "instructions": "x", "tone": 1}
    )
    assert refused.status_code == 400
    assert problems(refused) == ["tone: not a field of a prompt"]
    refused = send(api, "post", "/api/v1/judge-prompts/", {"name": "", "instructions": "x"})
    assert problems(refused)[0] == "name: required"
    assert problems(refused)[1].startswith("instructions: keep the {scale} placeholder")
    too_long = send(
        api, "post", "/api/v1/judge-prompts/", {"name": "Big", "instructions": "{scale}" * 5_000}
    )
    assert too_long.status_code == 400
    assert problems(too_long) == ["instructions: at most 20,000 characters (got 35,000)"]


def test_another_teams_prompt_is_404_and_a_judge_cannot_take_it(api):
    theirs = prompts.prompt_create(team=make_team("Other"), name="Theirs")
    assert api.get(f"/api/v1/judge-prompts/{theirs.id}/").status_code == 404
    assert api.delete(f"/api/v1/judge-prompts/{theirs.id}/").status_code == 404
    judge = {
        "name": "GPT",
        "protocol": "openai",
        "base_url": "https://api.openai.com/v1",
        "model_name": "gpt-4o-mini",
        "prompt": theirs.id,
    }
    refused = send(api, "post", "/api/v1/judges/", judge)
    assert refused.status_code == 400
    assert problems(refused) == [f"prompt: the team has no prompt {str(theirs.id)!r}"]
