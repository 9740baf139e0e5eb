"""A team's schedules: add, change, remove, its time zone, and "Run now". Every rule is
here; pages only type the input. The runs themselves are runner.py's."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput
from apps.core.naming import save_with_unique_name
from apps.core.typed import parse_id
from apps.evaluations.models import Evaluation
from apps.judges.models import Judge

from . import cron
from .models import Schedule, ScheduledRun
from .runner import scheduled_run_start

NAME_MAX = 100
MIN_CHANGE_MAX = 1000.0
FIELDS = {"name", "source", "cron", "judge", "min_change", "active"}


def schedule_create(*, team: Team, created_by: User | None = None, **given: Any) -> Schedule:
    values = _values(team, given, creating=True)
    schedule = Schedule(team=team, created_by=created_by, **values)
    schedule.next_run_at = next_run(schedule)
    _save(schedule)
    return schedule


def schedule_update(*, schedule: Schedule, **given: Any) -> Schedule:
    values = _values(schedule.team, given, creating=False)
    for name, value in values.items():
        setattr(schedule, name, value)
    if schedule.source_id is not None and "source" in values:
        schedule.note = ""  # a stopped schedule given a new setup
    schedule.next_run_at = next_run(schedule)
    _save(schedule)
    return schedule


def schedule_delete(*, schedule: Schedule) -> None:
    """The schedule and its runs' records go; the runs' evaluations stay."""
    schedule.delete()


def run_now(*, schedule: Schedule) -> ScheduledRun:
    """A run at once, beside the schedule's own times (which do not move)."""
    return scheduled_run_start(schedule, due_at=timezone.now(), by_hand=True)


@transaction.atomic
def team_time_zone_set(*, team: Team, time_zone: Any) -> str:
    """The zone the team's schedules read their times in; their next runs follow."""
    zone = str(time_zone or "").strip()
    if zone not in _zones():
        raise InvalidInput(["time_zone: an IANA time zone name, e.g. Europe/Paris or UTC"])
    Team.objects.filter(id=team.id).update(time_zone=zone)
    team.time_zone = zone
    for schedule in Schedule.objects.filter(team=team, active=True):
        schedule.team = team
        Schedule.objects.filter(id=schedule.id).update(next_run_at=next_run(schedule))
    return zone


def next_run(schedule: Schedule, after: datetime | None = None) -> datetime | None:
    """When the schedule next runs after `after` (now): None while stopped."""
    if not schedule.active or schedule.source_id is None:
        return None
    return cron.parse(schedule.cron).next_after(
        after or timezone.now(), ZoneInfo(schedule.team.time_zone)
    )


# --- Checking what was typed ---------------------------------------------------------------


def _values(team: Team, given: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """The checked values; every problem at once, each naming its field."""
    problems = [f"{name}: not a field of a schedule" for name in sorted(set(given) - FIELDS)]
    if creating:
        problems += [
            f"{name}: required" for name in ("name", "source", "cron") if not given.get(name)
        ]
    values: dict[str, Any] = {}
    if given.get("name"):
        values["name"] = str(given["name"]).strip()
        if len(values["name"]) > NAME_MAX:
            problems.append(f"name: at most {NAME_MAX} characters")
    if given.get("source"):
        values["source"] = _team_object(Evaluation, team, given["source"], "source", problems)
    if given.get("cron"):
        values["cron"] = " ".join(str(given["cron"]).split())
        try:
            cron.parse(values["cron"]).next_after(timezone.now(), ZoneInfo(team.time_zone))
        except cron.CronError as error:
            problems.append(f"cron: {error}")
    if "judge" in given:
        chosen = given["judge"]
        values["judge"] = (
            None if chosen in (None, "") else _team_object(Judge, team, chosen, "judge", problems)
        )
    if given.get("min_change") not in (None, ""):
        values["min_change"] = _min_change(given["min_change"], problems)
    if "active" in given:
        values["active"] = bool(given["active"])
    if problems:
        raise InvalidInput(problems)
    return values


def _team_object(model: type[Any], team: Team, chosen: Any, field: str, problems: list[str]) -> Any:
    """One of the team's objects by id (another team's does not exist for it)."""
    text = str(getattr(chosen, "id", chosen)).strip()
    number = parse_id(text)
    if number is None:
        problems.append(f"{field}: an id of one of the team's {model._meta.verbose_name_plural}")
        return None
    found = model.objects.filter(id=number, team_id=team.id).first()
    if found is None:
        problems.append(f"{field}: the team has no {model._meta.verbose_name} {number}")
    return found


def _min_change(value: Any, problems: list[str]) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        problems.append("min_change: a number")
        return 0.0
    if not 0 <= number <= MIN_CHANGE_MAX:
        problems.append(f"min_change: from 0 to {MIN_CHANGE_MAX:g}")
    return number


# Names in the system's zone files that are no place's time: `localtime` and `posixrules`
# are whatever this host is set to (another machine would read the schedules differently),
# `Factory` is no time at all; posix/ and right/ copies only exist on some hosts.
HOST_DEPENDENT_ZONES = {"localtime", "posixrules", "Factory"}


def _zones() -> set[str]:
    names = available_timezones() - HOST_DEPENDENT_ZONES
    return {name for name in names if not name.startswith(("posix/", "right/"))} | {"UTC"}


def _save(schedule: Schedule) -> None:
    save_with_unique_name(
        schedule,
        Schedule.objects.filter(team_id=schedule.team_id, name=schedule.name),
        f"name: the team already has a schedule named {schedule.name!r}",
    )
