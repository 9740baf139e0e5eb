"""The team's leaderboard: the slots each member graded over a range of days, and its
chart."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils.timezone import get_current_timezone

from apps.accounts.models import Membership
from apps.evaluations.models import FeedbackSlot

from . import charts


@dataclass(frozen=True)
class LeaderboardRow:
    user_id: int
    email: str
    role: str
    graded: int
    share: float | None  # of every grade the listed members gave in the range
    active_days: int  # days (local time) with at least one grade


def leaderboard(
    *, team_id: int, start: date, end: date, tag_id: int | None = None
) -> list[LeaderboardRow]:
    """The team's members (holding the tag, if one is given) with the slots they graded
    in the team's evaluations from `start` to `end`, both days included, in local time.

    Two queries. Only people's own grades count: a slot counts once, on the day of its
    latest grade; a reset slot no longer counts, nor a grade a reuse strategy copied
    from an earlier evaluation, nor one an import wrote (even when the file names a
    member as its grader). AI judges are not members: judge_leaderboard counts them.
    Most grades first; members with none are listed too.
    """
    members = Membership.objects.filter(team_id=team_id)
    if tag_id is not None:
        members = members.filter(tags=tag_id)
    people = list(members.values_list("user_id", "user__email", "role").order_by("user__email"))
    zone = get_current_timezone()
    graded = (
        FeedbackSlot.objects.filter(
            grader_id__in=[user_id for user_id, _email, _role in people],
            evaluation__team_id=team_id,
            **_graded_from_to(start, end, zone),
        )
        .values_list("grader_id")
        .annotate(
            graded=Count("id"),
            days=Count(TruncDate("graded_at", tzinfo=zone), distinct=True),
        )
        .order_by()
        .values_list("grader_id", "graded", "days")
    )
    counts = {grader_id: (count, days) for grader_id, count, days in graded}
    total = sum(count for count, _days in counts.values())
    rows = [
        LeaderboardRow(
            user_id=user_id,
            email=email,
            role=role,
            graded=counts.get(user_id, (0, 0))[0],
            share=counts.get(user_id, (0, 0))[0] / total if total else None,
            active_days=counts.get(user_id, (0, 0))[1],
        )
        for user_id, email, role in people
    ]
    rows.sort(key=lambda row: (-row.graded, -row.active_days))  # stable: by email within
    return rows


@dataclass(frozen=True)
class JudgeRow:
    name: str
    model_name: str
    graded: int
    active_days: int


def judge_leaderboard(*, team_id: int, start: date, end: date) -> list[JudgeRow]:
    """The team's AI judges with the slots they graded from `start` to `end`, counted
    apart from people (a judge is not a member: the people's table never lists it).
    One query; judges with no grade in the range are left out."""
    zone = get_current_timezone()
    graded = (
        FeedbackSlot.objects.by_judges()
        .filter(
            evaluation__team_id=team_id,
            **_graded_from_to(start, end, zone),
        )
        .values_list("source_detail__name", "source_detail__model_name")
        .annotate(
            graded=Count("id"),
            days=Count(TruncDate("graded_at", tzinfo=zone), distinct=True),
        )
        .order_by("-graded", "source_detail__name")
    )
    return [JudgeRow(name, model, count, days) for name, model, count, days in graded]


def _graded_from_to(start: date, end: date, zone: tzinfo) -> dict[str, Any]:
    """Slots graded here (not copied by reuse: counted where they were given; not
    written by an import) from `start` to `end`, both days included, in local time."""
    return {
        "reused": False,
        "imported": False,
        "graded_at__gte": datetime.combine(start, time.min, tzinfo=zone),
        "graded_at__lt": datetime.combine(end + timedelta(days=1), time.min, tzinfo=zone),
    }


def leaderboard_chart(rows: Sequence[LeaderboardRow], *, limit: int = 25) -> dict[str, Any]:
    """A bar per grader with grades (the first `limit`; the table lists everyone)."""
    shown = [row for row in rows if row.graded][:limit]
    return charts.chart(
        "bar",
        [row.email for row in shown],
        [("graded slots", [row.graded for row in shown])],
        axis="graded slots",
    )
