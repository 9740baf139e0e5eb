"""Writes of the grader's work: grading a slot and a lead's reset of one.

Each change of a grade marks the slot's keyword for recomputation in the same
transaction; the metrics follow on a worker, and grading never waits for them.
"""

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import Membership
from apps.core.errors import InvalidInput, InvalidState, NotAllowed
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip, Status
from apps.scoring import engine
from apps.scoring.services import keyword_mark_for_scoring

from .selectors import evaluations_open_to, held_slot, lock_cutoff, slot_for_display

# How often a claim is tried again after losing a race for the chosen slot.
CLAIM_ATTEMPTS = 5
# The order slots are offered in: snapshots that have a grade first, then keyword order,
# then position (the index slot_queue_order serves it).
QUEUE_ORDER = ("-snapshot_started", "keyword_position", "snapshot_position", "index")
# How many ungraded slots of started snapshots a claim looks at before fresh snapshots.
STARTED_WINDOW = 200
ALL_KEYWORDS = 2**31 - 1  # above any keyword_position


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
        raise NotAllowed("this result is not yours to grade (its time ran out and it moved on)")
    if slot.evaluation.status != Status.ACTIVE:
        raise InvalidState("the evaluation is not open for grading")
    _check_grade(grade, slot.evaluation.scale)
    now = timezone.now()
    with transaction.atomic():
        # The snapshot's slots are locked before our own is written (see
        # _mark_snapshot_started); the other order deadlocked two graders of one snapshot.
        _mark_snapshot_started(slot.snapshot_id)
        # Conditional on the grader: a slot taken over meanwhile is not graded by us.
        updated = FeedbackSlot.objects.filter(id=slot_id, grader_id=user.id).update(
            grade=grade, reason=reason, graded_at=now
        )
        if updated != 1:
            raise NotAllowed("this result is not yours to grade (its time ran out and it moved on)")
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
        # A recorded grade starts its snapshot too, so the queue finishes it first.
        _mark_snapshot_started(slot.snapshot_id)
        FeedbackSlot.objects.filter(id=slot_id).update(
            grade=grade,
            reason=reason,
            grader=grader,
            external_grader=grader_name,
            assigned_at=now if grader else None,
            graded_at=now,
        )
        keyword_mark_for_scoring(keyword_id=slot.keyword_id)


def _mark_snapshot_started(snapshot_id: int) -> None:
    """The queue offers the other slots of a snapshot with a grade before fresh ones.

    Call first in the grade's transaction. The slots are locked in id order before any
    is written: two graders of one snapshot used to write their own slot and then wait
    for each other's in this UPDATE, a deadlock PostgreSQL broke by failing one grade.
    Once the snapshot is started this locks nothing.
    """
    unstarted = list(
        FeedbackSlot.objects.select_for_update()
        .filter(snapshot_id=snapshot_id, snapshot_started=False)
        .order_by("id")
        .values_list("id", flat=True)
    )
    if unstarted:
        FeedbackSlot.objects.filter(id__in=unstarted).update(snapshot_started=True)


# --- The queue --------------------------------------------------------------------------


def slot_claim_next(
    *, membership: Membership, evaluation: Evaluation | None = None
) -> FeedbackSlot | None:
    """The grader's next result: the slot they hold, else a newly claimed free slot.

    Without `evaluation`, every active evaluation whose tags the grader holds is a
    source, oldest first. A lead may name one evaluation of the team (tags aside).
    None means there is nothing left for this grader.
    """
    user = membership.user
    if evaluation is not None:
        if evaluation.team_id != membership.team_id or evaluation.status != Status.ACTIVE:
            raise InvalidState("this evaluation is not open for grading")
        evaluation_ids = [evaluation.id]
    else:
        evaluation_ids = list(evaluations_open_to(membership).values_list("id", flat=True))
    if not evaluation_ids:
        return None
    with transaction.atomic():
        # One claim at a time per grader: a double click used to claim a second slot
        # (the first claim was not committed when the second looked for a held one), and
        # a storm of clicks ran out of attempts on the one-slot-per-snapshot constraint
        # and answered "nothing left" while work remained.
        Membership.objects.select_for_update().filter(id=membership.id).exists()
        held = held_slot(user=user, evaluation_ids=evaluation_ids)
        if held is not None:
            # Still theirs: nobody took it, even if its lock ran out. Renew the lock,
            # unless another grader took the expired slot since we read it.
            now = timezone.now()
            renewed = FeedbackSlot.objects.filter(
                id=held.id, grader=user, grade__isnull=True
            ).update(assigned_at=now)
            if renewed == 1:
                held.assigned_at = now
                return held
        slot_id = _claim(evaluation_ids=evaluation_ids, user=user)
    return None if slot_id is None else slot_for_display(slot_id)


def _claim(*, evaluation_ids: list[int], user: Any) -> int | None:
    """Claim the first free slot for the grader, trying the evaluations in turn."""
    for _attempt in range(CLAIM_ATTEMPTS):
        now = timezone.now()
        free = Q(grader__isnull=True) | Q(assigned_at__lt=lock_cutoff(now))
        try:
            with transaction.atomic():
                candidate = _find_candidate(evaluation_ids=evaluation_ids, user=user, free=free)
                if candidate is None:
                    return None
                # The conditional UPDATE is the claim: it succeeds for one claimer only.
                claimed = (
                    FeedbackSlot.objects.filter(id=candidate, grade__isnull=True)
                    .filter(free)
                    .update(grader=user, assigned_at=now)
                )
        except IntegrityError:
            # The grader got another slot of this snapshot at the same moment (a recorded
            # grade); the next attempt no longer offers this snapshot.
            continue
        if claimed == 1:
            return candidate
    return None


def _find_candidate(*, evaluation_ids: list[int], user: Any, free: Q) -> int | None:
    for evaluation_id in evaluation_ids:
        candidate = _find_candidate_in(evaluation_id=evaluation_id, user=user, free=free)
        if candidate is not None:
            return candidate
    return None


def _find_candidate_in(*, evaluation_id: int, user: Any, free: Q) -> int | None:
    """The first slot in queue order the grader may take, locked for the claim.

    Each search walks the queue's index; the walk passes over slots the grader may not
    take. A grader far ahead of the others has a slot on every started snapshot near the
    front, and one search over the whole queue walked past all of them on every claim
    (42 ms behind a lead of 10,000 snapshots, against 2 ms). So the started snapshots are
    searched only in a window at the front, then the fresh ones; only when both have
    nothing for the grader is the whole queue searched, which may find a started
    snapshot beyond the window. Such a grader therefore starts fresh snapshots before
    joining started ones far back: the others finish those.
    """
    ungraded = FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grade__isnull=True)
    open_to_user = (
        ungraded.filter(free)
        .exclude(
            Exists(FeedbackSlot.objects.filter(snapshot_id=OuterRef("snapshot_id"), grader=user))
        )
        .exclude(
            Exists(SnapshotSkip.objects.filter(snapshot_id=OuterRef("snapshot_id"), user=user))
        )
        .order_by(*QUEUE_ORDER)
    )
    # The window ends with the keyword of its last slot: a bound on keyword_position is a
    # range on the index, so the walk stops there whatever plan the database picks.
    last_keyword_in_window = Subquery(
        ungraded.filter(snapshot_started=True)
        .order_by(*QUEUE_ORDER)
        .values("keyword_position")[STARTED_WINDOW - 1 : STARTED_WINDOW]
    )
    front_of_started = open_to_user.filter(
        snapshot_started=True,
        keyword_position__lte=Coalesce(last_keyword_in_window, Value(ALL_KEYWORDS)),
    )
    for slots in (front_of_started, open_to_user.filter(snapshot_started=False)):
        # PostgreSQL: concurrent claimers pass over each other's candidates.
        candidate = _first_id(slots.select_for_update(skip_locked=True, of=("self",)))
        if candidate is not None:
            return candidate
    # This last search waits for locked slots instead of skipping them: not every locked
    # slot is being claimed (a grade starting its snapshot locks that snapshot's free
    # slots for a moment), and skipping those would tell the grader there is nothing
    # left while there is.
    return _first_id(open_to_user.select_for_update(of=("self",)))


def _first_id(slots: QuerySet[FeedbackSlot]) -> int | None:
    return slots.values_list("id", flat=True).first()


def slot_skip(*, user: Any, slot_id: int, reason: str = "") -> None:
    """The grader cannot judge this result: release it and never offer it to them again."""
    with transaction.atomic():
        slot = (
            FeedbackSlot.objects.select_for_update()
            .filter(id=slot_id, grader=user, grade__isnull=True)
            .first()
        )
        if slot is None:
            raise NotAllowed("this result is not yours to skip")
        SnapshotSkip.objects.get_or_create(
            snapshot_id=slot.snapshot_id, user=user, defaults={"reason": reason.strip()}
        )
        FeedbackSlot.objects.filter(id=slot_id).update(grader=None, assigned_at=None)
