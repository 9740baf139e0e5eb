"""A grader's whole session by keyboard in Chromium (each grade on the key of its own
number), then the lead reads the metrics."""

import pytest

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import FeedbackSlot, SnapshotSkip
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def evaluation():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    evaluation = evaluation_create(
        team=team,
        name="Shoes 1",
        scale="graded",
        metrics=[("cg", 10), ("ndcg", 10)],
        scoring_guidelines="**Perfect** means exactly what was asked.",
    )
    [keyword] = keywords_add(evaluation=evaluation, texts=["red running shoes"])
    snapshots_add(
        keyword=keyword,
        documents=[
            Document(f"sku-{i}", f"Shoe number {i}", attributes={"colour": "red", "size": 42})
            for i in range(1, 7)
        ],
    )
    return evaluation_start(evaluation=evaluation)


def press_and_wait_for_next(page, key):
    """Press a key and wait until a different result (or the empty state) is shown."""
    page.wait_for_selector("#card[data-ready='1']")  # the page listens to keys again
    before = page.locator("#card").get_attribute("data-slot")
    page.keyboard.press(key)
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before", arg=before
    )


def test_a_grader_grades_by_keyboard_goes_back_skips_and_the_lead_sees_new_metrics(
    live_server, browser, evaluation, screenshot
):
    grader = browser.new_context(viewport={"width": 390, "height": 844})  # phone-sized
    page = grader.new_page()
    log_in(page, live_server.url, "grader@shop.test")
    page.get_by_role("link", name="Give feedback").first.click()
    assert page.get_by_text("“red running shoes”").is_visible()
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe number 1"
    assert page.get_by_text("exactly what was asked").is_visible()  # guidelines, rendered
    screenshot_of(page, screenshot, "first-result")

    for key in ["3", "2", "1", "0", "3"]:  # Perfect, Good, Fair, Poor, Perfect
        press_and_wait_for_next(page, key)
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe number 6"

    press_and_wait_for_next(page, "Backspace")  # Previous: the fifth result again
    assert page.get_by_text("changing an earlier grade").is_visible()
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe number 5"
    press_and_wait_for_next(page, "0")  # change Perfect to Poor
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe number 6"

    page.keyboard.press("x")  # an unknown key does nothing
    page.keyboard.press("4")  # not a grade of the graded scale (0 to 3)
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe number 6"

    press_and_wait_for_next(page, "s")  # skip the sixth
    assert page.get_by_test_id("empty-state").is_visible()
    screenshot_of(page, screenshot, "empty-state")
    grader.close()

    grades = dict(
        FeedbackSlot.objects.filter(evaluation=evaluation).values_list("snapshot__doc_id", "grade")
    )
    assert grades == {
        "sku-1": 3,
        "sku-2": 2,
        "sku-3": 1,
        "sku-4": 0,
        "sku-5": 0,
        "sku-6": None,
    }
    assert SnapshotSkip.objects.filter(snapshot__doc_id="sku-6").exists()

    lead = browser.new_context()
    page = lead.new_page()
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_role("link", name="Evaluations").click()
    page.get_by_role("link", name="Shoes 1").click()
    card = page.locator("[data-metric='cg@10'] .metric-value")
    assert card.inner_text() == "6.0000"  # 3 + 2 + 1 + 0 + 0 after the change
    assert "5 of 6 grades" in page.locator(".progress-text").first.inner_text()
    screenshot_of(page, screenshot, "lead-evaluation")
    lead.close()


def test_a_double_press_grades_only_one_result(live_server, browser, evaluation):
    context = browser.new_context()
    page = context.new_page()
    log_in(page, live_server.url, "grader@shop.test")
    page.goto(f"{live_server.url}/feedback/")
    page.wait_for_selector("#card[data-ready='1']")
    first = page.locator("#card").get_attribute("data-slot")

    page.keyboard.press("2")
    page.keyboard.press("2")  # before the next result has appeared
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before", arg=first
    )
    page.wait_for_timeout(800)

    assert FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).count() == 1
    context.close()


def screenshot_of(page, screenshot, name):
    """The fixture's screenshot is tied to the default page; this one takes any page."""
    from tests.browser.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"journey-{name}.png"), full_page=True)
