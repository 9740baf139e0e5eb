"""What a judge's step claims (runs.py makes the steps): the slots it holds while its
calls are made, given back when they cannot be graded now.

A claim takes up to `calls` batches of up to `size` ungraded slots of the evaluation that
nobody holds (or whose hold ran out), one keyword a batch (the prompt shows one keyword
and its results), one slot a result, never a result the judge already has a slot of,
nor one that failed for the run and was not retried, nor one a chain sent to people,
nor one whose slots AI judges already fill the run's share of (`slots_per_result`: by
default one of each result's slots, the rest left to people; sql.py reads them). A
worker that dies mid-step leaves its slots held until their lock runs out
(SLOT_LOCK_SECONDS); a later claim frees them, and the judge takes them again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from apps.evaluations.models import FeedbackSlot, judges_q
from apps.judging.selectors import lock_cutoff

from .models import Judge, JudgeRun
from .sql import Claimed, claim_candidates, claims_one_at_a_time

CLAIM_ATTEMPTS = 3
IDLE_WAIT_S = 30.0  # nothing to claim now, but people hold results that may come free


def claim(
    run: JudgeRun, size: int, calls: int = 1, free_expired: bool = True
) -> list[list[Claimed]]:
    """Up to `calls` batches of up to `size` slots for the judge, each of one keyword,
    one slot per snapshot, held from now. `free_expired`: first free the judge's own
    holds that ran out (a step that died), so they can be claimed again."""
    for _ in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                return _claim_once(run, size, calls, free_expired)
        except IntegrityError:
            # Another step of this run took a slot of the same snapshot at the same
            # moment (the one-slot-per-grader constraint): look again.
            continue
    return []


def _claim_once(run: JudgeRun, size: int, calls: int, free_expired: bool) -> list[list[Claimed]]:
    judge_user = run.judge.user_id
    now = timezone.now()
    cutoff = lock_cutoff(now)
    if free_expired:  # the judge's own holds that ran out: free again, to itself too
        FeedbackSlot.objects.filter(
            evaluation_id=run.evaluation_id,
            grader_id=judge_user,
            grade__isnull=True,
            assigned_at__lt=cutoff,
        ).update(grader=None, assigned_at=None)
    # As many as wanted times the slots a snapshot has (one for each of its graders):
    # one slot a snapshot is picked.
    strategy = run.evaluation.strategy
    # The share leaves a slot out only below the result's slots (not on one slot a
    # result, nor for AI only); then judges' claims take turns, to count alike.
    share = run.slots_per_result if run.slots_per_result < strategy else None
    if share is not None:
        claims_one_at_a_time(run.evaluation_id)
    candidates = claim_candidates(
        evaluation_id=run.evaluation_id,
        run_id=run.id,
        judge_user_id=judge_user,
        cutoff=cutoff,
        wanted=size * calls * strategy,
        share=share,
    )
    batches = _batched(candidates, size, calls)
    picked = [slot.id for batch in batches for slot in batch]
    FeedbackSlot.objects.filter(id__in=picked).update(grader_id=judge_user, assigned_at=now)
    return [sorted(batch, key=_shown_order) for batch in batches]


def _shown_order(slot: Claimed) -> tuple[int, int]:
    return (slot.snapshot_position, slot.index)


def _batched(candidates: list[Claimed], size: int, calls: int) -> list[list[Claimed]]:
    """The candidates in up to `calls` batches of up to `size`, in their order: one
    keyword a batch (the prompt shows one keyword and its results), one slot a snapshot."""
    batches: list[list[Claimed]] = []
    filling: dict[int, list[Claimed]] = {}  # keyword id -> its batch being filled
    seen: set[int] = set()
    for slot in candidates:
        if slot.snapshot_id in seen:
            continue
        batch = filling.get(slot.keyword_id)
        if batch is None or len(batch) == size:
            if len(batches) == calls:
                continue  # no new batch; one being filled may still take a later slot
            batch = filling[slot.keyword_id] = []
            batches.append(batch)
        batch.append(slot)
        seen.add(slot.snapshot_id)
    return batches


def wait_for_held_work(run: JudgeRun) -> float | None:
    """Seconds to wait when nothing can be claimed now but some results may come free:
    the judge's own holds of a step that died (until the first runs out), or others'
    holds of results the judge has none of. None: nothing is left for the judge."""
    cutoff = lock_cutoff()
    mine = FeedbackSlot.objects.filter(evaluation_id=run.evaluation_id, grader_id=run.judge.user_id)
    oldest_hold = (
        mine.filter(grade__isnull=True, assigned_at__gte=cutoff)
        .order_by("assigned_at")
        .values_list("assigned_at", flat=True)
        .first()
    )
    if oldest_hold is not None:
        # It runs out when the cutoff passes it: in (oldest_hold - cutoff), and a second.
        return min((oldest_hold - cutoff).total_seconds() + 1.0, IDLE_WAIT_S)
    others = FeedbackSlot.objects.filter(
        evaluation_id=run.evaluation_id, grade__isnull=True, grader__isnull=False
    ).exclude(snapshot_id__in=mine.values("snapshot_id"))
    if run.slots_per_result < run.evaluation.strategy:
        others = others.exclude(snapshot_id__in=_full_for_judges(run, cutoff))
    others_hold = others.exists()
    return IDLE_WAIT_S if others_hold else None


def _full_for_judges(run: JudgeRun, cutoff: datetime) -> QuerySet[FeedbackSlot, Any]:
    """The results whose slots AI judges fill the run's share of (graded by a judge, or
    held by one's grader while the hold lasts): nothing on them can come free for it."""
    held_by_a_judge = Q(
        grade__isnull=True,
        assigned_at__gte=cutoff,
        grader_id__in=Judge.objects.values("user_id"),
    )
    return (
        FeedbackSlot.objects.filter(evaluation_id=run.evaluation_id)
        .filter(judges_q() | held_by_a_judge)
        .values("snapshot_id")
        .annotate(filled=Count("id"))
        .filter(filled__gte=run.slots_per_result)
        .values("snapshot_id")
    )


def give_back(run: JudgeRun, slots: list[Claimed]) -> None:
    if not slots:
        return
    FeedbackSlot.objects.filter(
        id__in=[slot.id for slot in slots], grader_id=run.judge.user_id, grade__isnull=True
    ).update(grader=None, assigned_at=None)


def give_back_held(run: JudgeRun) -> None:
    FeedbackSlot.objects.filter(
        evaluation_id=run.evaluation_id, grader_id=run.judge.user_id, grade__isnull=True
    ).update(grader=None, assigned_at=None)
