"""Writes of the grader's work: grading a slot and a lead's reset of one.

Each change of a grade marks the slot's keyword for recomputation in the same
transaction; the metrics follow on a worker, and grading never waits for them.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.accounts.models import Membership
from apps.core.errors import InvalidInput, InvalidState, NotAllowed
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip, Status
from apps.scoring import engine
from apps.scoring.services import (
    KEYWORDS,
    MARK_SET,
    UNSCORED_CHANGES,
    keyword_mark_for_scoring,
    queue_recompute_after_mark,
)

from . import queue_sql
from .selectors import (
    EVALUATIONS,
    SLOT_WITH_ALL,
    SLOTS,
    evaluation_ids_open_to,
    lock_cutoff,
    open_evaluations_parameters,
    slot_for_display,
    start_of_today,
)

# How often a claim is tried again after losing a race for the chosen slot.
CLAIM_ATTEMPTS = 5
# How long a claim keeps looking while every slot left for the grader is locked by others'
# work in progress (a claim or a grade that has not committed yet).
CLAIM_PATIENCE_SECONDS = 5.0
# The first key of the advisory lock a grader's claim takes on PostgreSQL (the second is
# the membership id): a number of its own, so no other advisory lock shares the key.
CLAIM_LOCK_SPACE = 7_310_001
# How many ungraded slots of started snapshots a claim looks at before fresh snapshots
# (see queue_sql.pick_sql).
STARTED_WINDOW = 200


def check_grade(grade: Any, evaluation: Evaluation) -> int:
    """The grade, if it is one of the evaluation's scale; InvalidInput otherwise. (Also
    what the admin's slot form checks before the grade is recorded.)"""
    scale = evaluation.grading_scale
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in scale.grades:
        shown = ", ".join(str(g) for g in scale.grades)
        raise InvalidInput(
            {"grade": f"{grade!r} is not a {scale.name} grade ({shown})"}, field="grade"
        )
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
        raise NotAllowed(NOT_YOURS)
    if slot.evaluation.status != Status.ACTIVE:
        raise InvalidState("the evaluation is not open for grading")
    check_grade(grade, slot.evaluation)
    now = timezone.now()
    if connection.vendor == "postgresql":
        graded, _mode = _grade_in_one_statement(
            user=user,
            team_id=slot.evaluation.team_id,
            slot_id=slot_id,
            grade=grade,
            reason=reason,
            now=now,
            scales=[slot.evaluation.scale],
        )
        if not graded:  # taken over, or the evaluation closed, since it was read
            raise NotAllowed(NOT_YOURS)
    else:
        _grade_step_by_step(
            [grade, reason, connection.ops.adapt_datetimefield_value(now), slot_id, user.id],
            slot.keyword_id,
            None if slot.snapshot_started else slot.snapshot_id,
        )
    slot.grade, slot.reason, slot.graded_at = grade, reason, now
    slot.snapshot_started = True
    return slot


def slot_grade_at_once(
    *, user: Any, team_id: int, slot_id: int, grade: Any, reason: str = ""
) -> bool:
    """slot_grade in one statement on PostgreSQL, every rule checked by the database: the
    grader's own slot of an active evaluation of the team, a grade of the evaluation's
    scale (see _grade_in_one_statement).

    False when a rule does not hold (nothing is written) or on another database: the
    caller then reads the slot and takes slot_grade, which says which rule failed.
    """
    if connection.vendor != "postgresql" or type(grade) is not int:
        return False
    scales = [name for name, scale in engine.SCALES.items() if scale.is_grade(grade)]
    graded, _mode = _grade_in_one_statement(
        user=user,
        team_id=team_id,
        slot_id=slot_id,
        grade=grade,
        reason=reason,
        now=timezone.now(),
        scales=scales,
    )
    return graded


def _grade_in_one_statement(
    *,
    user: Any,
    team_id: int,
    slot_id: int,
    grade: int,
    reason: str,
    now: datetime,
    scales: list[str],
    claim_lock_of: Membership | None = None,
) -> tuple[bool, str]:
    """PostgreSQL: grade the slot and mark its keyword in one statement, which is a
    transaction of its own (no BEGIN and COMMIT round trips), when the slot is the
    grader's, of an active evaluation of the team on one of these scales. The first grade
    of a snapshot starts it in the same statement (see _grade_sql).

    With `claim_lock_of`, the statement also takes that grader's claim lock (as
    _one_claim_at_a_time does) before it touches a row, whether it grades or not.
    Whether it graded, and the plan cache mode to restore when the lock is let go."""
    parameters = {
        "slot": slot_id,
        "user": user.id,
        "team": team_id,
        "active": Status.ACTIVE.value,
        "scales": scales,
        "grade": grade,
        "reason": reason,
        "now": connection.ops.adapt_datetimefield_value(now),
    }
    if claim_lock_of is not None:
        parameters.update(space=CLAIM_LOCK_SPACE, membership=claim_lock_of.id)
    with connection.cursor() as cursor:
        statement = GRADE_SQL if claim_lock_of is None else GRADE_AND_CLAIM_LOCK_SQL
        cursor.execute(statement, parameters)
        keyword_id, unscored, plan_cache_mode = cursor.fetchone()
    if unscored is None:
        return False, plan_cache_mode
    queue_recompute_after_mark(keyword_id=keyword_id, unscored_changes=unscored)
    return True, plan_cache_mode


NOT_YOURS = "this result is not yours to grade (its time ran out and it moved on)"


def _grade_sql(*, claim_lock: bool) -> str:
    """PostgreSQL, the whole grade in one statement.

    `slot` is the slot if every rule holds. A snapshot's first grade starts it: `locked`
    locks its slots not yet started, in id order, before any is written (graded waits for
    it): two graders of one snapshot that each wrote their own slot first and then waited
    for the other's used to deadlock. `graded` writes the grade if the slot is still the
    grader's (a slot taken over meanwhile is not graded by us), `started` starts the
    other slots only then, `marked` marks the keyword. With `claim_lock`, `claims` takes
    the grader's claim lock (see _one_claim_at_a_time) before any row is read.

    Its row: the keyword, its changes not scored yet (None: nothing was graded), and the
    plan cache mode to restore when the claim lock is let go (None: no lock taken).
    """
    claims = wait_for_claims = ""
    mode = "NULL"
    if claim_lock:
        claims = (
            "claims AS MATERIALIZED (SELECT current_setting('plan_cache_mode') AS mode, "
            "set_config('plan_cache_mode', 'force_generic_plan', false), "
            "pg_advisory_lock(%(space)s::integer, %(membership)s::integer)), "
        )
        wait_for_claims = " AND (SELECT count(*) FROM claims) = 1"
        mode = "(SELECT mode FROM claims)"
    return (
        f"WITH {claims}slot AS MATERIALIZED "
        "(SELECT s.id, s.keyword_id, s.snapshot_id, s.snapshot_started "
        f"FROM {SLOTS} s JOIN {EVALUATIONS} e ON e.id = s.evaluation_id "
        "WHERE s.id = %(slot)s AND s.grader_id = %(user)s AND e.team_id = %(team)s "
        f"AND e.status = %(active)s AND e.scale = ANY(%(scales)s){wait_for_claims}), "
        f"locked AS MATERIALIZED (SELECT l.id FROM {SLOTS} l "
        "WHERE l.snapshot_id = (SELECT snapshot_id FROM slot) "
        "AND NOT (SELECT snapshot_started FROM slot) AND NOT l.snapshot_started "
        "ORDER BY l.id FOR UPDATE), "
        f"graded AS (UPDATE {SLOTS} g SET grade = %(grade)s, reason = %(reason)s, "
        "graded_at = %(now)s, snapshot_started = TRUE FROM slot "
        "WHERE g.id = slot.id AND g.grader_id = %(user)s "
        "AND (SELECT count(*) FROM locked) >= 0 RETURNING g.keyword_id), "
        f"started AS (UPDATE {SLOTS} t SET snapshot_started = TRUE FROM locked "
        "WHERE t.id = locked.id AND t.id <> %(slot)s AND EXISTS (SELECT 1 FROM graded)), "
        f"marked AS (UPDATE {KEYWORDS} k SET {MARK_SET} FROM graded "
        f"WHERE k.id = graded.keyword_id RETURNING {UNSCORED_CHANGES} AS unscored) "
        f"SELECT (SELECT keyword_id FROM slot), (SELECT unscored FROM marked), {mode}"
    )


GRADE_SQL = _grade_sql(claim_lock=False)
GRADE_AND_CLAIM_LOCK_SQL = _grade_sql(claim_lock=True)


def _grade_step_by_step(
    grading: list[Any], keyword_id: int, unstarted_snapshot: int | None
) -> None:
    """SQLite, in the grade's transaction: start the snapshot if it is not started yet,
    write the grade (grade, reason, graded at, slot, grader) if the slot is still the
    grader's, and mark its keyword. (The transaction holds the database's write lock.)"""
    with transaction.atomic():
        if unstarted_snapshot:
            _mark_snapshot_started(unstarted_snapshot)
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {SLOTS} SET grade = %s, reason = %s, graded_at = %s "
                "WHERE id = %s AND grader_id = %s",
                grading,
            )
            if cursor.rowcount != 1:
                raise NotAllowed(NOT_YOURS)
        keyword_mark_for_scoring(keyword_id=keyword_id)


def slot_reset(*, slot_id: int) -> None:
    """A lead clears a slot: no grade, no grader, so the queue offers it again.

    When it held its snapshot's only grade, the snapshot is fresh again: the queue no
    longer puts it before the snapshots nobody has graded.
    """
    snapshot_id, keyword_id = FeedbackSlot.objects.values_list("snapshot_id", "keyword_id").get(
        id=slot_id
    )
    with transaction.atomic():
        # All the snapshot's slots, locked in id order as a grade locks them
        # (_mark_snapshot_started), so a reset and a grade on one snapshot cannot deadlock.
        siblings = list(
            FeedbackSlot.objects.select_for_update()
            .filter(snapshot_id=snapshot_id)
            .order_by("id")
            .values_list("id", "grade")
        )
        FeedbackSlot.objects.filter(id=slot_id).update(
            grade=None,
            reason="",
            graded_at=None,
            grader=None,
            external_grader="",
            assigned_at=None,
        )
        if all(grade is None for other, grade in siblings if other != slot_id):
            FeedbackSlot.objects.filter(snapshot_id=snapshot_id).update(snapshot_started=False)
        keyword_mark_for_scoring(keyword_id=keyword_id)


def slot_record_grade(
    *, slot_id: int, grade: int, grader: Any = None, grader_name: str = "", reason: str = ""
) -> None:
    """Record a grade given outside the queue (an import, the demo data).

    The grader is a user, or a name for a grader who has no account here.
    """
    slot = FeedbackSlot.objects.select_related("evaluation").get(id=slot_id)
    check_grade(grade, slot.evaluation)
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
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(START_SNAPSHOT_LOCKED_SQL, [snapshot_id])
        else:  # SQLite: the transaction holds the database's write lock already
            cursor.execute(START_SNAPSHOT_SQL, [snapshot_id])


START_SNAPSHOT_SQL = (
    f"UPDATE {SLOTS} SET snapshot_started = TRUE WHERE snapshot_id = %s AND NOT snapshot_started"
)
# The CTE is materialised before the UPDATE runs, so every row is locked, in id order,
# before any is written.
START_SNAPSHOT_LOCKED_SQL = (
    f"WITH locked AS MATERIALIZED (SELECT id FROM {SLOTS} WHERE snapshot_id = %s "
    "AND NOT snapshot_started "
    f"ORDER BY id FOR UPDATE) UPDATE {SLOTS} SET snapshot_started = TRUE "
    "WHERE id IN (SELECT id FROM locked)"
)


# --- The queue --------------------------------------------------------------------------


# The dashboard counts the results waiting for a grader up to this many, then says "or more".
WAITING_COUNTED_UP_TO = 1000
MOST_SLOTS_PER_SNAPSHOT = 3  # the largest strategy


@dataclass(frozen=True)
class Waiting:
    """How many results the queue could give the grader now; `more`: at least `count`."""

    count: int
    more: bool = False


def results_waiting_for(membership: Membership) -> Waiting:
    """The results waiting for the grader in the evaluations open to them: the one they
    hold, and each snapshot they could claim (free slot, not theirs already, not skipped).
    One grader grades a snapshot once, so its free slots count once. Counting stops at
    WAITING_COUNTED_UP_TO results: past that the dashboard says "or more", and a pool
    of a million slots costs what one of a thousand does."""
    # One slot more than that many results can have: a walk that reads them all has
    # found more than WAITING_COUNTED_UP_TO results, one that stops short found them all.
    walk = WAITING_COUNTED_UP_TO * MOST_SLOTS_PER_SNAPSHOT + 1
    parameters = _claim_parameters(membership.user)
    parameters.update(open_evaluations_parameters(membership), walk=walk)
    count = 0
    with connection.cursor() as cursor:
        cursor.execute(queue_sql.held_sql(), parameters)
        count += int(cursor.fetchone()[0])
        for started in (False, True):
            cursor.execute(queue_sql.waiting_sql(started=started), parameters)
            count += cursor.fetchone()[0]
            if count > WAITING_COUNTED_UP_TO:
                return Waiting(WAITING_COUNTED_UP_TO, more=True)
    return Waiting(count)


@dataclass(frozen=True)
class NextSlot:
    """What the grader is given next (None: nothing left for them) and how many grades
    they gave today, when the claim counted them too (PostgreSQL; None elsewhere)."""

    slot: FeedbackSlot | None
    grades_today: int | None = None


def slot_claim_next(
    *, membership: Membership, evaluation: Evaluation | None = None
) -> FeedbackSlot | None:
    """The grader's next result: the slot they hold, else a newly claimed free slot.

    Without `evaluation`, every active evaluation whose tags the grader holds is a
    source, oldest first. A lead may name one evaluation of the team (tags aside).
    None means there is nothing left for this grader.
    """
    return slot_claim_next_for_card(membership=membership, evaluation=evaluation).slot


def slot_claim_next_for_card(
    *, membership: Membership, evaluation: Evaluation | None = None
) -> NextSlot:
    """slot_claim_next, with the count of the grader's grades today that the card shows:
    on PostgreSQL the claim reads it in the same statement."""
    if evaluation is not None and not _open_queue(membership, evaluation):
        raise InvalidState("this evaluation is not open for grading")
    if connection.vendor != "postgresql":
        return _claim_until_given(membership, evaluation)
    with _one_claim_at_a_time(membership):
        return _claim_until_given(membership, evaluation)


def slot_grade_and_claim_next(
    *,
    membership: Membership,
    slot_id: int,
    grade: Any,
    reason: str = "",
    evaluation: Evaluation | None = None,
) -> NextSlot | None:
    """The grading page's answer to a grade, on PostgreSQL: slot_grade_at_once, then the
    grader's next slot as slot_claim_next_for_card gives it (the empty state when a lead's
    queue ended with this grade), the grader's claim lock taken by the grade's statement.

    None when the grade's statement did not apply (nothing written; see
    slot_grade_at_once): the caller takes slot_grade, then claims.
    """
    if connection.vendor != "postgresql" or type(grade) is not int:
        return None
    scales = [name for name, scale in engine.SCALES.items() if scale.is_grade(grade)]
    try:
        graded, plan_cache_mode = _grade_in_one_statement(
            user=membership.user,
            team_id=membership.team_id,
            slot_id=slot_id,
            grade=grade,
            reason=reason,
            now=timezone.now(),
            scales=scales,
            claim_lock_of=membership,
        )
    except Exception:
        _let_claims_go(membership, None)  # the lock may have been taken; the mode was not
        raise
    with _one_claim_at_a_time(membership, taken_with_mode=plan_cache_mode):
        if not graded:
            return None
        if evaluation is not None and not _open_queue(membership, evaluation):
            return NextSlot(None)
        return _claim_until_given(membership, evaluation)


def _open_queue(membership: Membership, evaluation: Evaluation) -> bool:
    """A lead's queue of one evaluation: of their team, and open for grading."""
    return evaluation.team_id == membership.team_id and evaluation.status == Status.ACTIVE


def _claim_until_given(membership: Membership, evaluation: Evaluation | None) -> NextSlot:
    """Claim attempts until one answers, on PostgreSQL under the grader's claim lock."""
    if connection.vendor == "postgresql":
        claim_once = partial(_claim_in_one_statement, membership, evaluation)
        # One statement is a transaction of its own; inside a caller's transaction a
        # savepoint lets a failed attempt be tried again.
        attempt = transaction.atomic if connection.in_atomic_block else nullcontext
    else:  # SQLite: a transaction takes the database's write lock when it begins
        evaluation_ids = [evaluation.id] if evaluation else evaluation_ids_open_to(membership)
        if not evaluation_ids:
            return NextSlot(None)
        claim_once = partial(_claim_step_by_step, membership.user, evaluation_ids)
        attempt = transaction.atomic
    races, pause, give_up_at = 0, 0.005, time.monotonic() + CLAIM_PATIENCE_SECONDS
    while races < CLAIM_ATTEMPTS:
        try:
            with attempt():
                outcome = claim_once()
        except IntegrityError:
            # The grader got another slot of this snapshot at the same moment (a recorded
            # grade): the attempt is rolled back and tried again, and the next search no
            # longer offers this snapshot.
            outcome = _LOST_RACE
        if isinstance(outcome, NextSlot):
            return outcome
        if outcome is _LOST_RACE:
            races += 1
        elif time.monotonic() < give_up_at:  # _ALL_LOCKED: look again in a moment
            time.sleep(pause)
            pause = min(2 * pause, 0.1)
        else:
            break
    return NextSlot(None)


# A claim attempt's answers when another claim took the slot it picked, and when every
# slot left for the grader was locked by others' work in progress: try again.
_LOST_RACE = object()
_ALL_LOCKED = object()


def _claim_parameters(user: Any) -> dict[str, Any]:
    now = timezone.now()
    return {
        "user": user.id,
        "now": connection.ops.adapt_datetimefield_value(now),
        "cutoff": connection.ops.adapt_datetimefield_value(lock_cutoff(now)),
        "window": STARTED_WINDOW - 1,
    }


def _claim_in_one_statement(membership: Membership, evaluation: Evaluation | None) -> Any:
    """PostgreSQL: one attempt, one statement (see queue_sql.claim_sql)."""
    parameters = _claim_parameters(membership.user)
    parameters.update(open_evaluations_parameters(membership), today=start_of_today())
    if evaluation is not None:
        parameters["evaluation"] = evaluation.id
    lead_queue = evaluation is not None
    with connection.cursor() as cursor:
        cursor.execute(queue_sql.claim_sql(lead_queue), parameters)
        picked, grades_today, *taken = cursor.fetchone()
        if picked is None:
            cursor.execute(queue_sql.locked_left_sql(lead_queue), parameters)
            return _ALL_LOCKED if cursor.fetchone()[0] else NextSlot(None, grades_today)
    if taken[0] is None:
        return _LOST_RACE
    return NextSlot(SLOT_WITH_ALL.slot(taken), grades_today)


def _claim_step_by_step(user: Any, evaluation_ids: list[int]) -> Any:
    """SQLite: one attempt as a pick, a take and a read for the card."""
    parameters = _claim_parameters(user)
    parameters.update({f"e{n}": evaluation_id for n, evaluation_id in enumerate(evaluation_ids)})
    with connection.cursor() as cursor:
        cursor.execute(queue_sql.pick_sql(len(evaluation_ids)), parameters)
        picked = cursor.fetchone()[0]
        if picked is None:
            return NextSlot(None)
        cursor.execute(queue_sql.TAKE_SQL, {**parameters, "slot": picked})
        taken = cursor.rowcount
    return NextSlot(slot_for_display(picked)) if taken == 1 else _LOST_RACE


@contextmanager
def _one_claim_at_a_time(
    membership: Membership, *, taken_with_mode: str | None = None
) -> Iterator[None]:
    """PostgreSQL: serialise the grader's claims, and have the claim's statement run with
    the plan PostgreSQL prepared once for any grader. `taken_with_mode`: the lock was
    taken already (by the grade's statement), with this plan cache mode to restore.

    A double click used to claim a second slot (the first claim was not committed when
    the second looked for a held one), and a storm of clicks ran out of attempts on the
    one-slot-per-snapshot constraint and answered "nothing left" while work remained. The
    lock is an advisory lock of the connection's session, taken and let go by one
    statement each: it writes nothing (a row lock on the membership wrote its row on every
    claim) and needs no transaction around the claim, which is one statement.

    Left to choose, PostgreSQL planned the claim's statement afresh on every claim (its
    estimate of the generic plan was too high), which cost twice what running it cost.
    """
    plan_cache_mode = taken_with_mode
    if plan_cache_mode is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('plan_cache_mode'), "
                "set_config('plan_cache_mode', 'force_generic_plan', false), "
                "pg_advisory_lock(%s::integer, %s::integer)",
                [CLAIM_LOCK_SPACE, membership.id],
            )
            plan_cache_mode = cursor.fetchone()[0]
    try:
        yield
    finally:
        _let_claims_go(membership, plan_cache_mode)


def _let_claims_go(membership: Membership, plan_cache_mode: str | None) -> None:
    """Release the grader's claim lock, and restore the plan cache mode (None: unchanged)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_unlock(%s::integer, %s::integer), "
            "set_config('plan_cache_mode', COALESCE(%s, current_setting('plan_cache_mode')), "
            "false)",
            [CLAIM_LOCK_SPACE, membership.id, plan_cache_mode],
        )


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
