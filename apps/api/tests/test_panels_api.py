"""/api/v1/panels: a team makes a panel of its judges, reads it (also as a judge, with
its rule and members), changes its members and rule; every bad input is a 400 naming
its field, and another team's panel is 404. Judges answer how many samples they take."""

import json

import pytest

from apps.judges import controls, runs
from apps.judges.models import Judge
from apps.judges.panels import panel_create
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider
from apps.judges.tests.test_panel_runs import grades_by_model
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db


def a_judge(team, name, model, base_url="https://api.openai.com/v1", **extra):
    return judge_create(
        team=team,
        name=name,
        protocol="openai",
        base_url=base_url,
        model_name=model,
        **extra,
    )


def send(api, method, path, body):
    return getattr(api, method)(path, json.dumps(body), content_type="application/json")


def fields_named(answer) -> set[str]:
    return {error["field"] for error in answer.json()["errors"]}


@pytest.fixture
def judges(team_a):
    return [a_judge(team_a, name, f"{name.lower()}-test") for name in ("GPT", "Claude", "Gemini")]


def test_a_panel_is_added_read_and_changed(api, judges):
    gpt, claude, gemini = judges
    added = send(
        api,
        "post",
        "/api/v1/panels/",
        {"name": "Pair", "members": [gpt.id, claude.id], "rule": "majority", "budget_calls": 60},
    )
    assert added.status_code == 201, added.content
    body = added.json()
    assert body["panel"] == {
        "rule": "majority",
        "members": [{"id": gpt.id, "name": "GPT"}, {"id": claude.id, "name": "Claude"}],
        "fitted_weights": None,
    }
    assert (body["protocol"], body["base_url"], body["budget_calls"]) == ("", "", 60)
    assert body["model_name"] == "panel (majority): gpt-test, claude-test"
    panel_id = body["id"]

    as_judge = api.get(f"/api/v1/judges/{panel_id}/").json()
    assert as_judge["panel"]["rule"] == "majority"
    listed = {judge["name"]: judge["panel"] for judge in api.get("/api/v1/judges/").json()}
    assert listed["GPT"] is None and listed["Pair"]["members"][1]["name"] == "Claude"
    assert [panel["name"] for panel in api.get("/api/v1/panels/").json()] == ["Pair"]

    changed = send(
        api,
        "patch",
        f"/api/v1/panels/{panel_id}/",
        {"members": [gemini.id, gpt.id, claude.id], "rule": "fitted"},
    )
    assert changed.status_code == 200, changed.content
    panel = changed.json()["panel"]
    assert [member["name"] for member in panel["members"]] == ["Gemini", "GPT", "Claude"]
    assert (panel["rule"], panel["fitted_weights"]) == ("fitted", None)
    assert changed.json()["name"] == "Pair"  # what is not given stays

    stored = Judge.objects.get(id=panel_id)
    stored.panel_fit = {"weights": {str(gemini.id): 0.5, str(gpt.id): 0.3, str(claude.id): 0.2}}
    stored.save()
    weights = api.get(f"/api/v1/panels/{panel_id}/").json()["panel"]["fitted_weights"]
    assert weights == [
        {"id": gemini.id, "name": "Gemini", "weight": 0.5},
        {"id": gpt.id, "name": "GPT", "weight": 0.3},
        {"id": claude.id, "name": "Claude", "weight": 0.2},
    ]


def test_every_bad_input_names_its_field_and_nothing_is_written(api, judges, team_a):
    gpt, claude, _gemini = judges
    pair = panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")

    one = send(
        api, "post", "/api/v1/panels/", {"name": "Alone", "members": [gpt.id], "rule": "median"}
    )
    assert one.status_code == 400 and fields_named(one) == {"members"}
    assert "from 2 to 5 judges, got 1" in one.content.decode()

    nested = send(
        api,
        "post",
        "/api/v1/panels/",
        {"name": "Nested", "members": [gpt.id, pair.id], "rule": "vote", "colour": "red"},
    )
    assert nested.status_code == 400
    assert fields_named(nested) == {"members", "rule", "colour"}
    assert "Pair is a panel" in nested.content.decode()

    for body in (
        {"name": "X", "members": "gpt", "rule": "median"},
        {"name": "X", "members": [{"id": gpt.id}, claude.id], "rule": "median"},
        {"name": "X", "members": list(range(1, 1000)), "rule": "median"},
        {"members": [gpt.id, claude.id], "rule": "median"},
        {"name": "X", "members": [gpt.id, claude.id]},
        {"name": "X", "members": [gpt.id, claude.id], "rule": "median", "api_key": "k"},
        {"name": "X", "members": [gpt.id, claude.id], "rule": "median", "team": 1},
        {"name": "X", "members": [gpt.id, claude.id], "rule": "median", "calls_at_once": 99},
    ):
        answer = send(api, "post", "/api/v1/panels/", body)
        assert answer.status_code == 400, (body, answer.content)
        assert fields_named(answer) and None not in fields_named(answer)
    assert send(api, "post", "/api/v1/panels/", ["not", "an", "object"]).status_code == 400

    wrong = send(api, "patch", f"/api/v1/panels/{pair.id}/", {"members": [claude.id]})
    assert wrong.status_code == 400 and fields_named(wrong) == {"members"}
    assert Judge.objects.filter(team=team_a).exclude(panel_rule="").count() == 1
    assert [m.id for m in Judge.objects.get(id=pair.id).members()] == [gpt.id, claude.id]

    # A panel is changed as a panel: the judges' endpoint refuses it, naming the judge.
    refused = send(api, "patch", f"/api/v1/judges/{pair.id}/", {"model_name": "x"})
    assert refused.status_code == 409 and fields_named(refused) == {"judge"}


def test_another_teams_panel_or_a_judge_that_is_not_a_panel_is_not_found(api, judges, team_b):
    a, b = a_judge(team_b, "A", "a"), a_judge(team_b, "B", "b")
    theirs = panel_create(team=team_b, name="Theirs", members=[a.id, b.id], rule="median")
    assert api.get(f"/api/v1/panels/{theirs.id}/").status_code == 404
    assert send(api, "patch", f"/api/v1/panels/{theirs.id}/", {"name": "Mine"}).status_code == 404
    assert api.get(f"/api/v1/judges/{theirs.id}/").status_code == 404
    assert api.get(f"/api/v1/panels/{judges[0].id}/").status_code == 404
    assert api.get("/api/v1/panels/").json() == []
    # Their judges are no members of ours.
    borrowed = send(
        api, "post", "/api/v1/panels/", {"name": "Mine", "members": [a.id, b.id], "rule": "median"}
    )
    assert (
        borrowed.status_code == 400
        and f"the team has no judge '{a.id}'" in borrowed.content.decode()
    )
    assert Judge.objects.get(id=theirs.id).name == "Theirs"


def test_a_judge_answers_its_samples_and_they_are_checked(api):
    judge = {
        "name": "Thrice",
        "protocol": "openai",
        "base_url": "https://api.openai.com/v1",
        "model_name": "gpt-test",
        "temperature": 0.8,
        "samples": 3,
    }
    added = send(api, "post", "/api/v1/judges/", judge)
    assert added.status_code == 201, added.content
    assert (added.json()["samples"], added.json()["panel"]) == (3, None)
    for bad in (
        {**judge, "name": "Cold", "temperature": 0},
        {**judge, "name": "Many", "samples": 11},
    ):
        answer = send(api, "post", "/api/v1/judges/", bad)
        assert answer.status_code == 400 and fields_named(answer) == {"samples"}
    cooled = send(api, "patch", f"/api/v1/judges/{added.json()['id']}/", {"temperature": 0})
    assert cooled.status_code == 400 and fields_named(cooled) == {"samples"}
    once = send(api, "patch", f"/api/v1/judges/{added.json()['id']}/", {"samples": 1})
    assert once.status_code == 200 and once.json()["samples"] == 1


def test_a_judge_given_what_is_not_its_field_is_refused_naming_it(api, team_a):
    judge = {
        "name": "GPT",
        "protocol": "openai",
        "base_url": "https://api.openai.com/v1",
        "model_name": "gpt-test",
    }
    for extra in ({"created_by": 5}, {"team": 3}, {"keep_key_when_blank": True}):
        answer = send(api, "post", "/api/v1/judges/", {**judge, **extra})
        assert answer.status_code == 400 and fields_named(answer) == set(extra)
    mine = a_judge(team_a, "Mine", "m")
    answer = send(api, "patch", f"/api/v1/judges/{mine.id}/", {"judge": 2})
    assert answer.status_code == 400 and fields_named(answer) == {"judge"}


def test_a_panels_grade_comes_with_its_agreement_and_votes(api, team_a, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"red shoes": 2})
    with FakeProvider() as server:
        gpt = a_judge(team_a, "GPT", "gpt-test", base_url=server.openai_url)
        claude = a_judge(team_a, "Claude", "claude-test", base_url=server.openai_url)
        panel = panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")
        server.respond_with(grades_by_model({"gpt-test": [3, 1], "claude-test": [2, 1]}))
        run = controls.run_start(judge=panel, evaluation=evaluation)
        runs.run_step(run_id=run.id)
    answer = api.get(f"/api/v1/evaluations/{evaluation.id}/judgements/?graded=true")
    assert answer.status_code == 200
    made = [row["ai_judge"] for row in answer.json()["results"]]
    assert [(row["name"], row["agreement"]) for row in made] == [("Pair", 0.5), ("Pair", 1.0)]
    assert made[0]["votes"] == [
        {"by": "GPT", "grade": 3, "judge": gpt.id},
        {"by": "Claude", "grade": 2, "judge": claude.id},
    ]
