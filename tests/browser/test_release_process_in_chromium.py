"""A lead wires Relevo into the release process in Chromium: adds a webhook, sends it a
test that a real local receiver checks the signature of, reads the delivery log,
switches an e-mail on, schedules an evaluation and runs it now."""

import pytest

from apps.accounts.services import team_create
from apps.evaluations.models import Status
from apps.notifications.models import EmailNotice
from apps.schedules.models import ScheduledRun
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation
from tests.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_adds_a_webhook_tests_it_and_schedules_a_run(
    live_server, page, screenshot, settings
):
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True  # the receiver is on 127.0.0.1
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    setup = make_evaluation(team=team, keywords={"red shoes": 3}, start=False)
    log_in(page, live_server.url, "lead@shop.test")

    with WebhookReceiver() as receiver:
        page.get_by_text("Team", exact=True).click()
        page.get_by_role("link", name="Notifications").click()
        page.get_by_role("link", name="Add a webhook").click()
        page.get_by_label("Name").fill("Release channel")
        page.get_by_label("URL", exact=True).fill(receiver.url)
        page.get_by_label("A regression was found").check()
        page.get_by_role("button", name="Add webhook").click()
        secret = page.get_by_test_id("new-secret").locator("code").inner_text()
        assert secret.startswith("whsec_")
        receiver.secret = secret
        screenshot("webhook-added")

        page.get_by_role("button", name="Send test").click()
        assert page.get_by_text("Sent a test: delivered (HTTP 200).").is_visible()
        log = page.get_by_test_id("delivery-log")
        assert "Delivered" in log.inner_text() and "HTTP 200" in log.inner_text()
        [received] = receiver.received
        assert received.signed_right and received.json["event"] == "test"

    page.get_by_role("link", name="Notifications").first.click()
    page.get_by_label("An evaluation finished").check()
    page.get_by_role("button", name="Save my e-mails").click()
    assert page.get_by_text("Saved your e-mail notifications.").is_visible()
    assert EmailNotice.objects.filter(event="evaluation.finished").count() == 1

    page.get_by_text("Team", exact=True).click()
    page.get_by_role("link", name="Schedules").click()
    page.get_by_label("Name").fill("Nightly")
    page.get_by_label("Setup").select_option(label=setup.name)
    page.get_by_label("When (cron)").fill("0 6 * * 1-5")
    page.get_by_role("button", name="Add schedule").click()
    assert page.get_by_text("Scheduled Nightly.").is_visible()
    page.get_by_role("button", name="Run now").click()
    assert page.get_by_text("Started a run").is_visible()
    run = ScheduledRun.objects.get()
    assert run.evaluation.status == Status.ACTIVE  # its results copied: open for grading
    assert (
        page.get_by_test_id("run-table").get_by_role("link", name=run.evaluation.name).is_visible()
    )
    screenshot("schedule-run")
