"""Writes of the grader's work: grading a slot and a lead's reset of one.

Each change of a grade marks the slot's keyword for recomputation in the same
transaction; the metrics follow on a worker, and grading never waits for them.
"""

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.core.errors import InvalidInput, InvalidState, NotAllowed
from apps.evaluations.models import FeedbackSlot, Status
from apps.scoring import engine
from apps.scoring.services import keyword_mark_for_scoring


def _check_grade(grade: Any, scale: str) -> int:
    valid = engine.get_scale(scale).grades
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in valid:
        shown = ", ".join(str(g) for g in valid)
        raise InvalidInput({"grade": f"{grade!r} is not a {scale} grade ({shown})"}, field="grade")
    return grade


def slot_grade(*, user: Any, slot_id: int, grade: int, reason: str = "") -> FeedbackSlot:
    """A grader grades (or re-grades) their own slot of an active evaluation."""
    slot = FeedbackSlot.objects.select_related("evaluation").filter(id=slot_id).first()
    if slot is None or slot.grader_id != user.id:
        raise NotAllowed("this is not your slot")
    if slot.evaluation.status != Status.ACTIVE:
        raise InvalidState("the evaluation is not open for grading")
    _check_grade(grade, slot.evaluation.scale)
    now = timezone.now()
    with transaction.atomic():
        # Conditional on the grader: a slot taken over meanwhile is not graded by us.
        updated = FeedbackSlot.objects.filter(id=slot_id, grader_id=user.id).update(
            grade=grade, reason=reason, graded_at=now
        )
        if updated != 1:
            raise NotAllowed("this is not your slot")
        keyword_mark_for_scoring(keyword_id=slot.keyword_id)
    slot.grade, slot.reason, slot.graded_at = grade, reason, now
    return slot


def slot_reset(*, slot_id: int) -> None:
    """A lead clears a slot: no grade, no grader, so the queue offers it again."""
    with transaction.atomic():
        slot = FeedbackSlot.objects.select_for_update().get(id=slot_id)
        FeedbackSlot.objects.filter(id=slot_id).update(
            grade=None,
            reason="",
            graded_at=None,
            grader=None,
            external_grader="",
            assigned_at=None,
        )
        keyword_mark_for_scoring(keyword_id=slot.keyword_id)


def slot_record_grade(
    *, slot_id: int, grade: int, grader: Any = None, grader_name: str = "", reason: str = ""
) -> None:
    """Record a grade given outside the queue (an import, the demo data).

    The grader is a user, or a name for a grader who has no account here.
    """
    slot = FeedbackSlot.objects.select_related("evaluation").get(id=slot_id)
    _check_grade(grade, slot.evaluation.scale)
    now = timezone.now()
    with transaction.atomic():
        FeedbackSlot.objects.filter(id=slot_id).update(
            grade=grade,
            reason=reason,
            grader=grader,
            external_grader=grader_name,
            assigned_at=now if grader else None,
            graded_at=now,
        )
        keyword_mark_for_scoring(keyword_id=slot.keyword_id)
