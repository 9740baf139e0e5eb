"""A lead adds an AI judge in Chromium, sees a problem beside its field, assigns the judge
to an open evaluation from the evaluation's page and watches it grade every result: the
app's own word-overlap stand-in answers in the OpenAI protocol, as in `make run`."""

import pytest

from apps.accounts.services import team_create
from apps.evaluations.models import Evaluation, FeedbackSlot
from apps.judges.models import Judge, JudgeRun, RunStatus
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_adds_a_judge_assigns_it_and_watches_it_grade_everything(
    live_server, page, screenshot, settings
):
    settings.DEMO_SEARCH_API = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    evaluation = make_evaluation(
        team=team, scale="graded", strategy=1, keywords={"red shoes": 4, "blue hat": 3}
    )
    log_in(page, live_server.url, "lead@shop.test")

    page.get_by_role("link", name="AI judges").click()
    page.get_by_role("link", name="Add a judge").click()
    page.get_by_label("Name").fill("Overlap")
    page.get_by_label("Base URL").fill(f"{live_server.url}/demo/llm/v1")
    page.get_by_label("Model", exact=True).fill("word-overlap")
    page.get_by_label("API key").fill("not-a-real-key-browser-abcd")
    page.get_by_label("Results per call").fill("50")
    page.get_by_role("button", name="Add judge").click()
    assert page.get_by_text("must be from 1 to 20, got 50").is_visible()
    assert not Judge.objects.exists()
    screenshot("judge-problem")

    page.get_by_label("API key").fill("not-a-real-key-browser-abcd")
    page.get_by_label("Results per call").fill("4")
    page.get_by_role("button", name="Add judge").click()
    assert page.get_by_text("Added the judge Overlap.").is_visible()
    assert page.get_by_text("…abcd").is_visible()
    assert "not-a-real-key-browser" not in page.content()

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    panel = page.get_by_test_id("judge-panel")  # swapped in by htmx after the page
    panel.wait_for()
    panel.get_by_label("Let a judge grade").select_option(label="Overlap (word-overlap)")
    panel.get_by_role("button", name="Assign").click()
    assert page.get_by_text("Overlap is grading this evaluation.").is_visible()
    run = page.get_by_test_id("judge-run")
    run.wait_for()
    assert run.get_by_text("Finished").is_visible()
    screenshot("judge-finished")

    judge_run = JudgeRun.objects.get()
    assert judge_run.status == RunStatus.FINISHED and judge_run.graded == 7
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grade=None).exists()
    assert Evaluation.objects.get(id=evaluation.id).progress == pytest.approx(1.0)

    run.get_by_role("link", name="Overlap").click()
    assert page.get_by_test_id("run-facts").get_by_text("7", exact=True).first.is_visible()
