"""Cron expressions read as crontab(5) reads them, in the team's time zone, across the
clocks' changes."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from apps.schedules.cron import CronError, parse

PARIS = ZoneInfo("Europe/Paris")


def next_local(expression: str, after_local: datetime, zone: ZoneInfo = PARIS) -> datetime:
    """The next time after a wall-clock moment, as a wall-clock time of the zone."""
    moment = after_local.replace(tzinfo=zone)
    return parse(expression).next_after(moment, zone).astimezone(zone).replace(tzinfo=None)


def test_weekday_mornings_skip_the_weekend():
    friday_after_six = datetime(2026, 11, 27, 7, 0)
    assert next_local("0 6 * * 1-5", friday_after_six) == datetime(2026, 11, 30, 6, 0)


def test_the_time_is_the_teams_wall_clock_time():
    after = datetime(2026, 11, 27, 7, 0, tzinfo=UTC)
    paris = parse("0 6 * * *").next_after(after, PARIS)
    tokyo = parse("0 6 * * *").next_after(after, ZoneInfo("Asia/Tokyo"))
    assert paris == datetime(2026, 11, 28, 5, 0, tzinfo=UTC)  # 06:00 in Paris, winter
    assert tokyo == datetime(2026, 11, 27, 21, 0, tzinfo=UTC)  # 06:00 in Tokyo


def test_steps_lists_ranges_and_names():
    assert next_local("*/15 * * * *", datetime(2026, 1, 1, 10, 16)) == datetime(2026, 1, 1, 10, 30)
    assert next_local("5,35 9-10 * * *", datetime(2026, 1, 1, 10, 36)) == datetime(2026, 1, 2, 9, 5)
    assert next_local("0 8 1 jan,jul *", datetime(2026, 2, 1)) == datetime(2026, 7, 1, 8, 0)
    assert next_local("0 0 * * sun", datetime(2026, 11, 27)) == datetime(2026, 11, 29, 0, 0)
    assert next_local("0 0 * * 7", datetime(2026, 11, 27)) == datetime(2026, 11, 29, 0, 0)


def test_a_day_of_month_or_a_day_of_week_as_cron_reads_both():
    # The 13th, or any Friday: Friday 4 December comes before Sunday 13 December.
    assert next_local("0 12 13 * 5", datetime(2026, 11, 28)) == datetime(2026, 12, 4, 12, 0)


def test_the_29th_of_february_waits_for_a_leap_year():
    assert next_local("0 0 29 2 *", datetime(2026, 3, 1)) == datetime(2028, 2, 29, 0, 0)


def test_a_time_the_clocks_skip_is_skipped_that_day():
    # Paris jumps from 02:00 to 03:00 on 29 March 2026: no 02:30 that night.
    assert next_local("30 2 * * *", datetime(2026, 3, 28, 3, 0)) == datetime(2026, 3, 30, 2, 30)


def test_a_time_the_clocks_repeat_runs_once():
    # Paris goes back from 03:00 to 02:00 on 25 October 2026: 02:30 happens twice.
    first = parse("30 2 * * *").next_after(datetime(2026, 10, 24, 12, 0, tzinfo=UTC), PARIS)
    assert first == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 summer time
    after_first = parse("30 2 * * *").next_after(first, PARIS)
    assert after_first == datetime(2026, 10, 26, 1, 30, tzinfo=UTC)  # the next night


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("0 6 * *", "five fields separated by spaces"),
        ("60 6 * * *", "minute: 60 is outside 0-59"),
        ("0 24 * * *", "hour: 24 is outside 0-23"),
        ("0 6 0 * *", "day of month: 0 is outside 1-31"),
        ("0 6 * 13 *", "month: 13 is outside 1-12"),
        ("0 6 * * 8", "day of week: 8 is outside 0-7"),
        ("0 6 * * fri-mon", "day of week: the range 'fri-mon' runs backwards"),
        ("*/0 * * * *", "minute: a step of at least 1"),
        ("x 6 * * *", "minute: 'x' is not a number"),
        ("0 6 * foo *", "month: 'foo' is not a number or a name (jan, feb, …)"),
        ("0 0 31 2 *", "names no time in the next eight years"),
        ("0 " * 60, "at most 100 characters"),
    ],
)
def test_a_wrong_expression_says_which_field_and_why(expression, problem):
    with pytest.raises(CronError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse(expression).next_after(datetime(2026, 1, 1, tzinfo=UTC), PARIS)
