"""A lead reads the graders' agreement, settles a tie in the disagreement queue, and sees
the evaluation's metric change, in Chromium."""

import pytest
from playwright.sync_api import expect

from tests.browser.people import log_in
from tests.browser.tied_shoes import tied_shoes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def evaluation():
    """The tied shoes (tests/browser/tied_shoes.py): P@2 counts only the second, 1."""
    return tied_shoes(["close enough", "it is blue", "", "red", "red", "red"])


def metric_card(page):
    return page.locator("[data-metric='precision@2'] .metric-value")


def test_a_lead_settles_a_tie_and_sees_the_metric_change(live_server, page, evaluation, screenshot):
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    assert metric_card(page).inner_text() == "1.0000"

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/agreement/")
    assert page.get_by_test_id("open-disagreements").inner_text() == "1"
    assert page.get_by_text("Landis & Koch (1977)").count() == 1
    screenshot("agreement")

    page.get_by_role("link", name="open, to settle").click()
    # A decision is swapped in place by htmx, which starts when the page has loaded
    # (before, the form posts and the open queue comes back without the settled row).
    page.wait_for_load_state()
    row = page.locator("tr[data-snapshot]")
    assert row.count() == 1
    assert "Blue sandal" in row.inner_text()
    assert "it is blue" in row.inner_text() and "close enough" in row.inner_text()
    assert "1 slot still open" in row.inner_text()
    screenshot("queue")

    page.get_by_label("Why (optional)").fill("the query asks for red")
    page.get_by_role("button", name="Final grade 0 (Irrelevant)").click()
    page.get_by_test_id("final-grade").wait_for()
    assert page.get_by_test_id("final-grade").inner_text() == "0 · Irrelevant"
    assert "by lead@shop.test" in page.locator("tr[data-snapshot]").inner_text()
    # The means above the queue were swapped in with the answer: P@2 is now 1 of 2.
    means = page.get_by_test_id("disagreement-metrics")
    assert means.locator("[data-metric='precision@2'] dd").inner_text() == "0.5000"
    screenshot("settled")
    # The page is live: within 2 s the settled result leaves "Open", with no reload.
    expect(page.locator("tr[data-snapshot]")).to_have_count(0, timeout=2_000)
    expect(page.get_by_text("Open (0)")).to_be_visible()

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    assert metric_card(page).inner_text() == "0.5000"
    screenshot("evaluation-after")

    # Changing its mind: the lead clears the decision and the tie counts for nothing again.
    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/disagreements/?show=settled")
    page.get_by_role("button", name="Clear the decision").click()
    page.get_by_test_id("final-grade").wait_for(state="detached")
    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    assert metric_card(page).inner_text() == "1.0000"
