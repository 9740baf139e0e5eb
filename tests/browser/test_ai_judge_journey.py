"""A lead adds an AI judge in Chromium, sees a problem beside its field, calibrates it on a
gold set drawn from what people graded, assigns it to an open evaluation from the
evaluation's page and watches it grade every result: the app's own word-overlap
stand-in answers in the OpenAI protocol, as in `make run`."""

import pytest

from apps.accounts.services import team_create
from apps.evaluations.models import Evaluation, FeedbackSlot
from apps.judges.models import CalibrationRun, CalibrationStatus, Judge, JudgeRun, RunStatus
from apps.judging.judgements import Giver, slot_judge
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


def people_graded(team):
    """An evaluation two people graded: a result is relevant (2) when its title says
    what the keyword asks, else not (0); they differ on one result."""
    graded = make_evaluation(
        team=team, scale="graded", strategy=3, keywords={"shoes": 3, "hat": 3, "coat": 3}
    )
    for slot in slots_of(graded):
        grade = 2 if slot.snapshot.position == 1 else 0
        if slot.index == 2 and slot.snapshot.position == 2:
            grade = 1
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, f"person {slot.index}"), grade=grade)
    return graded


def test_a_lead_adds_a_judge_calibrates_it_assigns_it_and_watches_it_grade_everything(
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
    assert page.get_by_text("Must be from 1 to 20, got 50.").is_visible()
    assert not Judge.objects.exists()
    screenshot("judge-problem")

    page.get_by_label("API key").fill("not-a-real-key-browser-abcd")
    page.get_by_label("Results per call").fill("4")
    page.get_by_role("button", name="Add judge").click()
    assert page.get_by_text("Added the judge Overlap.").is_visible()
    assert page.get_by_text("…abcd").is_visible()
    assert "not-a-real-key-browser" not in page.content()

    # Calibrate it on a gold set drawn from what people graded.
    graded = people_graded(team)
    page.get_by_role("link", name="Calibration").click()
    page.get_by_label("Name").fill("Shop gold")
    page.get_by_label("Baseline").select_option(label=graded.name)
    page.locator("#id_keywords").fill("3")
    page.get_by_role("button", name="Draw the gold set").click()
    assert page.get_by_text("Drew the gold set Shop gold.").is_visible()
    page.get_by_label("Calibrate").select_option(label="Overlap (word-overlap)")
    page.get_by_role("button", name="Start").click()
    assert page.get_by_text("Calibrating Overlap on Shop gold.").is_visible()
    status = page.get_by_test_id("calibration-status")
    status.get_by_text("Finished: 9 of 9 graded").wait_for()
    assert page.get_by_test_id("ceiling").is_visible()
    alpha = page.get_by_test_id("calibration-alpha").inner_text()
    assert alpha[0].isdigit() or alpha.startswith("-") or "undefined" in alpha
    screenshot("judge-calibrated")
    calibration = CalibrationRun.objects.get()
    assert calibration.status == CalibrationStatus.FINISHED and calibration.graded == 9
    assert not FeedbackSlot.objects.filter(
        evaluation=graded, grader=calibration.judge.user
    ).exists()

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
