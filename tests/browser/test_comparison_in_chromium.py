"""A lead picks two evaluations on the list, compares them and reads which one is better."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from tests.browser.people import PASSWORD, log_in
from tests.comparison_data import shop_pair

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_ticks_two_evaluations_compares_them_and_reads_a_significant_difference(
    live_server, page, screenshot
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    first, second = shop_pair(team)  # B puts the best results first, for every keyword

    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_role("link", name="Evaluations").first.click()
    # The list shows the newest first; ticking A first makes A the baseline.
    page.get_by_label("Compare Ranking A").check()
    page.get_by_label("Compare Ranking B").check()
    page.get_by_role("button", name="Compare").click()

    page.wait_for_url(f"**/evaluations/compare/?e={first.id}&e={second.id}")
    verdict = page.locator(".verdict[data-metric='ndcg@10']")
    assert verdict.inner_text() == "Ranking B is better than Ranking A on nDCG@10 (p < 0.001)"
    assert "significant" in (verdict.get_attribute("class") or "")
    row = page.locator("[data-testid=metric-table] tr[data-metric='ndcg@10']")
    assert "20 / 0 / 0" in row.inner_text()
    assert row.locator("svg.difference-bar").is_visible()
    assert page.get_by_test_id("p-value").first.inner_text() == "0.0001"
    screenshot("comparison")

    # Sorting by the difference in nDCG@10 puts the smallest gain first; again, the largest.
    table = page.get_by_test_id("keyword-table")
    table.locator("a[data-sort='ndcg@10']").click()
    page.wait_for_url("**sort=ndcg%4010**")
    gains = [
        float(text)
        for text in table.locator("td.difference[data-metric='ndcg@10']").all_inner_texts()
    ]
    assert len(gains) == 20 and gains == sorted(gains) and gains[0] < gains[-1]
    table.locator("a[data-sort='ndcg@10']").click()
    page.wait_for_url("**sort=-ndcg%4010**")
    again = [
        float(text)
        for text in table.locator("td.difference[data-metric='ndcg@10']").all_inner_texts()
    ]
    assert again == sorted(gains, reverse=True)
    screenshot("comparison-sorted")


# A hand quicker than any script: it ticks A, then B, the moment both boxes are parsed.
QUICK_TICKS = """
new MutationObserver((_, observer) => {
  const [a, b] = ["A", "B"].map((name) =>
    document.querySelector(`[aria-label='Compare Ranking ${name}']`));
  if (!a || !b) return;
  observer.disconnect();
  a.click();
  b.click();
}).observe(document, { childList: true, subtree: true });
"""


def test_boxes_ticked_as_soon_as_the_list_shows_still_make_the_first_the_baseline(
    live_server, page
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    first, second = shop_pair(team)
    log_in(page, live_server.url, "lead@shop.test")
    page.add_init_script(QUICK_TICKS)

    page.goto(f"{live_server.url}/evaluations/")
    expect(page.get_by_label("Compare Ranking B")).to_be_checked()
    page.get_by_role("button", name="Compare").click()

    page.wait_for_url("**/evaluations/compare/**")
    assert page.url.endswith(f"?e={first.id}&e={second.id}")  # A, ticked first, is the baseline
