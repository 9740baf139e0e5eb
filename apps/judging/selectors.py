"""Reads of the grader's work: which evaluations they may judge, what they hold, counts."""

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import Membership, Tag
from apps.evaluations.models import Evaluation, FeedbackSlot, Status


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


def slot_for_display(slot_id: int) -> FeedbackSlot:
    return FeedbackSlot.objects.select_related("snapshot", "keyword", "evaluation").get(id=slot_id)


def held_slot(*, user: Any, evaluation_ids: list[int]) -> FeedbackSlot | None:
    """The ungraded slot the grader holds in one of these evaluations, most recent first."""
    return (
        FeedbackSlot.objects.filter(
            grader=user, grade__isnull=True, evaluation_id__in=evaluation_ids
        )
        .select_related("snapshot", "keyword", "evaluation")
        .order_by("-assigned_at")
        .first()
    )


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


def grades_today(*, user: Any) -> int:
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return FeedbackSlot.objects.filter(grader=user, graded_at__gte=start).count()
