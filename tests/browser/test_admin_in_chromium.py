"""The demo owner manages the data in the admin, in a real browser."""

import pytest

from apps.demo.seed import OWNER, PASSWORD, seed_demo

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_owner_logs_in_and_reads_an_evaluations_metrics(live_server, page, screenshot):
    seed_demo()

    page.goto(f"{live_server.url}/admin/")
    page.fill("input[name=username]", OWNER)
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.locator("tr.model-evaluation th a").click()
    page.get_by_role("link", name="Catalogue search, binary 1").click()

    metrics = page.locator("#metrics-group")
    # Shown, not editable: metrics change on the evaluation's edit page, which recomputes.
    assert metrics.locator("td.field-metric").first.inner_text().strip() == "precision"
    assert metrics.locator("input[name$='-metric']").count() == 0
    # The demo's fully graded binary evaluation: P@5 over its eight keywords.
    assert metrics.get_by_text("0.825", exact=True).count() == 1
    assert page.locator("#id_status").input_value() == "finished"
    screenshot("evaluation")
