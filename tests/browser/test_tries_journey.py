"""A lead tries a change to a search model in Chromium: opens the model, clicks "Try a
change", turns a boost down, watches the try run, reads "worse" with judged@k beside each
side, and compares it with another try; on a real search server whose ranking turns on
`boost`, with every page under the Content-Security-Policy."""

import re

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.tries.models import Try
from apps.tries.running import try_run
from apps.tries.starting import TryRequest, try_start
from apps.tries.tests.tuned import KEYWORDS, import_grades, make_tuned_model
from tests.browser.people import PASSWORD, log_in
from tests.browser.test_content_security_policy import watch_for_refusals
from tests.browser.test_narrow_screens import PHONE, sideways_overflow

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = KEYWORDS[:6]  # six queries all worse: significant (p = 2 / 64)


@pytest.fixture
def tuned(search_server, broker_down):
    """Team Shop's model Tuned, every document it can return graded by people, and its
    try 1 as it is. The broker is down: a try started from the page waits for a runner,
    which the test is."""
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    model = make_tuned_model(team, search_server)
    import_grades(team, ranks=range(1, 11), keywords=QUERIES)
    first = try_start(
        team=team, user=None, asked=TryRequest(model="Tuned", queries=QUERIES, metrics="ndcg@5")
    )
    try_run(try_id=first.id)
    return model


def test_a_lead_turns_a_boost_down_sees_it_run_then_worse_and_compares_two_tries(
    live_server, page, tuned, screenshot
):
    refusals = watch_for_refusals(page.context)
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_role("link", name="Search models").click()
    page.get_by_role("link", name="Tuned").click()
    page.get_by_role("link", name="Try a change").click()

    page.get_by_label("Or these queries, one per line").fill("\n".join(QUERIES))
    page.get_by_label("Parameters").fill("boost=#boost#")
    page.get_by_label("Knobs").fill("boost=1")
    page.get_by_label("Baseline", exact=True).select_option(label="Try 1")
    page.get_by_label("Metrics").fill("ndcg@5")
    page.get_by_label("Depth").fill("5")
    page.get_by_label("Notes").fill("Boost down to 1")
    page.get_by_role("button", name="Start the try").click()

    progress = page.get_by_test_id("try-progress")
    expect(progress).to_contain_text("Running queries: 0 of 6")
    expect(page.get_by_test_id("try-state")).to_have_text("Queued")
    screenshot("running")
    attempt = Try.objects.get(number=2)
    # The worker's part, done right after a poll so the two never overlap on SQLite's
    # one shared in-memory connection; the next poll reloads the page.
    with page.expect_response(re.compile(r"/progress/$")):
        pass
    assert try_run(try_id=attempt.id) == "done"

    verdict = page.get_by_test_id("verdict")
    expect(verdict).to_have_attribute("data-verdict", "worse")
    expect(verdict.locator(".verdict-word")).to_have_text("Worse")
    first = page.get_by_test_id("try-metrics").locator("tr").nth(1)
    expect(first.get_by_test_id("judged")).to_have_text("judged@5 100.0%")
    expect(first.get_by_test_id("baseline-judged")).to_have_text("judged@5 100.0%")
    expect(first.get_by_test_id("difference")).to_have_text("−0.6131")
    expect(page.get_by_test_id("judged-by")).to_contain_text("30 grades by people")
    expect(page.get_by_test_id("try-query").first.locator("[data-move=new]")).to_have_count(5)
    screenshot("worse")

    page.get_by_label("Another try", exact=True).select_option(label="Tuned, try 1")
    page.get_by_role("button", name="Compare").click()

    expect(page.get_by_role("heading", level=1)).to_contain_text("against Tuned, try 1")
    expect(page.get_by_test_id("verdict")).to_have_attribute("data-verdict", "worse")
    expect(page.get_by_test_id("agreement")).to_contain_text("mean RBO 0.000")
    screenshot("compared")

    page.get_by_role("link", name="Tries", exact=True).click()
    row = page.get_by_test_id("try-row").first
    expect(row).to_contain_text("Boost down to 1")
    expect(row.get_by_test_id("try-verdict")).to_have_text("Worse")
    screenshot("tries")
    assert refusals == []

    # On a phone the pages fold: wide tables and the two lists scroll in their own box.
    page.set_viewport_size(PHONE)
    for path in (f"/tries/{attempt.id}/", f"/models/{tuned.id}/tries/", f"/models/{tuned.id}/"):
        page.goto(live_server.url + path)
        assert sideways_overflow(page) == 0, path
