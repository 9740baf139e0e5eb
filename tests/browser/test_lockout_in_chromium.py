"""Someone typing wrong passwords in Chromium is stopped with a page that says why and
what to do, in the app's own layout; once an admin unlocks the account, they log in."""

import pytest

from apps.accounts.lockout import unlock
from apps.accounts.services import team_create
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_person_locked_out_sees_why_and_logs_in_once_unlocked(live_server, page, screenshot):
    team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)

    for attempt in range(10):  # LOGIN_FAILURE_LIMIT's default
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Email").fill("lead@shop.test")
        page.get_by_label("Password").fill(f"wrong-{attempt}")
        page.get_by_role("button", name="Log in").click()
    log_in(page, live_server.url, "lead@shop.test")

    alert = page.get_by_role("alert")
    assert "Logging in as lead@shop.test from here is paused" in alert.inner_text()
    assert page.get_by_role("heading", name="Too many wrong passwords").is_visible()
    assert page.get_by_role("link", name="Choose a new one").is_visible()
    screenshot("locked-out")

    unlock("lead@shop.test")
    log_in(page, live_server.url, "lead@shop.test")

    assert page.get_by_role("link", name="Dashboard").first.is_visible()
