"""The grader's queue: claim the next result, count the results waiting.

A claim gives the grader the slot they hold, else takes a free one with a conditional
UPDATE (the statements are sql.py's). Grading it is judgements.py's.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.accounts.models import Membership
from apps.core.errors import InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Status

from . import sql
from .selectors import (
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
# (see sql.pick_sql).
STARTED_WINDOW = 200


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
        cursor.execute(sql.held_sql(), parameters)
        count += int(cursor.fetchone()[0])
        for started in (False, True):
            cursor.execute(sql.waiting_sql(started=started), parameters)
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
    # SQLite writes one transaction at a time, so needs no claim lock; on PostgreSQL its
    # fixed plan saves 1.7 ms of the database per claim (grading_http_bench.py, 2026-11-21).
    if connection.vendor != "postgresql":
        return _claim_until_given(membership, evaluation)
    with _one_claim_at_a_time(membership):
        return _claim_until_given(membership, evaluation)


def _open_queue(membership: Membership, evaluation: Evaluation) -> bool:
    """A lead's queue of one evaluation: of their team, and open for grading."""
    return evaluation.team_id == membership.team_id and evaluation.status == Status.ACTIVE


def _claim_until_given(membership: Membership, evaluation: Evaluation | None) -> NextSlot:
    """Claim attempts until one answers, on PostgreSQL under the grader's claim lock."""
    # One statement (an UPDATE inside a WITH, which SQLite lacks): 4.4x faster than the
    # ORM's pick, take and read (raw_sql_bench.py, 2026-11-25).
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
    """PostgreSQL: one attempt, one statement (see sql.claim_sql)."""
    parameters = _claim_parameters(membership.user)
    parameters.update(open_evaluations_parameters(membership), today=start_of_today())
    if evaluation is not None:
        parameters["evaluation"] = evaluation.id
    lead_queue = evaluation is not None
    with connection.cursor() as cursor:
        cursor.execute(sql.claim_sql(lead_queue), parameters)
        picked, grades_today, *taken = cursor.fetchone()
        if picked is None:
            cursor.execute(sql.locked_left_sql(lead_queue), parameters)
            return _ALL_LOCKED if cursor.fetchone()[0] else NextSlot(None, grades_today)
    if taken[0] is None:
        return _LOST_RACE
    return NextSlot(sql.SLOT_WITH_ALL.slot(taken), grades_today)


def _claim_step_by_step(user: Any, evaluation_ids: list[int]) -> Any:
    """SQLite: one attempt as a pick, a take and a read for the card."""
    parameters = _claim_parameters(user)
    parameters.update({f"e{n}": evaluation_id for n, evaluation_id in enumerate(evaluation_ids)})
    with connection.cursor() as cursor:
        cursor.execute(sql.pick_sql(len(evaluation_ids)), parameters)
        picked = cursor.fetchone()[0]
        if picked is None:
            return NextSlot(None)
        cursor.execute(sql.TAKE_SQL, {**parameters, "slot": picked})
        taken = cursor.rowcount
    return NextSlot(slot_for_display(picked)) if taken == 1 else _LOST_RACE


@contextmanager
def _one_claim_at_a_time(membership: Membership) -> Iterator[None]:
    """PostgreSQL: serialise the grader's claims, and have the claim's statement run with
    the plan PostgreSQL prepared once for any grader.

    A double click used to claim a second slot (the first claim was not committed when
    the second looked for a held one), and a storm of clicks ran out of attempts on the
    one-slot-per-snapshot constraint and answered "nothing left" while work remained. The
    lock is an advisory lock of the connection's session, taken and let go by one
    statement each: it writes nothing (a row lock on the membership wrote its row on every
    claim) and needs no transaction around the claim, which is one statement.

    Left to choose, PostgreSQL planned the claim's statement afresh on every claim (its
    estimate of the generic plan was too high), which cost twice what running it cost.
    """
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


def _let_claims_go(membership: Membership, plan_cache_mode: str) -> None:
    """Release the grader's claim lock, and restore the plan cache mode."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_unlock(%s::integer, %s::integer), "
            "set_config('plan_cache_mode', %s, false)",
            [CLAIM_LOCK_SPACE, membership.id, plan_cache_mode],
        )
