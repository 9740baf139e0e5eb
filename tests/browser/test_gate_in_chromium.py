"""A lead asks the regression gate in Chromium: chooses a baseline and a candidate, reads
FAIL with the rule and the numbers, copies the CI command with its button and the command
exits as the page said; then runs a search model now against the baseline and watches the
page decide by itself once the new results are graded."""

import io
import shlex
import time

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.evaluations.models import Evaluation
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from apps.schedules.models import ScheduledRun
from apps.schedules.runner import scheduled_runs_advance
from apps.tries.models import Try, TryState
from tests.browser.conftest import SCREENSHOTS
from tests.browser.people import PASSWORD, log_in
from tests.comparison_data import shop_pair
from tests.factories import make_grader, make_search_model, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clipboard_page(browser, live_server):
    """A page allowed to write and read the clipboard, as a person's browser is."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def exit_code_of(command):
    words = shlex.split(command)
    assert words[:3] == ["python", "manage.py", "relevance_gate"]
    try:
        call_command(*words[2:], stdout=io.StringIO())
    except SystemExit as exit:
        return exit.code
    return 0


def grade_all(evaluation, grader):
    for slot in slots_of(Evaluation.objects.get(id=evaluation.id)):
        if slot.grade is None:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)


def test_a_lead_asks_the_gate_copies_the_ci_command_and_it_exits_as_the_page_says(
    live_server, clipboard_page
):
    page = clipboard_page
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    shop_pair(team)
    log_in(page, live_server.url, "lead@shop.test")

    page.get_by_text("Team", exact=True).click()
    page.get_by_role("link", name="Regression gate").click()
    form = page.get_by_test_id("gate-form")
    form.get_by_label("Baseline").select_option(label="Ranking B")
    form.get_by_label("Candidate").select_option(label="Ranking A")
    form.get_by_label("Smallest change that matters").fill("0.05")
    form.get_by_role("button", name="Check").click()

    expect(page.get_by_test_id("gate-outcome")).to_have_text("FAIL")
    expect(page.get_by_test_id("gate-reason")).to_contain_text(
        "Worse on nDCG@10, P@5, significantly and by at least 0.05"
    )
    expect(page.get_by_test_id("gate-rule")).to_contain_text(
        "It fails when the candidate is worse than the baseline on a metric"
    )
    expect(page.get_by_test_id("gate-metrics").locator("tr.regression")).to_have_count(2)

    page.get_by_role("button", name="Copy").first.click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.get_by_test_id("gate-call-1").inner_text()
    assert copied.startswith("python manage.py relevance_gate --team Shop --baseline ")
    assert exit_code_of(copied) == 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "gate-fail.png"), full_page=True)

    # The same pair the other way round passes; the form keeps what was chosen.
    form = page.get_by_test_id("gate-form")
    form.get_by_label("Baseline").select_option(label="Ranking A")
    form.get_by_label("Candidate").select_option(label="Ranking B")
    form.get_by_role("button", name="Check").click()
    expect(page.get_by_test_id("gate-outcome")).to_have_text("PASS")
    assert exit_code_of(page.get_by_test_id("gate-call-1").inner_text()) == 0


def test_a_lead_runs_a_model_now_and_the_page_decides_once_it_is_graded(
    live_server, page, screenshot, search_server
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    today = make_search_model(team, search_server.base_url, name="Today")
    baseline = evaluation_create_with_keywords(
        team=team,
        name="Today's ranking",
        metrics=[("precision", 5)],
        scale="binary",
        keywords=["red shoes", "blue shirt"],
        search_model=today,
    )
    evaluation_start(evaluation=baseline)
    grader = make_grader(team)
    grade_all(baseline, grader)
    staging = make_search_model(team, search_server.base_url, name="Staging")
    staging.params = [["q", "#query# v2"]]  # other documents: new results to grade
    staging.save(update_fields=["params"])
    log_in(page, live_server.url, "lead@shop.test")

    page.goto(f"{live_server.url}/gate/")
    run_form = page.get_by_test_id("gate-run-form")
    run_form.get_by_label("Baseline").select_option(label="Today's ranking")
    run_form.get_by_label("Search model").select_option(label="Staging")
    run_form.get_by_role("button", name="Run the model now").click()

    expect(page.get_by_text("the baseline's keywords run on Staging, try 1 now")).to_be_visible()
    progress = page.get_by_test_id("gate-run-progress")
    expect(progress).to_contain_text("is running on the baseline's keywords")
    candidate_made_as_beat_would()
    # No reload: the page follows the run until its results are the candidate.
    expect(page.get_by_test_id("gate-outcome")).to_have_text("UNDECIDED", timeout=15_000)
    expect(progress).to_contain_text("0 of ")
    run_command = page.get_by_test_id("run-call-1").inner_text()
    assert "--model Staging --wait 900" in run_command
    screenshot("undecided")

    grade_all(ScheduledRun.objects.get().evaluation, grader)
    # No reload: the page asks again every few seconds while undecided.
    expect(page.get_by_test_id("gate-outcome")).to_have_text("PASS", timeout=15_000)
    expect(page.get_by_test_id("gate-run-progress")).to_have_text("graded")
    screenshot("decided")


def candidate_made_as_beat_would(timeout: float = 15.0) -> None:
    """Once the model's try is done, beat's tick makes its candidate; the test ticks."""
    give_up_at = time.monotonic() + timeout
    while not Try.objects.filter(state=TryState.DONE).exists():
        assert time.monotonic() < give_up_at, "the model's try did not finish"
        time.sleep(0.2)
    scheduled_runs_advance()
