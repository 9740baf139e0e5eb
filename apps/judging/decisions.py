"""A lead settles a snapshot graders disagree on: their final grade overrides stage 1
in the metrics. It is the lead's judgement of the snapshot, written beside the graders'
judgements of its slots (judgements.py), under the same rules: the team, the scale.

The decision is written in one transaction with the keyword's scoring mark, exactly as
a grade is, so the keyword's metrics are recomputed through the normal pipeline after
the commit, and a recompute already running sees a newer grade version and goes round
again.
"""

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Membership
from apps.accounts.selectors import is_lead
from apps.core.errors import NotAllowed
from apps.evaluations.models import Snapshot
from apps.scoring.pipeline import grades_changed

from .judgements import check_grade, check_reason
from .models import SnapshotDecision


def _check_lead(membership: Membership) -> None:
    if not is_lead(membership):
        raise NotAllowed("Only the team's owner and its leads can settle a disagreement.")


def _team_snapshot(membership: Membership, snapshot_id: int, evaluation_id: int | None) -> Snapshot:
    """The snapshot with its keyword and evaluation. Another team's snapshot, or one not of
    ``evaluation_id`` when it is given, raises Snapshot.DoesNotExist, as if there were none."""
    found = Snapshot.objects.select_related("keyword__evaluation").filter(
        id=snapshot_id, keyword__evaluation__team_id=membership.team_id
    )
    if evaluation_id is not None:
        found = found.filter(keyword__evaluation_id=evaluation_id)
    snapshot = found.first()
    if snapshot is None:
        raise Snapshot.DoesNotExist("No such result in this team.")
    return snapshot


def snapshot_decide(
    *,
    membership: Membership,
    snapshot_id: int,
    grade: Any,
    reason: str = "",
    evaluation_id: int | None = None,
) -> SnapshotDecision:
    """Set (or change) the lead's final grade of a snapshot, on the evaluation's scale.
    ``evaluation_id``: the evaluation the snapshot must belong to, when the caller knows."""
    _check_lead(membership)
    reason = check_reason(reason)
    snapshot = _team_snapshot(membership, snapshot_id, evaluation_id)
    evaluation = snapshot.keyword.evaluation
    checked = check_grade(grade, evaluation.grading_scale)
    with transaction.atomic():
        # Marking updates the keyword's row first. Its lock makes two leads deciding on
        # one keyword take turns, and it is the order in which the pipeline's store locks
        # (keyword, then its snapshots), so a decision and a recompute never deadlock.
        grades_changed(keyword_ids=[snapshot.keyword_id])
        decision, _created = SnapshotDecision.objects.update_or_create(
            snapshot=snapshot,
            defaults={
                "evaluation": evaluation,
                "grade": checked,
                "reason": reason,
                "decided_by": membership.user,
                "decided_at": timezone.now(),
            },
        )
    return decision


def snapshot_decision_clear(
    *, membership: Membership, snapshot_id: int, evaluation_id: int | None = None
) -> bool:
    """Remove the lead's decision: stage 1 is the graders' again. False if there was none."""
    _check_lead(membership)
    snapshot = _team_snapshot(membership, snapshot_id, evaluation_id)
    if not SnapshotDecision.objects.filter(snapshot=snapshot).exists():
        return False
    with transaction.atomic():
        grades_changed(keyword_ids=[snapshot.keyword_id])  # first, as in snapshot_decide
        deleted, _ = SnapshotDecision.objects.filter(snapshot=snapshot).delete()
    return bool(deleted)
