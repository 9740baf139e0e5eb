"""A team's own prompts: a lead copies the default, edits it (each edit a new version),
gives it to a judge; a run judges with the version it started with, every grade names
that version, and a changed prompt is a new cache key, never a reused judgement."""

import json

import pytest

from apps.core.errors import InvalidInput, InvalidState
from apps.judges import controls, prompts, runs
from apps.judges.models import JudgeGrade, JudgePromptVersion
from apps.judges.prompting import DEFAULT_INSTRUCTIONS
from apps.judges.services import judge_create, judge_update
from tests.factories import client_for, make_evaluation, make_team

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


EDITED = "Grade like a strict shop assistant.\n\nScale:\n{scale}\n\nAnswer with JSON only."


def judges_answer(*grades) -> Reply:
    judgements = [{"id": f"r{n}", "grade": g, "reason": "ok"} for n, g in enumerate(grades, 1)]
    return Reply.openai(json.dumps({"judgements": judgements}))


def judge_for(evaluation, server, **given):
    return judge_create(
        team=evaluation.team,
        name="GPT",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        api_key="not-a-real-key-prompts",
        **given,
    )


# --- The service ---------------------------------------------------------------------------


def test_a_new_prompt_is_a_copy_of_the_default_at_version_one():
    team = make_team("Shop")
    prompt = prompts.prompt_create(team=team, name="Shop prompt")
    version = prompts.newest_version(prompt)
    assert version.number == 1
    assert version.version == f"prompt-{prompt.id}-v1"
    assert version.instructions == DEFAULT_INSTRUCTIONS.strip()


def test_each_edit_is_a_new_version_and_the_old_ones_stay():
    team = make_team("Shop")
    prompt = prompts.prompt_create(team=team, name="Shop prompt")
    prompts.prompt_update(prompt=prompt, instructions=EDITED)
    prompts.prompt_update(prompt=prompt, instructions=EDITED)  # unchanged: no new version
    prompts.prompt_update(prompt=prompt, name="Strict")  # a rename: no new version
    numbers = list(prompt.versions.values_list("number", "instructions"))
    assert numbers == [(2, EDITED.strip()), (1, DEFAULT_INSTRUCTIONS.strip())]
    prompt.refresh_from_db()
    assert prompt.name == "Strict"


def test_a_prompt_without_the_scale_or_too_long_or_nameless_is_refused_naming_the_field():
    team = make_team("Shop")
    with pytest.raises(InvalidInput) as refused:
        prompts.prompt_create(team=team, name="", instructions="Grade it. No scale here.")
    assert refused.value.problems[0] == "name: required"
    assert refused.value.problems[1].startswith("instructions: keep the {scale} placeholder")
    with pytest.raises(InvalidInput) as too_long:
        prompts.prompt_create(team=team, name="Long", instructions="{scale}" + "x" * 20_000)
    assert too_long.value.problems == ["instructions: at most 20,000 characters (got 20,007)"]
    prompts.prompt_create(team=team, name="Taken")
    with pytest.raises(InvalidInput) as taken:
        prompts.prompt_create(team=team, name="Taken")
    assert taken.value.problems == ["name: the team already has a prompt named 'Taken'"]


def test_a_judge_takes_only_its_own_teams_prompt(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 1})
    theirs = prompts.prompt_create(team=make_team("Other"), name="Theirs")
    with pytest.raises(InvalidInput) as refused:
        judge_for(evaluation, server, prompt=theirs.id, results_per_call=99)
    assert refused.value.problems == [
        f"prompt: the team has no prompt {str(theirs.id)!r}",
        "results_per_call: must be from 1 to 20, got 99",
    ]


def test_a_prompt_in_use_cannot_be_removed(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 1})
    prompt = prompts.prompt_create(team=evaluation.team, name="Mine")
    judge = judge_for(evaluation, server, prompt=prompt.id)
    with pytest.raises(InvalidState, match="GPT judge with this prompt"):
        prompts.prompt_delete(prompt=prompt)
    controls.run_start(judge=judge, evaluation=evaluation)
    judge_update(judge=judge, prompt=None)
    with pytest.raises(InvalidState, match="their grades name its versions"):
        prompts.prompt_delete(prompt=prompt)


# --- Runs ----------------------------------------------------------------------------------


def test_a_run_judges_with_the_version_it_started_with_and_every_grade_names_it(server):
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={"red shoes": 2, "blue hat": 2}
    )
    prompt = prompts.prompt_create(team=evaluation.team, name="Strict", instructions=EDITED)
    judge = judge_for(evaluation, server, prompt=prompt.id, results_per_call=2)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    server.script(judges_answer(3, 0))
    assert runs.run_step(run_id=run.id) == runs.GO
    # Edited while the run goes on: the run keeps its version.
    prompts.prompt_update(prompt=prompt, instructions=EDITED + "\nBe lenient.")
    assert runs.run_step(run_id=run.id) == runs.GO

    systems = [seen.body["messages"][0]["content"] for seen in server.requests]
    assert all(system.startswith("Grade like a strict shop assistant.") for system in systems)
    assert all("3: Perfect: exactly what the searcher wants." in s for s in systems)
    assert not any("Be lenient" in system for system in systems)
    assert set(JudgeGrade.objects.values_list("prompt_version", flat=True)) == {
        f"prompt-{prompt.id}-v1"
    }
    run.refresh_from_db()
    assert run.prompt_version == f"prompt-{prompt.id}-v1"


def test_a_changed_prompt_is_a_new_cache_key_so_nothing_is_reused_from_the_old_one(server):
    first = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 2})
    prompt = prompts.prompt_create(team=first.team, name="Strict", instructions=EDITED)
    judge = judge_for(first, server, prompt=prompt.id)
    server.script(judges_answer(3, 0))
    runs.run_step(run_id=controls.run_start(judge=judge, evaluation=first).id)

    prompts.prompt_update(prompt=prompt, instructions=EDITED + "\nBe lenient.")
    second = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 2}, team=first.team)
    server.script(judges_answer(2, 1))
    runs.run_step(run_id=controls.run_start(judge=judge, evaluation=second).id)

    assert len(server.requests) == 1  # the second run paid for its call
    cached = JudgeGrade.objects.filter(slot__evaluation=second).values_list("cached", flat=True)
    assert list(cached) == [False, False]


# --- Pages ---------------------------------------------------------------------------------


def test_a_lead_copies_the_default_edits_it_and_reads_every_version(owner, team_a):
    lead = client_for(owner)
    new_page = lead.get("/judges/prompts/new/")
    assert "RESULTS BEGIN" in new_page.content.decode()  # the default, to edit

    added = lead.post("/judges/prompts/new/", {"name": "Shop", "instructions": EDITED})
    assert added.status_code == 302
    edit_url = added["Location"]
    saved = lead.post(edit_url, {"name": "Shop", "instructions": EDITED + "\nMore."}, follow=True)
    page = saved.content.decode()
    version = JudgePromptVersion.objects.get(prompt__team=team_a, number=2)
    assert f"Saved {version.version}." in page
    assert page.count('data-testid="prompt-version-row"') == 2

    refused = lead.post(edit_url, {"name": "Shop", "instructions": "No placeholder."})
    assert "Keep the {scale} placeholder" in refused.content.decode()
    assert JudgePromptVersion.objects.filter(prompt__team=team_a).count() == 2


def test_another_teams_prompt_answers_404(owner, team_a):
    theirs = prompts.prompt_create(team=make_team("Other"), name="Theirs")
    lead = client_for(owner)
    assert lead.get(f"/judges/prompts/{theirs.id}/").status_code == 404
    assert lead.post(f"/judges/prompts/{theirs.id}/delete/").status_code == 404
