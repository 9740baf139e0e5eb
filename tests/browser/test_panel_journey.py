"""A lead makes a panel in Chromium: adds two judges on a real local model server (the
second asking its model three times, refused first without a temperature), makes a panel
of them (refused first with one member), sees it listed with its rule and members, and
assigns it to an evaluation, whose page then counts the calls of each ask: one of the
first member and three samples of the second."""

import pytest

from apps.accounts.services import team_create
from apps.evaluations.models import FeedbackSlot
from apps.judges.models import Judge, JudgeRun, RunStatus
from apps.judges.tests.fake_provider import FakeProvider
from apps.judges.tests.test_panel_runs import grades_by_model
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def model_server(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as server:
        server.respond_with(grades_by_model({"gpt-test": [2, 1, 0], "claude-test": [2, 0, 0]}))
        yield server


def add_judge(page, name, model, base_url, **more):
    page.get_by_role("link", name="Add a judge").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Base URL").fill(base_url)
    page.get_by_label("Model", exact=True).fill(model)
    page.get_by_label("API key").fill("not-a-real-key-panel-journey")
    for label, value in more.items():
        page.get_by_label(label).fill(value)
    page.get_by_role("button", name="Add judge").click()


def test_a_lead_makes_a_panel_of_two_judges_and_lets_it_grade(
    live_server, page, screenshot, model_server
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    evaluation = make_evaluation(
        team=team, scale="graded", strategy=1, keywords={"red shoes": 3, "blue hat": 3}
    )
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_role("link", name="AI judges").click()

    add_judge(page, "GPT", "gpt-test", model_server.openai_url)
    assert page.get_by_text("Added the judge GPT.").is_visible()
    add_judge(page, "Claude", "claude-test", model_server.openai_url, **{"Samples per call": "3"})
    assert page.get_by_text("Asking more than once needs a temperature above 0").is_visible()
    page.get_by_label("API key").fill("not-a-real-key-panel-journey")
    page.get_by_label("Temperature").fill("0.7")
    page.get_by_role("button", name="Add judge").click()
    assert page.get_by_text("Added the judge Claude.").is_visible()
    assert page.get_by_test_id("judge-samples").inner_text() == "× 3 samples"

    page.get_by_role("link", name="New panel").click()
    page.get_by_label("Name", exact=True).fill("Pair")
    page.get_by_label("Member 1").select_option(label="GPT (gpt-test)")
    page.get_by_role("button", name="Add panel").click()
    members = page.get_by_test_id("panel-members")
    assert members.get_by_text("From 2 to 5 judges, got 1.").is_visible()
    screenshot("panel-problem")
    page.get_by_label("Member 2").select_option(label="Claude (claude-test)")
    page.get_by_label("Median").check()
    page.get_by_role("button", name="Add panel").click()
    assert page.get_by_text("Added the panel Pair.").is_visible()
    row = page.get_by_test_id("judge-row").filter(has_text="Pair")
    assert row.get_by_test_id("panel-rule").inner_text() == "Panel · Median"
    assert (
        row.get_by_test_id("panel-members").inner_text() == "GPT (gpt-test), Claude (claude-test)"
    )
    screenshot("panel-listed")
    panel = Judge.objects.get(name="Pair")
    assert [member.name for member in panel.members()] == ["GPT", "Claude"]

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    judges = page.get_by_test_id("judge-panel")  # swapped in by htmx after the page
    judges.wait_for()
    judges.get_by_label("Let a judge grade").select_option(
        label="Pair (panel (median): gpt-test, claude-test)"
    )
    judges.get_by_role("button", name="Assign").click()
    assert page.get_by_text("Pair is grading this evaluation.").is_visible()
    run = page.get_by_test_id("judge-run")
    run.get_by_text("Finished").wait_for()
    # Two asks (a keyword each): GPT once and Claude's three samples each time.
    assert run.get_by_test_id("run-calls").inner_text() == (
        "8 calls (2 asks × 4 calls of its 2 members)"
    )
    screenshot("panel-graded")
    judge_run = JudgeRun.objects.get(judge=panel)
    assert (judge_run.status, judge_run.calls, judge_run.graded) == (RunStatus.FINISHED, 8, 6)
    grades = FeedbackSlot.objects.filter(evaluation=evaluation, grader=panel.user)
    assert sorted(grades.values_list("grade", flat=True)) == [0, 0, 0, 0, 2, 2]
