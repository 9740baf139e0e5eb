"""Writes of the grader's work: grading a slot and a lead's reset of one.

Each change of a grade marks the slot's keyword for recomputation in the same
transaction; the metrics follow on a worker, and grading never waits for them.
"""

from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.accounts.models import Membership
from apps.core.errors import InvalidInput, InvalidState, NotAllowed
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip, Status
from apps.scoring import engine
from apps.scoring.services import keyword_mark_for_scoring

from .selectors import (
    SLOTS,
    evaluation_ids_open_to,
    held_slot,
    lock_cutoff,
    slot_for_display,
)

MEMBERSHIPS = Membership._meta.db_table
SKIPS = SnapshotSkip._meta.db_table

# How often a claim is tried again after losing a race for the chosen slot.
CLAIM_ATTEMPTS = 5
# The first key of the advisory lock a grader's claim takes on PostgreSQL (the second is
# the membership id): a number of its own, so no other advisory lock shares the key.
CLAIM_LOCK_SPACE = 7_310_001
# Slots are offered in the order of the index slot_queue_order: snapshots that have a
# grade first, then keyword order, then position (see _candidate_sql).
# How many ungraded slots of started snapshots a claim looks at before fresh snapshots.
STARTED_WINDOW = 200
ALL_KEYWORDS = 2**31 - 1  # above any keyword_position


def _check_grade(grade: Any, scale: str) -> int:
    valid = engine.get_scale(scale).grades
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in valid:
        shown = ", ".join(str(g) for g in valid)
        raise InvalidInput({"grade": f"{grade!r} is not a {scale} grade ({shown})"}, field="grade")
    return grade


def slot_grade(
    *,
    user: Any,
    slot_id: int,
    grade: int,
    reason: str = "",
    loaded: FeedbackSlot | None = None,
) -> FeedbackSlot:
    """A grader grades (or re-grades) their own slot of an active evaluation.

    `loaded` is the slot with its evaluation when the caller has just read it (the page
    does, to answer 404 for another team's slot), so it is not read twice.
    """
    slot = loaded
    if slot is None or slot.id != slot_id:
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
        # A snapshot never becomes unstarted again, so a slot read as started needs none.
        if not slot.snapshot_started:
            _mark_snapshot_started(slot.snapshot_id)
        # Conditional on the grader: a slot taken over meanwhile is not graded by us.
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {SLOTS} SET grade = %s, reason = %s, graded_at = %s "
                "WHERE id = %s AND grader_id = %s",
                [grade, reason, connection.ops.adapt_datetimefield_value(now), slot_id, user.id],
            )
            updated = cursor.rowcount
        if updated != 1:
            raise NotAllowed("this result is not yours to grade (its time ran out and it moved on)")
        keyword_mark_for_scoring(keyword_id=slot.keyword_id)
    slot.grade, slot.reason, slot.graded_at = grade, reason, now
    slot.snapshot_started = True
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
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {SLOTS} WHERE snapshot_id = %s AND NOT snapshot_started "
            f"ORDER BY id{lock}",
            [snapshot_id],
        )
        if cursor.fetchall():
            cursor.execute(
                f"UPDATE {SLOTS} SET snapshot_started = %s "
                "WHERE snapshot_id = %s AND NOT snapshot_started",
                [True, snapshot_id],
            )


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
        evaluation_ids = evaluation_ids_open_to(membership)
    if not evaluation_ids:
        return None
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                outcome = _claim_once(membership, user, evaluation_ids)
        except IntegrityError:
            # The grader got another slot of this snapshot at the same moment (a recorded
            # grade): the whole claim is rolled back and tried again, and the next search
            # no longer offers this snapshot.
            continue
        if outcome is _LOST_RACE:
            continue
        if outcome is None or isinstance(outcome, FeedbackSlot):
            return outcome
        return slot_for_display(outcome)
    return None


# _claim_once's answer when it lost a race for the slot it found: try again.
_LOST_RACE = object()


def _claim_once(membership: Membership, user: Any, evaluation_ids: list[int]) -> Any:
    """One attempt, in its own transaction: the held slot (renewed), the id of a newly
    claimed slot, None when nothing is left, or _LOST_RACE."""
    # One claim at a time per grader: a double click used to claim a second slot (the
    # first claim was not committed when the second looked for a held one), and a storm
    # of clicks ran out of attempts on the one-slot-per-snapshot constraint and answered
    # "nothing left" while work remained. On PostgreSQL the lock is an advisory lock held
    # to the end of the transaction: it writes nothing, where a row lock on the
    # membership wrote its row on every claim. SQLite's transactions already take the
    # write lock when they begin.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s::integer, %s::integer)",
                [CLAIM_LOCK_SPACE, membership.id],
            )
    elif connection.features.has_select_for_update:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM {MEMBERSHIPS} WHERE id = %s FOR UPDATE", [membership.id]
            )
    held = held_slot(user=user, evaluation_ids=evaluation_ids)
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value(now)
    if held is not None:
        # Still theirs: nobody took it, even if its lock ran out. Renew the lock, unless
        # another grader took the expired slot since we read it.
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {SLOTS} SET assigned_at = %s "
                "WHERE id = %s AND grader_id = %s AND grade IS NULL",
                [stamp, held.id, user.id],
            )
            renewed = cursor.rowcount
        if renewed == 1:
            held.assigned_at = now
            return held
    cutoff = connection.ops.adapt_datetimefield_value(lock_cutoff(now))
    with connection.cursor() as cursor:
        cursor.execute(
            _candidate_sql(len(evaluation_ids)),
            {
                "user": user.id,
                "cutoff": cutoff,
                "window": STARTED_WINDOW - 1,
                **{f"e{n}": evaluation_id for n, evaluation_id in enumerate(evaluation_ids)},
            },
        )
        row = cursor.fetchone()
        candidate = row[0] if row else None
        if candidate is None:
            return None
        # The conditional UPDATE is the claim: it succeeds for one claimer only.
        cursor.execute(
            f"UPDATE {SLOTS} SET grader_id = %s, assigned_at = %s "
            "WHERE id = %s AND grade IS NULL AND (grader_id IS NULL OR assigned_at < %s)",
            [user.id, stamp, candidate, cutoff],
        )
        claimed = cursor.rowcount
    return candidate if claimed == 1 else _LOST_RACE


def _candidate_sql(evaluations: int) -> str:
    """One statement that finds the first slot the grader may take, locked for the claim.

    For each evaluation in turn (oldest first) it tries three searches, and answers the
    first slot found; PostgreSQL runs a search only when all before it found nothing, so
    one statement costs what the searches it needs cost, whatever the number of
    evaluations (a search per evaluation used to be a query per evaluation).

    Each search walks the queue's index (slot_queue_order); the walk passes over slots
    the grader may not take. A grader far ahead of the others has a slot on every
    started snapshot near the front, and one search over the whole queue walked past all
    of them on every claim (42 ms behind a lead of 10,000 snapshots, against 2 ms). So
    the started snapshots are searched only in a window at the front, then the fresh
    ones; only when both have nothing for the grader is the whole queue searched, which
    may find a started snapshot beyond the window. Such a grader therefore starts fresh
    snapshots before joining started ones far back: the others finish those.

    The window ends with the keyword of its STARTED_WINDOW-th slot: a bound on
    keyword_position is a range on the index, so the walk stops there whatever plan the
    database picks. The "grader already has a slot of this snapshot" and "skipped it"
    tests are subqueries fenced with OFFSET 0, so PostgreSQL runs them per slot walked,
    as a lookup in a unique index; unfenced, it turned them into anti-joins whose plan
    follows the statistics, and with statistics from before the grading began it scanned
    every assigned slot for each slot walked.
    """
    features = connection.features
    key = (connection.vendor, evaluations)
    sql = _CANDIDATE_SQL.get(key)
    if sql is not None:
        return sql
    skip_locked = wait = ""
    if features.has_select_for_update:
        # PostgreSQL: concurrent claimers pass over each other's candidates. The last
        # search waits for locked slots instead of skipping them: not every locked slot
        # is being claimed (a grade starting its snapshot locks that snapshot's free
        # slots for a moment), and skipping those would tell the grader there is nothing
        # left while there is.
        wait = " FOR UPDATE OF s"
        skip_locked = wait + (" SKIP LOCKED" if features.has_select_for_update_skip_locked else "")
    order = 'ORDER BY s.snapshot_started DESC, s.keyword_position, s.snapshot_position, s."index"'
    searches = []
    for n in range(evaluations):
        open_to_user = (
            f"s.evaluation_id = %(e{n})s AND s.grade IS NULL "
            "AND (s.grader_id IS NULL OR s.assigned_at < %(cutoff)s) "
            f"AND NOT EXISTS (SELECT 1 FROM {SLOTS} o WHERE o.snapshot_id = s.snapshot_id "
            "AND o.grader_id = %(user)s LIMIT 1 OFFSET 0) "
            f"AND NOT EXISTS (SELECT 1 FROM {SKIPS} k WHERE k.snapshot_id = s.snapshot_id "
            "AND k.user_id = %(user)s LIMIT 1 OFFSET 0)"
        )
        window_end = (
            f"(SELECT w.keyword_position FROM {SLOTS} w WHERE w.evaluation_id = %(e{n})s "
            "AND w.grade IS NULL AND w.snapshot_started "
            'ORDER BY w.snapshot_started DESC, w.keyword_position, w.snapshot_position, w."index" '
            "LIMIT 1 OFFSET %(window)s)"
        )
        searches += [
            f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_user} AND s.snapshot_started "
            f"AND s.keyword_position <= COALESCE({window_end}, {ALL_KEYWORDS}) "
            f"{order} LIMIT 1{skip_locked})",
            f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_user} AND NOT s.snapshot_started "
            f"{order} LIMIT 1{skip_locked})",
            f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_user} {order} LIMIT 1{wait})",
        ]
    sql = f"SELECT COALESCE({', '.join(searches)})"
    _CANDIDATE_SQL[key] = sql
    return sql


_CANDIDATE_SQL: dict[tuple[str, int], str] = {}


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
