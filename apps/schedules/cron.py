"""Cron expressions: when a schedule runs. Pure: no Django.

Five fields, as crontab(5) has them: minute (0-59), hour (0-23), day of month (1-31),
month (1-12 or jan-dec), day of week (0-7 or sun-sat; 0 and 7 are Sunday). Each field
is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a list of these with commas.
As in cron, when both the day of month and the day of week are restricted, a day
matching either runs.

The times are wall-clock times in the schedule's time zone. A time that does not exist
on a day the clocks go forward (02:30 in spring) is skipped that day; a time that
happens twice when they go back runs once, at the first.
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
    span, _, step_text = item.partition("/")
    step = 1
    if step_text:
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
        high = spec.high if step_text else low
    return set(range(low, high + 1, step))


def _number(text: str, spec: _Field, what: str = "value") -> int:
    word = text.strip().lower()
    if word in spec.names:
        return spec.names.index(word) + spec.names_from
    if not word.isdigit() or len(word) > 4:
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
