"""The lead's pages for panels and sampled judges: a lead adds two judges, one asking its
model three times, makes a panel of them, sees it listed with its rule and members,
edits it on its own form, tests each member's connection, and reads a run's calls with
the factor that made them. Every bad input is named beside its field."""

import pytest

from apps.judges import controls, runs
from apps.judges.models import Judge
from apps.judges.panels import panel_create
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation

from .fake_provider import FakeProvider, Reply
from .test_panel_runs import grades_by_model

pytestmark = pytest.mark.django_db

JUDGE_FORM = {
    "protocol": "openai",
    "base_url": "https://api.openai.com/v1",
    "api_key": "not-a-real-key-panel-page",
    "temperature": "",
    "timeout_seconds": "60",
    "results_per_call": "10",
    "calls_at_once": "4",
    "max_output_tokens": "2000",
    "price_input_per_million": "0",
    "price_output_per_million": "0",
}
PANEL_FORM = {
    "name": "Pair",
    "rule": "majority",
    "prompt": "",
    "results_per_call": "10",
    "calls_at_once": "4",
    "budget_calls": "",
    "budget_tokens": "",
    "budget_cost": "",
}


@pytest.fixture
def server(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as fake:
        yield fake


def listed_row(listing: str, name: str) -> str:
    """The judges' list's row of the judge named `name`, as HTML."""
    rows = [part.split("</tr>")[0] for part in listing.split('data-testid="judge-row"')[1:]]
    return next(row for row in rows if f">{name}</a>" in row)


def a_judge(team, name, model, base_url="https://api.openai.com/v1", **extra):
    return judge_create(
        team=team,
        name=name,
        protocol="openai",
        base_url=base_url,
        model_name=model,
        api_key="not-a-real-key",
        **extra,
    )


def test_a_lead_adds_two_judges_and_a_panel_of_them_and_sees_it_listed(owner, team_a):
    lead = client_for(owner)
    gpt = lead.post(
        "/judges/new/",
        {
            **JUDGE_FORM,
            "name": "GPT",
            "model_name": "gpt-test",
            "temperature": "0.7",
            "samples": "3",
        },
    )
    claude = lead.post(
        "/judges/new/", {**JUDGE_FORM, "name": "Claude", "model_name": "claude-test"}
    )
    assert gpt.status_code == claude.status_code == 302
    gpt_judge, claude_judge = Judge.objects.get(name="GPT"), Judge.objects.get(name="Claude")
    assert (gpt_judge.samples, claude_judge.samples) == (3, 1)

    form = lead.get("/judges/panels/new/").content.decode()
    assert "GPT (gpt-test)" in form and "Claude (claude-test)" in form
    added = lead.post(
        "/judges/panels/new/", {**PANEL_FORM, "members": [str(claude_judge.id), str(gpt_judge.id)]}
    )
    assert added.status_code == 302 and added.url == "/judges/"
    panel = Judge.objects.get(name="Pair")
    assert [member.name for member in panel.members()] == ["Claude", "GPT"]
    assert panel.panel_rule == "majority" and panel.model_name == (
        "panel (majority): claude-test, gpt-test"
    )

    listing = lead.get("/judges/").content.decode()
    assert "New panel" in listing
    row = listed_row(listing, "Pair")
    assert "Panel · Majority, a tie left for people" in row
    assert "Claude (<code>claude-test</code>), GPT (<code>gpt-test</code>)" in row
    assert "api.openai.com" not in row  # a panel has no address of its own
    assert f"/judges/panels/{panel.id}/edit/" in row
    assert "× 3 samples" in listed_row(listing, "GPT")
    assert "samples" not in listed_row(listing, "Claude")


def test_a_bad_panel_is_refused_with_each_problem_beside_its_field(owner, team_a):
    gpt = a_judge(team_a, "GPT", "gpt-test")
    claude = a_judge(team_a, "Claude", "claude-test")
    pair = panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")
    lead = client_for(owner)

    one = lead.post("/judges/panels/new/", {**PANEL_FORM, "name": "Alone", "members": [gpt.id]})
    assert one.status_code == 200
    members = one.content.decode().split('data-testid="panel-members"')[1].split("</fieldset>")[0]
    assert "From 2 to 5 judges, got 1." in members

    nested = lead.post(
        "/judges/panels/new/",
        {**PANEL_FORM, "name": "Nested", "members": [gpt.id, pair.id], "rule": "vote"},
    )
    text = nested.content.decode()
    assert "Pair is a panel; a member is a judge of one model" in text
    assert "One of median, majority, fitted." in text
    # The lists offer no panel: a member is a judge of one model.
    assert "Pair (panel" not in text

    unnamed = lead.post("/judges/panels/new/", {**PANEL_FORM, "name": "", "members": [gpt.id]})
    assert "Required." in unnamed.content.decode()
    assert Judge.objects.filter(team=team_a).exclude(panel_rule="").count() == 1


def test_a_panel_is_edited_on_its_own_form_never_the_single_judges(owner, team_a):
    gpt = a_judge(team_a, "GPT", "gpt-test")
    claude = a_judge(team_a, "Claude", "claude-test")
    gemini = a_judge(team_a, "Gemini", "gemini-test")
    pair = panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")
    lead = client_for(owner)

    edit = lead.get(f"/judges/{pair.id}/edit/")
    assert edit.status_code == 302 and edit.url == f"/judges/panels/{pair.id}/edit/"
    single = lead.post(
        f"/judges/{pair.id}/edit/", {**JUDGE_FORM, "name": "Pair", "model_name": "x"}
    )
    assert single.status_code == 302
    pair.refresh_from_db()
    assert pair.protocol == "" and pair.model_name == "panel (median): gpt-test, claude-test"

    form = lead.get(f"/judges/panels/{pair.id}/edit/").content.decode()
    assert 'value="Pair"' in form and "Test connection" in form
    assert f'<option value="{gpt.id}" selected>' in form
    assert f'<option value="{pair.id}"' not in form  # not a member of itself

    saved = lead.post(
        f"/judges/panels/{pair.id}/edit/",
        {**PANEL_FORM, "rule": "fitted", "members": [gemini.id, "", gpt.id], "budget_calls": "30"},
    )
    assert saved.status_code == 302
    pair.refresh_from_db()
    pair.forget_members()
    assert [m.name for m in pair.members()] == ["Gemini", "GPT"]
    assert (pair.panel_rule, pair.budget_calls) == ("fitted", 30)
    page = lead.get(f"/judges/panels/{pair.id}/edit/").content.decode()
    assert "not fitted yet: calibrate it on a gold set and fit the weights there" in page
    listing = lead.get("/judges/").content.decode()
    assert "not fitted yet" in listing

    pair.panel_fit = {"weights": {str(gemini.id): 0.75, str(gpt.id): 0.25}}
    pair.save()
    page = lead.get(f"/judges/panels/{pair.id}/edit/").content.decode()
    assert "Gemini 0.75, GPT 0.25" in page and "not fitted yet" not in page
    assert "weights: Gemini 0.75, GPT 0.25" in lead.get("/judges/").content.decode()


def test_a_member_on_a_panel_cannot_be_removed(owner, team_a):
    gpt = a_judge(team_a, "GPT", "gpt-test")
    claude = a_judge(team_a, "Claude", "claude-test")
    panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")
    lead = client_for(owner)
    refused = lead.post(f"/judges/{gpt.id}/delete/", follow=True)
    assert "GPT sits on the panel Pair; take it off first." in refused.content.decode()
    assert Judge.objects.filter(id=gpt.id).exists()


def test_test_connection_of_a_panel_asks_each_member(owner, team_a, server):
    server.respond_with(
        lambda seen: (
            Reply.openai("OK") if seen.body["model"] == "gpt-test" else Reply.error(401, "bad key")
        )
    )
    gpt = a_judge(team_a, "GPT", "gpt-test", base_url=server.openai_url)
    claude = a_judge(team_a, "Claude", "claude-test", base_url=server.openai_url)
    pair = panel_create(team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median")
    tested = client_for(owner).post(f"/judges/{pair.id}/test-connection/", follow=True)
    text = tested.content.decode()
    assert tested.redirect_chain[-1][0] == f"/judges/panels/{pair.id}/edit/"
    assert "Test connection of GPT: gpt-test at" in text and "answered &#x27;OK&#x27;" in text
    assert "Test connection of Claude: claude-test at" in text and "could not be reached" in text
    assert sorted(seen.body["model"] for seen in server.requests[-2:]) == [
        "claude-test",
        "gpt-test",
    ]


def test_samples_are_checked_beside_their_field(owner, team_a):
    lead = client_for(owner)
    cold = lead.post(
        "/judges/new/", {**JUDGE_FORM, "name": "Cold", "model_name": "m", "samples": "3"}
    )
    assert "Asking more than once needs a temperature above 0" in cold.content.decode()
    many = lead.post(
        "/judges/new/",
        {**JUDGE_FORM, "name": "Many", "model_name": "m", "temperature": "1", "samples": "11"},
    )
    assert "Must be from 1 to 10, got 11." in many.content.decode()
    assert not Judge.objects.exists()
    shown = lead.get("/judges/new/").content.decode()
    assert "Samples per call" in shown and "keeps the grade given most often" in shown


def test_another_teams_panel_is_not_found(owner, team_b):
    theirs_a = a_judge(team_b, "A", "a")
    theirs_b = a_judge(team_b, "B", "b")
    theirs = panel_create(
        team=team_b, name="Theirs", members=[theirs_a.id, theirs_b.id], rule="median"
    )
    lead = client_for(owner)
    assert lead.get(f"/judges/panels/{theirs.id}/edit/").status_code == 404
    assert lead.post(f"/judges/panels/{theirs.id}/edit/", PANEL_FORM).status_code == 404
    assert lead.post(f"/judges/{theirs.id}/test-connection/").status_code == 404
    # Nor is one of their judges offered as a member of ours.
    assert "Theirs" not in lead.get("/judges/panels/new/").content.decode()
    assert lead.get(f"/judges/panels/{theirs_a.id}/edit/").status_code == 404


def all_steps(run):
    for _ in range(20):
        if runs.run_step(run_id=run.id) != runs.GO:
            return


def test_a_runs_calls_say_how_many_asks_and_members_or_samples_made_them(owner, team_a, server):
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"red shoes": 3})
    gpt = a_judge(team_a, "GPT", "gpt-test", base_url=server.openai_url, results_per_call=1)
    claude = a_judge(team_a, "Claude", "claude-test", base_url=server.openai_url)
    pair = panel_create(
        team=team_a, name="Pair", members=[gpt.id, claude.id], rule="median", results_per_call=1
    )
    sampled = a_judge(
        team_a, "Thrice", "thrice-test", base_url=server.openai_url, temperature=0.8, samples=3
    )
    server.respond_with(
        grades_by_model({"gpt-test": [2], "claude-test": [1], "thrice-test": [3, 3, 3]})
    )
    pair_run = controls.run_start(judge=pair, evaluation=evaluation)
    all_steps(pair_run)
    lead = client_for(owner)
    detail = lead.get(f"/judges/runs/{pair_run.id}/").content.decode()
    assert "6 calls (3 asks × 2 members)" in detail

    other = make_evaluation(team=team_a, scale="graded", keywords={"blue hat": 3})
    sampled_run = controls.run_start(judge=sampled, evaluation=other)
    all_steps(sampled_run)
    detail = lead.get(f"/judges/runs/{sampled_run.id}/").content.decode()
    assert "3 calls (1 ask × 3 samples)" in detail
    panel = lead.get(f"/evaluations/{other.id}/judges/panel/", HTTP_HX_REQUEST="true")
    assert "3 calls (1 ask × 3 samples)" in panel.content.decode()
