"""A lead schedules a weekly run in Chromium without writing cron: the presets fill the
cron field, the page reads it back in words in the team's time zone; a hostile cron and a
host-dependent time zone are refused beside their fields."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.schedules.models import Schedule
from apps.schedules.services import team_time_zone_set
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_schedules_a_weekly_run_with_the_presets_and_reads_it_in_words(
    live_server, page, screenshot
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    team_time_zone_set(team=team, time_zone="Europe/Paris")
    setup = make_evaluation(team=team, start=False)
    log_in(page, live_server.url, "lead@shop.test")

    page.get_by_text("Team", exact=True).click()
    page.get_by_role("link", name="Schedules").click()
    form = page.get_by_test_id("schedule-form")
    form.get_by_label("Name").fill("Monday check")
    form.get_by_label("Setup").select_option(label=setup.name)
    form.get_by_label("Repeat").select_option(label="Every week")
    form.get_by_label("On", exact=True).select_option(label="Monday")
    form.get_by_label("At", exact=True).fill("09:00")
    expect(form.get_by_label("When (cron)")).to_have_value("0 9 * * 1")
    expect(form.get_by_test_id("cron-words")).to_have_text("Every Monday at 09:00 (Europe/Paris)")
    screenshot("weekly-preset")

    form.get_by_role("button", name="Add schedule").click()
    expect(page.get_by_text("Scheduled Monday check.")).to_be_visible()
    expect(page.get_by_test_id("schedule-when")).to_have_text(
        "Every Monday at 09:00 (Europe/Paris)"
    )
    schedule = Schedule.objects.get(name="Monday check")
    assert schedule.cron == "0 9 * * 1"
    # The saved cron chooses its preset again on the schedule's page.
    settings_form = page.get_by_test_id("schedule-form")
    expect(settings_form.get_by_label("Repeat")).to_have_value("weekly")

    # Daily at a time, then a cron of no preset's shape, typed by hand.
    settings_form.get_by_label("Repeat").select_option(label="Every day")
    settings_form.get_by_label("At", exact=True).fill("06:30")
    expect(settings_form.get_by_label("When (cron)")).to_have_value("30 6 * * *")
    expect(settings_form.get_by_test_id("cron-words")).to_have_text(
        "Every day at 06:30 (Europe/Paris)"
    )
    settings_form.get_by_label("When (cron)").fill("*/15 9-17 * * 1-5")
    expect(settings_form.get_by_label("Repeat")).to_have_value("")
    expect(settings_form.get_by_test_id("cron-words")).to_have_text(
        "Every weekday (Monday to Friday), every 15 minutes from 09:00 to 17:45 (Europe/Paris)"
    )

    # A hostile cron: read back as a problem while typed, refused beside the field on save.
    settings_form.get_by_label("When (cron)").fill("² * * * *")
    expect(settings_form.get_by_test_id("cron-problem")).to_have_text(
        "Minute: '²' is not a number."
    )
    settings_form.get_by_role("button", name="Save").click()
    expect(page.locator("#id_cron_error")).to_have_text("Minute: '²' is not a number.")
    expect(page.get_by_test_id("schedule-form").get_by_label("When (cron)")).to_have_value(
        "² * * * *"
    )
    schedule.refresh_from_db()
    assert schedule.cron == "0 9 * * 1"
    screenshot("hostile-cron")


def test_a_time_zone_that_depends_on_the_host_is_refused_beside_its_field(live_server, page):
    team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/schedules/")
    zone_form = page.get_by_test_id("time-zone-form")
    zone_form.get_by_label("The team's time zone").fill("localtime")
    zone_form.get_by_role("button", name="Save the time zone").click()
    expect(page.locator("#id_time_zone_error")).to_have_text(
        "An IANA time zone name, e.g. Europe/Paris or UTC."
    )
    expect(page.get_by_label("The team's time zone")).to_have_value("localtime")

    page.get_by_label("The team's time zone").fill("Asia/Tokyo")
    page.get_by_role("button", name="Save the time zone").click()
    expect(page.get_by_text("The team's schedules read their times in Asia/Tokyo.")).to_be_visible()
