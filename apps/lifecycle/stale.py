"""Stale judgements: grades copied from an earlier evaluation whose document has changed
since it was graded (reuse.py marks them; models.FeedbackSlot.stale).

They still count in the metrics, which say how many stale judgements they rest on; a
lead may send them back to the queue, where a person grades the document as it is now.
"""

from django.db import transaction

from apps.accounts.models import User
from apps.core.errors import InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judging.judgements import Action, Giver, slot_judge

# Sent back a hundred at a time: each clear goes through the grade writer, in one
# transaction with the others of its batch, so a long list never holds locks for long.
REQUEUE_BATCH = 100


def stale_count(evaluation_id: int, *, keyword_id: int | None = None) -> int:
    """The graded slots whose grade was given on content this result no longer shows."""
    slots = FeedbackSlot.objects.filter(evaluation_id=evaluation_id, stale=True)
    if keyword_id is not None:
        slots = slots.filter(keyword_id=keyword_id)
    return slots.filter(grade__isnull=False).count()


def stale_requeue(*, evaluation: Evaluation, lead: User | None) -> int:
    """Clear every stale grade of the evaluation through the grade writer, so its results
    go back to the graders' queue and its metrics are recomputed without them. Only while
    the evaluation is pending or open: a finished one's queue is closed. Returns how many
    were sent back. `lead`: who asked, None for an integration's API token."""
    if evaluation.status not in (Status.PENDING, Status.ACTIVE):
        raise InvalidState(
            "stale judgements go back to the queue only while the evaluation is pending or "
            "open for grading"
        )
    slot_ids = list(
        FeedbackSlot.objects.filter(evaluation=evaluation, stale=True, grade__isnull=False)
        .order_by("id")
        .values_list("id", flat=True)
    )
    for start in range(0, len(slot_ids), REQUEUE_BATCH):
        with transaction.atomic():
            for slot_id in slot_ids[start : start + REQUEUE_BATCH]:
                slot_judge(
                    slot_id=slot_id,
                    giver=Giver.lead(lead),
                    action=Action.CLEAR,
                    team_id=evaluation.team_id,
                )
    return len(slot_ids)
