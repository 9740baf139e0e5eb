"""A lead on a phone (390 x 844) reaches what each lead page is for without scrolling
sideways: the header is one line and the team's, the evaluations list shows each
evaluation's metrics and progress, Compare its difference, interval and p, and the
disagreement queue its grade buttons."""

import pytest
from playwright.sync_api import expect

from apps.demo.seed import seed_demo
from apps.evaluations.models import Evaluation
from tests.browser.test_narrow_screens import PHONE, log_in_to_the_demo, sideways_overflow

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def phone(browser, live_server):
    seed_demo()
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in_to_the_demo(page, live_server.url)
    yield page
    context.close()


def outside_the_window(locator) -> list[str]:
    """The texts of the elements that lie, in part, left or right of the window."""
    return locator.evaluate_all(
        """elements => elements.filter(e => {
             const box = e.getBoundingClientRect();
             return box.width === 0 || box.left < 0 || box.right > window.innerWidth;
           }).map(e => e.innerText || e.outerHTML.slice(0, 80))"""
    )


def test_the_header_is_one_line_and_the_teams(phone, live_server):
    header = phone.locator("header.topbar")
    brand = header.get_by_role("link", name="Relevo")
    team = header.get_by_text("Acme Outdoor Shop")
    line = brand.bounding_box()["height"] + 16
    assert header.bounding_box()["height"] <= 2 * line + 24, "two lines at most"
    assert team.bounding_box()["y"] > brand.bounding_box()["y"] + 10, "the team on its own line"
    assert sideways_overflow(phone) == 0

    evaluations = header.get_by_role("link", name="Evaluations")
    expect(evaluations).to_be_hidden()
    header.get_by_text("Menu", exact=True).click()
    expect(evaluations).to_be_visible()
    evaluations.click()
    expect(phone.get_by_role("heading", level=1)).to_have_text("Evaluations")


def test_the_evaluations_list_shows_metrics_and_progress_within_the_window(phone, live_server):
    phone.goto(f"{live_server.url}/evaluations/")
    rows = phone.get_by_test_id("evaluation-table").locator("tbody tr")
    expect(rows).to_have_count(Evaluation.objects.count())
    headline = rows.get_by_test_id("headline")
    progress = rows.locator(".progress-text")
    expect(progress).to_have_count(Evaluation.objects.count())
    assert outside_the_window(headline) == []
    assert outside_the_window(progress) == []
    assert sideways_overflow(phone) == 0


def test_compare_shows_the_difference_interval_and_p_within_the_window(phone, live_server):
    week_2 = Evaluation.objects.get(name="Default ranking, week 2")
    week_3 = Evaluation.objects.get(name="Default ranking, week 3")
    phone.goto(f"{live_server.url}/evaluations/compare/?e={week_2.id}&e={week_3.id}")
    rows = phone.get_by_test_id("metric-table").locator("tbody tr")
    expect(rows).to_have_count(2)
    for cell in ("difference", "interval", "p-value"):
        cells = rows.locator(f"[data-testid={cell}]")
        expect(cells).to_have_count(2)
        assert outside_the_window(cells) == [], cell
    assert sideways_overflow(phone) == 0


def test_the_disagreement_queues_buttons_are_within_the_window(phone, live_server):
    graded = Evaluation.objects.get(name__startswith="Catalogue search, graded")
    phone.goto(f"{live_server.url}/evaluations/{graded.id}/disagreements/")
    buttons = phone.get_by_role("group", name="Final grade").get_by_role("button")
    assert buttons.count() >= 4
    assert outside_the_window(buttons) == []
    assert sideways_overflow(phone) == 0
