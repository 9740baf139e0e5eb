"""Cron read in words for the schedule pages, and cron's parser on hostile text: it says
what is wrong (CronError) and never fails any other way."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.schedules.cron import CronError, in_words, parse


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("0 9 * * 1", "Every Monday at 09:00"),
        ("30 2 * * *", "Every day at 02:30"),
        ("0 6,18 * * *", "Every day at 06:00 and 18:00"),
        ("0 6 * * 1-5", "Every weekday (Monday to Friday) at 06:00"),
        ("0 0 * * sat,sun", "Every Saturday and Sunday at 00:00"),
        ("0 0 * * 7", "Every Sunday at 00:00"),
        ("0 0 * * 0-6", "Every day at 00:00"),
        ("* * * * *", "Every minute"),
        ("0 * * * *", "Every hour, on the hour"),
        ("15 * * * *", "Every hour at 15 minutes past"),
        ("*/15 * * * *", "Every 15 minutes"),
        ("5-10 * * * *", "Every hour at 5 to 10 minutes past"),
        ("0 */2 * * *", "Every 2 hours, on the hour"),
        ("0 9-17 * * 1-5", "Every weekday (Monday to Friday), every hour from 09:00 to 17:00"),
        ("0,30 9-17 * * *", "Every 30 minutes from 09:00 to 17:30"),
        ("0 1,3,4,7,9,11,13 * * *", "Every day at minute 0 of the hours 1, 3, 4, 7, 9, 11 and 13"),
        ("0 0 1,15 * *", "On days 1 and 15 of each month at 00:00"),
        ("0 8 1 jan,jul *", "On day 1 of January and July at 08:00"),
        ("0 0 * 12 *", "Every day in December at 00:00"),
        ("0 12 13 * 5", "On day 13 of the month and every Friday at 12:00"),
    ],
)
def test_an_expression_reads_as_a_sentence(expression, words):
    assert in_words(expression, "UTC") == f"{words} (UTC)"


def test_the_sentence_names_the_zone_its_times_are_in():
    assert in_words("0 9 * * 1", "Europe/Paris") == "Every Monday at 09:00 (Europe/Paris)"


def test_an_expression_that_does_not_parse_is_no_sentence():
    with pytest.raises(CronError, match="hour: 24 is outside 0-23"):
        in_words("0 24 * * *", "UTC")


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("² * * * *", "minute: '²' is not a number"),
        ("0 ٣ * * *", "hour: '٣' is not a number"),
        ("99999 * * * *", "minute: '99999' is not a number"),
        ("1,,2 * * * *", "minute: '' is not a number"),
        ("*/ * * * *", "minute: '' is not a number"),
    ],
)
def test_digits_are_ascii_digits_and_fields_are_never_empty(expression, problem):
    with pytest.raises(CronError, match=problem):
        parse(expression)


FIELD_TEXT = st.text(alphabet=st.sampled_from("0123456789*/-,²٣¹ janmonsun\x00\u3000"), max_size=8)


@given(st.lists(FIELD_TEXT, min_size=0, max_size=7).map(" ".join) | st.text(max_size=120))
def test_any_text_parses_or_says_why_and_reads_in_words_when_it_parses(text):
    try:
        cron = parse(text)
    except CronError:
        return
    try:
        cron.next_after(datetime(2026, 1, 1, tzinfo=UTC), ZoneInfo("Europe/Paris"))
    except CronError:
        return
    assert in_words(text, "Europe/Paris").endswith("(Europe/Paris)")
