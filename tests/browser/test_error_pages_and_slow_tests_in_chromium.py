"""In Chromium, with DEBUG off as `make run` serves: a lead who follows a link to another
team's evaluation reads Relevo's own "Not found" page and clicks back to the dashboard;
a lead who tests a model against a slow search system is told how long Test model
waits, and why it gave up."""

import pytest

from apps.accounts.services import team_create
from apps.endpoints.tests.factories import make_endpoint, make_model
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_following_a_link_to_another_team_s_evaluation_finds_the_way_back(
    live_server, page, screenshot
):
    team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    elsewhere = make_evaluation(team=make_team("Elsewhere"), keywords={}, start=False)
    log_in(page, live_server.url, "lead@shop.test")

    response = page.goto(f"{live_server.url}/evaluations/{elsewhere.id}/")

    assert response is not None and response.status == 404
    assert page.get_by_role("heading", name="Not found").is_visible()
    assert page.get_by_text(elsewhere.name).count() == 0
    screenshot("not-found")
    page.get_by_role("link", name="Back to the dashboard").click()
    page.wait_for_url(f"{live_server.url}/")
    assert page.get_by_role("link", name="Give feedback").is_visible()


def test_a_lead_testing_a_slow_search_system_is_told_why_the_test_gave_up(
    live_server, page, screenshot, search_server, settings
):
    settings.SEARCH_TEST_TIMEOUT_SECONDS = 1
    search_server.slow_seconds = 4
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    endpoint = make_endpoint(team, url=search_server.url("/slow"), timeout_seconds=60)
    model = make_model(team, endpoint, name="Slow ranking")
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/models/{model.id}/")
    page.wait_for_load_state()

    page.get_by_role("button", name="Run keyword").click()

    running = page.get_by_test_id("test-running")
    assert running.inner_text().endswith("waiting at most 1 s…")
    error = page.get_by_test_id("test-error")
    error.wait_for(timeout=3_000)
    assert "No answer in time" in error.inner_text()
    assert "The endpoint did not answer within 1 s, the longest Test model waits" in (
        error.inner_text()
    )
    assert "waits up to the endpoint's 60 s" in error.inner_text()
    screenshot("slow-search-system")
