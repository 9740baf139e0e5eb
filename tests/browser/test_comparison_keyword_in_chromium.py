"""On Compare, a lead opens one keyword and reads its result lists side by side."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from tests.browser.people import PASSWORD, log_in
from tests.comparison_data import imported_evaluation, shop_pair

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_clicks_a_keyword_and_sees_both_lists_side_by_side_with_what_moved(
    live_server, page, screenshot
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    first, second = shop_pair(team)  # B puts the best results first and brings new ones
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/compare/?e={first.id}&e={second.id}")

    # The per-keyword table gives the keyword the room the numbers do not need.
    table = page.get_by_test_id("keyword-table")
    keyword_cell = table.locator("td.keyword-text").first.bounding_box()
    number_cells = [
        cell.bounding_box() for cell in table.locator("tbody tr").first.locator("td.num").all()
    ]
    assert keyword_cell and all(number_cells)
    assert keyword_cell["width"] > 2 * max(cell["width"] for cell in number_cells if cell)

    table.get_by_role("link", name="query 1", exact=True).click()

    page.wait_for_url("**/evaluations/compare/keyword/**")
    expect(page.get_by_role("heading", level=1)).to_have_text("“query 1”")
    baseline = page.get_by_test_id(f"results-{first.id}")
    other = page.get_by_test_id(f"results-{second.id}")
    expect(baseline.get_by_role("heading", level=2)).to_have_text("Ranking A")
    expect(other.get_by_role("heading", level=2)).to_have_text("Ranking B")
    # Side by side: the same height on the page, the baseline on the left.
    left, right = baseline.bounding_box(), other.bounding_box()
    assert left and right
    assert left["y"] == right["y"] and left["x"] + left["width"] <= right["x"]

    best = other.locator("tr[data-doc='q1-best']")
    expect(best.locator("td.grade")).to_have_text("3 · Perfect")
    expect(best.locator("[data-move]")).to_have_text("↑3")
    expect(best.locator("[data-move]")).to_have_attribute(
        "title", "up 3 (was at 4 in the baseline)"
    )
    expect(other.locator("tr[data-doc='q1-new-good'] [data-move]")).to_have_text("new")
    expect(other.get_by_test_id("dropped")).to_contain_text("q1-poor-2 was 2, not listed")
    expect(baseline.locator("[data-move]")).to_have_count(0)
    expect(page.get_by_test_id("keyword-metrics").locator("tr[data-metric='P@5']")).to_contain_text(
        "+0.4000"
    )
    screenshot("side-by-side")

    page.get_by_role("link", name="Comparison").click()
    page.wait_for_url(f"**/evaluations/compare/?e={first.id}&e={second.id}#keywords")


def test_a_long_keyword_wraps_in_the_per_keyword_table_instead_of_widening_it(live_server, page):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    long_keyword = " ".join(["waterproof hiking boots for wide feet"] * 8)
    first = imported_evaluation(team, "Old", {long_keyword: [("d1", 1)], "hat": [("d2", 0)]})
    second = imported_evaluation(team, "New", {long_keyword: [("d1", 2)], "hat": [("d2", 3)]})
    log_in(page, live_server.url, "lead@shop.test")

    page.goto(f"{live_server.url}/evaluations/compare/?e={first.id}&e={second.id}")

    table = page.get_by_test_id("keyword-table")
    long_cell, short_cell = (cell.bounding_box() for cell in table.locator("td.keyword-text").all())
    scroller = page.locator(".comparison-scroll").filter(has=table).bounding_box()
    table_box = table.bounding_box()
    assert long_cell and short_cell and scroller and table_box
    assert table_box["width"] <= scroller["width"]  # no sideways scrolling
    assert long_cell["height"] > 2 * short_cell["height"]  # the keyword wraps
