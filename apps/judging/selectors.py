"""Reads of the grader's work: which evaluations they may judge, what they hold, counts.

The reads on the grading path are hand-written statements of sql.py (each with the
figure that keeps it over the ORM); the others are ORM queries.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import Membership, Tag
from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    SnapshotSkip,
    Status,
)

from . import sql


def _one(statement: str, params: Sequence[Any] | dict[str, Any]) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()


def _slot_with_all(where: str, params: Sequence[Any], order: str = "") -> FeedbackSlot | None:
    row = _one(
        f"SELECT {sql.SLOT_WITH_ALL.columns} FROM {sql.SlotRows.JOINS} "
        f"WHERE {where} {order} LIMIT 1",
        params,
    )
    return None if row is None else sql.SLOT_WITH_ALL.slot(row)


def lock_cutoff(now: datetime | None = None) -> datetime:
    """Slots assigned before this moment have lost their lock."""
    return (now or timezone.now()) - timedelta(seconds=settings.SLOT_LOCK_SECONDS)


def evaluations_open_to(membership: Membership) -> QuerySet[Evaluation]:
    """Active evaluations of the team whose every tag the member holds (the shared pool)."""
    tags_not_held = Tag.objects.filter(team_id=membership.team_id).exclude(
        id__in=membership.tags.values("id")
    )
    return (
        Evaluation.objects.filter(team_id=membership.team_id, status=Status.ACTIVE, archived=False)
        .exclude(tags__in=tags_not_held)
        .order_by("started_at", "id")
    )


def holds_every_tag(membership: Membership, evaluation: Evaluation) -> bool:
    """Whether the member holds every tag of the evaluation (its shared pool's rule)."""
    return not evaluation.tags.exclude(id__in=membership.tags.values("id")).exists()


def open_evaluations_parameters(membership: Membership) -> dict[str, Any]:
    return {"team": membership.team_id, "active": Status.ACTIVE.value, "membership": membership.id}


def evaluation_ids_open_to(membership: Membership) -> list[int]:
    """The ids of evaluations_open_to(membership), in the same order, in one cheap read."""
    with connection.cursor() as cursor:
        cursor.execute(sql.OPEN_EVALUATIONS_SQL, open_evaluations_parameters(membership))
        return [evaluation_id for (evaluation_id,) in cursor.fetchall()]


def slot_for_display(slot_id: int) -> FeedbackSlot:
    """The slot with its snapshot, keyword and evaluation, as the card shows it."""
    slot = _slot_with_all("s.id = %s", [slot_id])
    if slot is None:
        raise FeedbackSlot.DoesNotExist(f"no slot {slot_id}")
    return slot


def previous_graded_slot(
    *, user: Any, team_id: int, before: datetime | None = None
) -> FeedbackSlot | None:
    """The grader's last graded slot of an active evaluation of the team (before a moment,
    to walk further back)."""
    slots = FeedbackSlot.objects.filter(
        grader=user,
        graded_at__isnull=False,
        evaluation__status=Status.ACTIVE,
        evaluation__team_id=team_id,
    )
    if before is not None:
        slots = slots.filter(graded_at__lt=before)
    return slots.select_related("snapshot", "keyword", "evaluation").order_by("-graded_at").first()


def previous_judgement(
    *, user: Any, team_id: int, before: datetime | None = None
) -> FeedbackSlot | SnapshotSkip | None:
    """The grader's history, one step back: their last grade or skip in an active
    evaluation of the team (before a moment), whichever came later. A skip comes with
    its result's keyword and evaluation."""
    slot = previous_graded_slot(user=user, team_id=team_id, before=before)
    skips = SnapshotSkip.objects.filter(
        user=user,
        snapshot__keyword__evaluation__team_id=team_id,
        snapshot__keyword__evaluation__status=Status.ACTIVE,
    )
    if before is not None:
        skips = skips.filter(created_at__lt=before)
    skip = skips.select_related("snapshot__keyword__evaluation").order_by("-created_at").first()
    if skip is None:
        return slot
    if slot is None or slot.graded_at is None or skip.created_at > slot.graded_at:
        return skip
    return slot


def start_of_today() -> Any:
    """Midnight of today in the site's time zone, as the database compares it."""
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return connection.ops.adapt_datetimefield_value(start)


def grades_today(*, user: Any) -> int:
    row = _one(sql.GRADES_TODAY_SQL, {"user": user.id, "today": start_of_today()})
    assert row is not None
    return row[0]
