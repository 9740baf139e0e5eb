"""Live pages in Chromium: a grade given in one browser shows on the lead's evaluation
page and dashboard, open in another, within 2 seconds and without a reload: by asking
every 1.5 s (no stream), and told by the live stream (LIVE_STREAM_URL)."""

import copy
import time

import pytest
from django.conf import settings
from django.test import override_settings
from playwright.sync_api import expect

from apps.accounts.services import member_add, team_create
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in
from tests.live_stream_server import StreamServer

pytestmark = pytest.mark.django_db(transaction=True)
LIVE_WITHIN_MS = 2_000


@pytest.fixture
def evaluation():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    evaluation = evaluation_create(team=team, name="Shoes 1", scale="graded", metrics=[("cg", 10)])
    [keyword] = keywords_add(evaluation=evaluation, texts=["red running shoes"])
    snapshots_add(
        keyword=keyword, documents=[Document(f"sku-{i}", f"Shoe {i}") for i in range(1, 5)]
    )
    return evaluation_start(evaluation=evaluation)


def opened_as(browser, base_url: str, email: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, base_url, email)
    page.wait_for_url(f"{base_url}/")
    return context, page


def never_reloaded(page) -> None:
    """Mark the page's window: a reload would lose the mark."""
    page.evaluate("() => { window.stillThePage = true; }")


def grade_the_first_result(page, base_url: str) -> float:
    """Grade as a grader does; the moment the grade was saved (its answer came back)."""
    page.goto(f"{base_url}/feedback/")
    page.wait_for_selector("#card[data-ready='1']")
    before = page.locator("#card").get_attribute("data-slot")
    page.keyboard.press("3")
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before", arg=before
    )
    return time.monotonic()


def test_a_grade_shows_on_the_leads_pages_within_two_seconds(live_server, browser, evaluation):
    lead_context, lead = opened_as(browser, live_server.url, "lead@shop.test")
    dashboard = lead_context.new_page()
    dashboard.goto(f"{live_server.url}/")
    lead.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    progress = lead.locator("#live-progress .progress-text")
    expect(progress).to_contain_text("0 of 4 grades")
    team_progress = dashboard.locator("#dashboard-live table .progress-text")
    expect(team_progress).to_contain_text("0 of 4 grades")
    never_reloaded(lead)
    never_reloaded(dashboard)
    # Give the pages time to settle into their polling: a change must not merely catch
    # the first ask.
    lead.wait_for_timeout(1_000)

    grader_context, grader = opened_as(browser, live_server.url, "grader@shop.test")
    saved_at = grade_the_first_result(grader, live_server.url)

    expect(progress).to_contain_text("1 of 4 grades", timeout=LIVE_WITHIN_MS)
    expect(team_progress).to_contain_text("1 of 4 grades", timeout=LIVE_WITHIN_MS)
    shown_after = time.monotonic() - saved_at
    assert lead.evaluate("() => window.stillThePage === true"), "the page was not reloaded"
    assert dashboard.evaluate("() => window.stillThePage === true")
    assert shown_after < LIVE_WITHIN_MS / 1000

    grader_context.close()
    lead_context.close()


def test_a_live_page_asks_with_its_etag_and_gets_304_while_nothing_changes(
    live_server, browser, evaluation
):
    lead_context, lead = opened_as(browser, live_server.url, "lead@shop.test")
    answers = []
    lead.on(
        "response",
        lambda response: answers.append(response.status) if "/live/" in response.url else None,
    )
    lead.goto(f"{live_server.url}/evaluations/{evaluation.id}/")

    lead.wait_for_timeout(3_500)  # two asks at least

    assert len(answers) >= 2 and set(answers) == {304}
    lead_context.close()


@pytest.fixture
def stream_on(redis_url):
    """The live stream running beside the test server, as LIVE_STREAM_URL deploys it."""
    with StreamServer(redis_url) as server:
        policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
        policy["DIRECTIVES"]["connect-src"] = ["'self'", f"http://127.0.0.1:{server.port}"]
        with override_settings(
            LIVE_STREAM_URL=server.url,
            LIVE_REDIS_URL=redis_url,
            LIVE_CHANNEL=server.channel,
            CONTENT_SECURITY_POLICY=policy,
        ):
            yield server


def test_with_the_stream_a_still_page_does_not_ask_and_a_grade_shows_within_two_seconds(
    live_server, browser, evaluation, stream_on
):
    lead_context, lead = opened_as(browser, live_server.url, "lead@shop.test")
    asks = []
    lead.on(
        "request", lambda request: asks.append(request.url) if "/live/" in request.url else None
    )
    lead.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    progress = lead.locator("#live-progress .progress-text")
    expect(progress).to_contain_text("0 of 4 grades")
    never_reloaded(lead)

    lead.wait_for_timeout(4_000)  # without the stream: two or three asks
    live_asks = [url for url in asks if f"/live/evaluation/{evaluation.id}/" in url]
    assert len(live_asks) <= 1, live_asks  # the one ask when the stream opened
    assert stream_on.feed.count == 1

    grader_context, grader = opened_as(browser, live_server.url, "grader@shop.test")
    saved_at = grade_the_first_result(grader, live_server.url)

    expect(progress).to_contain_text("1 of 4 grades", timeout=LIVE_WITHIN_MS)
    assert time.monotonic() - saved_at < LIVE_WITHIN_MS / 1000
    assert lead.evaluate("() => window.stillThePage === true"), "the page was not reloaded"
    grader_context.close()
    lead_context.close()
