"""Cron expressions: when a schedule runs. Pure: no Django.

Five fields, as crontab(5) has them: minute (0-59), hour (0-23), day of month (1-31),
month (1-12 or jan-dec), day of week (0-7 or sun-sat; 0 and 7 are Sunday). Each field
is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a list of these with commas.
As in cron, when both the day of month and the day of week are restricted, a day
matching either runs.

The times are wall-clock times in the schedule's time zone. A time that does not exist
on a day the clocks go forward (02:30 in spring) is skipped that day; a time that
happens twice when they go back runs once, at the first.

`in_words` reads an expression as the pages show it: "Every Monday at 09:00 (Europe/Paris)".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

MAX_LENGTH = 100
# How far ahead the next time is looked for: "30 2 29 2 *" (29 February) can be nearly
# eight years away when a leap year is skipped (2096 -> 2104).
LOOK_AHEAD_DAYS = 366 * 8 + 2

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


class CronError(ValueError):
    """The expression is not one this module reads; the message says where."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    names_from: int = 0


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, tuple(_MONTHS), 1),
    _Field("day of week", 0, 7, tuple(_DAYS), 0),
)


@dataclass(frozen=True)
class Cron:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]  # 0 = Sunday
    day_of_month_restricted: bool
    day_of_week_restricted: bool

    def runs_on(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        by_month_day = day.day in self.days_of_month
        by_week_day = (day.isoweekday() % 7) in self.days_of_week
        if self.day_of_month_restricted and self.day_of_week_restricted:
            return by_month_day or by_week_day
        return by_month_day and by_week_day

    def next_after(self, moment: datetime, zone: ZoneInfo) -> datetime:
        """The first time after `moment` (aware) that the expression names, in UTC."""
        local = moment.astimezone(zone)
        for offset in range(LOOK_AHEAD_DAYS):
            day = local.date() + timedelta(days=offset)
            if not self.runs_on(day):
                continue
            for hour in self.hours:
                for minute in self.minutes:
                    wall = datetime.combine(day, time(hour, minute), tzinfo=zone)
                    if not _exists(wall):
                        continue
                    instant = wall.astimezone(UTC)
                    if instant > moment:
                        return instant
        raise CronError("the expression names no time in the next eight years")


def parse(expression: str) -> Cron:
    """The expression read, or CronError saying which field is wrong and why."""
    if len(expression) > MAX_LENGTH:
        raise CronError(f"at most {MAX_LENGTH} characters")
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(
            "five fields separated by spaces: minute hour day-of-month month day-of-week "
            f"(e.g. '0 6 * * 1-5'); this has {len(parts)}"
        )
    minutes, hours, days_of_month, months, days_of_week = (
        _values(text, spec) for text, spec in zip(parts, _FIELDS, strict=True)
    )
    days_of_week = {0 if day == 7 else day for day in days_of_week}
    return Cron(
        minutes=tuple(sorted(minutes)),
        hours=tuple(sorted(hours)),
        days_of_month=frozenset(days_of_month),
        months=frozenset(months),
        days_of_week=frozenset(days_of_week),
        day_of_month_restricted=not parts[2].startswith("*"),
        day_of_week_restricted=not parts[4].startswith("*"),
    )


def _values(text: str, spec: _Field) -> set[int]:
    values: set[int] = set()
    for item in text.split(","):
        values |= _item(item, spec)
    return values


def _item(item: str, spec: _Field) -> set[int]:
    span, slash, step_text = item.partition("/")
    step = 1
    if slash:  # "*/" with no step is a mistake, not a step of 1
        step = _number(step_text, spec, what="step")
        if step < 1:
            raise CronError(f"{spec.name}: a step of at least 1, not {step_text!r}")
    if span == "*":
        low, high = spec.low, spec.high
    elif "-" in span:
        first, _, last = span.partition("-")
        low, high = _number(first, spec), _number(last, spec)
        if low > high:
            raise CronError(f"{spec.name}: the range {span!r} runs backwards")
    else:
        low = _number(span, spec)
        high = spec.high if slash else low
    return set(range(low, high + 1, step))


def _number(text: str, spec: _Field, what: str = "value") -> int:
    word = text.strip().lower()
    if word in spec.names:
        return spec.names.index(word) + spec.names_from
    # ASCII digits only: str.isdigit() also says yes to "²" and "٣", which int() then
    # refuses or reads as another number.
    if not (word.isascii() and word.isdigit()) or len(word) > 4:
        raise CronError(f"{spec.name}: {text!r} is not a number{_names_hint(spec)}")
    number = int(word)
    if what == "value" and not spec.low <= number <= spec.high:
        raise CronError(f"{spec.name}: {number} is outside {spec.low}-{spec.high}")
    return number


def _names_hint(spec: _Field) -> str:
    return f" or a name ({spec.names[0]}, {spec.names[1]}, …)" if spec.names else ""


def _exists(wall: datetime) -> bool:
    """Whether the wall-clock time happens in its zone (not skipped by a jump forward)."""
    there_and_back = wall.astimezone(UTC).astimezone(wall.tzinfo)
    return there_and_back.replace(tzinfo=None) == wall.replace(tzinfo=None)


# --- In words ------------------------------------------------------------------------------

_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_MONTH_NAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_WEEKDAYS = frozenset(range(1, 6))
_WEEKEND = frozenset({0, 6})
# More times than this in a day read as a rule ("every hour from …"), not one by one.
_TIMES_LISTED = 6


def in_words(expression: str, zone: str) -> str:
    """The expression as a sentence a person reads, with the zone its times are in:
    "0 9 * * 1" in Europe/Paris is "Every Monday at 09:00 (Europe/Paris)". CronError
    when the expression does not parse."""
    cron = parse(expression)
    days = _days_in_words(cron)
    times = _times_in_words(cron)
    if times.startswith("at "):
        sentence = f"{days} {times}"
    elif days == "Every day":
        sentence = times[0].upper() + times[1:]  # "Every 15 minutes", not "Every day, every…"
    else:
        sentence = f"{days}, {times}"
    return f"{sentence} ({zone})"


def _days_in_words(cron: Cron) -> str:
    months = (
        ""
        if len(cron.months) == 12
        else _listed([_MONTH_NAMES[m - 1] for m in sorted(cron.months)])
    )
    in_months = f" in {months}" if months else ""
    week_days = _week_days_in_words(cron.days_of_week)
    month_days = sorted(cron.days_of_month)
    on_days = f"day{'s' if len(month_days) > 1 else ''} {_numbers(month_days)}"
    if cron.day_of_month_restricted and cron.day_of_week_restricted:
        return f"On {on_days} of the month and every {week_days}{in_months and ','}{in_months}"
    if cron.day_of_month_restricted:
        return f"On {on_days} of {months or 'each month'}"
    return f"Every {week_days}{in_months}"


def _week_days_in_words(days: frozenset[int]) -> str:
    if len(days) == 7:
        return "day"
    if days == _WEEKDAYS:
        return "weekday (Monday to Friday)"
    monday_first = sorted(days, key=lambda day: (day + 6) % 7)
    return _listed([_DAY_NAMES[day] for day in monday_first])


def _times_in_words(cron: Cron) -> str:
    minutes, hours = cron.minutes, cron.hours
    if len(hours) == 24:
        return _each_hour(minutes)
    times = [f"{hour:02}:{minute:02}" for hour in hours for minute in minutes]
    if len(times) <= _TIMES_LISTED:
        return f"at {_listed(times)}"
    hour_step = _step(hours, 24)
    if len(minutes) == 1 and hour_step and hour_step > 1:
        return f"every {hour_step} hours{_past_the_hour(minutes[0])}"
    minute_step = _step(minutes, 60)
    if hours == tuple(range(hours[0], hours[-1] + 1)):  # one stretch of the day
        if len(minutes) == 1:
            return f"every hour from {times[0]} to {times[-1]}"
        if minute_step:
            return f"every {minute_step} minutes from {times[0]} to {times[-1]}"
    in_hours = f"the hours {_numbers(list(hours))}"
    if minute_step:
        return f"every {minute_step} minutes in {in_hours}"
    return f"at minute{'s' if len(minutes) > 1 else ''} {_numbers(list(minutes))} of {in_hours}"


def _each_hour(minutes: tuple[int, ...]) -> str:
    if len(minutes) == 60:
        return "every minute"
    step = _step(minutes, 60)
    if step and step > 1:
        return f"every {step} minutes" + (f" from minute {minutes[0]}" if minutes[0] else "")
    if len(minutes) == 1:
        return f"every hour{_past_the_hour(minutes[0])}"
    return f"every hour at {_numbers(list(minutes))} minutes past"


def _past_the_hour(minute: int) -> str:
    return ", on the hour" if minute == 0 else f" at {minute} minutes past"


def _step(values: tuple[int, ...], cycle: int) -> int | None:
    """n when the values are every n-th of the cycle from the first (which comes before n)."""
    if len(values) < 2:
        return None
    step = values[1] - values[0]
    matches = values == tuple(range(values[0], cycle, step))
    return step if matches and values[0] < step else None


def _numbers(values: list[int]) -> str:
    """1, 2, 3, 4, 5, 10 as "1 to 5 and 10"."""
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return _listed(
        [f"{run[0]} to {run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs]
    )


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
