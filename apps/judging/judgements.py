"""The one place a judgement is written.

Whoever gives it (a grader on the grading page, a lead resetting a slot or editing it
in the admin, the demo data, reuse of earlier grades, or an AI judge), a
judgement of a feedback slot is recorded, changed, cleared or skipped by `slot_judge`,
many untouched slots at once by `slots_judge_in_bulk` (reuse), and many slots one grader
holds by `slots_judge_held` (an AI judge's call). Nothing else writes a slot's grade columns
(grade, reason, graded_at, grader, external_grader). These functions enforce the
rules: the team, the grader's hold on the slot, an evaluation open for grading, a grade
of the evaluation's scale. In the same transaction they mark the keyword for
recomputation (apps.scoring.pipeline), which queues the metrics once it commits.

An import creates its slots already graded, with the rest of the evaluation, through
the bulk entry for new slots (new_slots.py), under the same rules.

Locks: a judgement that starts a result (its first grade) or clears one locks every
slot of the result, in id order, before it writes one. Two graders of one result who
each wrote their own slot first and then waited for the other's (starting the result)
used to deadlock. A grade on a started result locks only its own slot, by writing it:
the others' graders are not kept waiting. A grader's grade of a started result they
hold, the most common judgement, is that write alone, its scale checked after it (in
the same transaction: a grade off the scale rolls it back).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from apps import engine
from apps.core.bulk import bulk_set
from apps.core.errors import InvalidInput, InvalidState, NotAllowed, NotFound
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip, Source, Status
from apps.evaluations.scales import scale_of
from apps.scoring import pipeline

from . import sql
from .selectors import lock_cutoff

NOT_YOURS = "this result is not yours to grade (its time ran out and it moved on)"
NOT_YOURS_TO_SKIP = "this result is not yours to skip"


class Action(StrEnum):
    GRADE = "grade"  # record or change the slot's grade
    CLEAR = "clear"  # no grade, no grader: the queue offers the slot again
    SKIP = "skip"  # the grader cannot judge it: released, never offered to them again
    # A grader takes back their last grade: the grade it replaced (given), or none, the
    # result held by them again to grade anew.
    UNDO = "undo"


class GiverKind(StrEnum):
    # A person grading a slot they hold from the queue (the grading page; an AI judge).
    GRADER = "grader"
    # A lead on the team's pages or an administrator: any slot, the grader it names kept.
    LEAD = "lead"
    # A grade given outside the queue, by a person here or a name (the demo data).
    RECORDED = "recorded"


@dataclass(frozen=True)
class Giver:
    """Who gives a judgement, which decides the rules it is held to and the source the
    grade records (a person, unless `judge_source` names an AI judge's: sources.py)."""

    kind: GiverKind
    user: Any = None
    name: str = ""  # a grader with no account here
    judge_source: int | None = None  # the JudgementSource of an AI judge's grades

    @classmethod
    def grader(cls, user: Any) -> "Giver":
        return cls(GiverKind.GRADER, user)

    @classmethod
    def judge(cls, user: Any, source_id: int) -> "Giver":
        """An AI judge grading the slots it holds, as its own grader user."""
        return cls(GiverKind.GRADER, user, judge_source=source_id)

    @classmethod
    def judge_recorded(cls, user: Any, source_id: int) -> "Giver":
        """An AI judge's grade given outside its queue (a chain's next judge)."""
        return cls(GiverKind.RECORDED, user, judge_source=source_id)

    @classmethod
    def lead(cls, user: Any = None) -> "Giver":
        return cls(GiverKind.LEAD, user)

    @classmethod
    def recorded(cls, user: Any = None, name: str = "") -> "Giver":
        return cls(GiverKind.RECORDED, user, name)


def check_grade(grade: Any, scale: engine.Scale) -> int:
    """The grade, if it is one of the scale's; InvalidInput otherwise. (Also what the
    admin's slot form checks before the grade is recorded.)"""
    if not scale.is_grade(grade):
        raise InvalidInput(
            {"grade": f"{grade!r} is not a {scale.name} grade {scale.describe_grades()}"},
            field="grade",
        )
    return int(grade)


@dataclass(frozen=True)
class _ReadSlot:
    """A slot of the snapshot being judged, as the writer read it (locked or not)."""

    id: int
    keyword_id: int
    snapshot_id: int
    grader_id: int | None
    grade: int | None
    source: str
    snapshot_started: bool
    team_id: int
    status: str
    scale: engine.Scale


# A grade's reason, or a grader's note with it, and a skip's reason: long enough for a
# paragraph, bounded like every input.
REASON_MAX_LENGTH = 2000


def check_reason(reason: str) -> str:
    """The reason trimmed; InvalidInput naming `reason` when it is longer than the bound."""
    reason = (reason or "").strip()
    if len(reason) > REASON_MAX_LENGTH:
        raise InvalidInput(
            {"reason": f"at most {REASON_MAX_LENGTH} characters ({len(reason)} given)"},
            field="reason",
        )
    return reason


def slot_judge(
    *,
    slot_id: int,
    giver: Giver,
    action: Action = Action.GRADE,
    grade: Any = None,
    reason: str = "",
    team_id: int | None = None,
) -> engine.Scale:
    """Record (or change) a grade (with its reason: a grader's optional note), clear a
    slot, skip it (with its reason), or undo a grader's grade of it.

    `team_id`: the team the request acts for (pages and the API always give it); a slot
    of another team is NotFound. A grader must hold the slot, in an evaluation open for
    grading; only leads clear. Returns the scale of the slot's evaluation (the grading
    page names the grade it confirms with it).
    """
    reason = check_reason(reason)
    with transaction.atomic():
        locked = False
        by_person = giver.kind == GiverKind.GRADER and giver.judge_source is None
        if action == Action.GRADE and by_person and team_id is not None and type(grade) is int:
            graded = _grade_started_result(slot_id, giver, grade, reason, team_id)
            if graded is not None:
                keyword_id, scale = graded
                pipeline.grades_changed(keyword_ids=[keyword_id])
                return scale
            # Not a started result the grader holds: mostly a result's first grade, which
            # locks its slots (the read below says which rule fails otherwise).
            locked = True
        if action == Action.UNDO:
            return _undo(slot_id, giver, grade, team_id)
        slot, siblings = _snapshot_of(slot_id, giver, team_id, lock=locked)
        if action == Action.SKIP:
            _skip(slot, giver, reason)
            return slot.scale
        _check_giver(slot, giver, action)
        if not locked and (action != Action.GRADE or not slot.snapshot_started):
            # Starting or clearing changes the other slots of the result too: lock them
            # all, in id order, and judge what they hold now.
            slot, siblings = _snapshot_of(slot_id, giver, team_id, lock=True)
            _check_giver(slot, giver, action)
        now = timezone.now()
        if action == Action.GRADE:
            changes = _grade_columns(slot, giver, check_grade(grade, slot.scale), reason, now)
            changes.update(_lead_takes_judges_grade(slot, siblings, giver))
            if not slot.snapshot_started:
                _set_started(slot.snapshot_id, started=True)
        else:
            changes = _cleared_columns()
            if all(s.grade is None for s in siblings if s.id != slot.id):
                # Its snapshot's only grade: fresh again, no longer before the fresh ones.
                _set_started(slot.snapshot_id, started=False)
        # A grader's slot is written only if it is still theirs: on a started result only
        # that row is locked, by this write, and its time may have run out meanwhile.
        holder = giver.user.id if giver.kind == GiverKind.GRADER else None
        if not _write(slot.id, changes, holder=holder):
            raise NotAllowed(NOT_YOURS)
        pipeline.grades_changed(keyword_ids=[slot.keyword_id])
    return slot.scale


def _grade_started_result(
    slot_id: int, giver: Giver, grade: int, reason: str, team_id: int
) -> tuple[int, engine.Scale] | None:
    """The common case in one statement: a grader's grade of a slot they hold on a
    result someone already started, in an open evaluation of the team, written, then
    its scale checked (a grade off the scale raises, and the caller's transaction rolls
    the write back). The slot's keyword, or None when the slot is not such a slot: the
    full path then reads it, and says which rule it breaks."""
    parameters = [grade, reason, _adapt(timezone.now()), slot_id, giver.user.id]
    with connection.cursor() as cursor:
        cursor.execute(sql.grade_held_started_slot(), [*parameters, Status.ACTIVE, team_id])
        row = cursor.fetchone()
    if row is None:
        return None
    keyword_id, scale_name, levels = row
    scale = _scale(scale_name, levels)
    check_grade(grade, scale)
    return int(keyword_id), scale


def _scale(name: str, levels: Any) -> engine.Scale:
    """An evaluation's scale from its columns (levels: JSON, as text on SQLite)."""
    return scale_of(name, json.loads(levels) if isinstance(levels, str) else levels)


def _snapshot_of(
    slot_id: int, giver: Giver, team_id: int | None, *, lock: bool
) -> tuple["_ReadSlot", list["_ReadSlot"]]:
    """The slot and every slot of its snapshot (locked in id order with `lock`);
    NotFound for a slot of another team, NotAllowed for a grader's missing slot."""
    siblings = _read_snapshot_of(slot_id, lock=lock)
    slot = next((s for s in siblings if s.id == slot_id), None)
    if slot is None or (team_id is not None and slot.team_id != team_id):
        if giver.kind == GiverKind.GRADER and team_id is None:
            raise NotAllowed(NOT_YOURS)
        raise NotFound("No such result.")
    return slot, siblings


def _read_snapshot_of(slot_id: int, *, lock: bool) -> list[_ReadSlot]:
    """Every slot of the slot's snapshot, with its evaluation's team, status and scale,
    with `lock` locked in id order (judging/sql.py)."""
    with connection.cursor() as cursor:
        cursor.execute(sql.snapshot_of_slot(lock=lock), [slot_id])
        rows = cursor.fetchall()
    if not rows:
        return []
    scale = _scale(*rows[0][-2:])
    return [
        _ReadSlot(id_, keyword, snapshot, grader, grade, source, started, team, status, scale)
        for id_, keyword, snapshot, grader, grade, source, started, team, status, _, _ in rows
    ]


def _write(slot_id: int, changes: dict[str, Any], *, holder: int | None) -> bool:
    """Write the slot's grade columns (column name -> value, already adapted), only if
    `holder` (when given) still holds it; whether it was written."""
    parameters = [*changes.values(), slot_id]
    if holder is not None:
        parameters.append(holder)
    with connection.cursor() as cursor:
        cursor.execute(sql.update_slot(tuple(changes), held=holder is not None), parameters)
        return cursor.rowcount == 1


def _check_giver(slot: _ReadSlot, giver: Giver, action: Action) -> None:
    if giver.kind == GiverKind.GRADER:
        if action != Action.GRADE or slot.grader_id != giver.user.id:
            raise NotAllowed(NOT_YOURS)
        if slot.status != Status.ACTIVE:
            raise InvalidState("the evaluation is not open for grading")
    elif action == Action.CLEAR and giver.kind != GiverKind.LEAD:
        raise NotAllowed("only a lead clears a grade")


# A grade written or cleared here is no longer one an import wrote or reuse copied: the
# leaderboard and a grader's count of today count it as the work of whoever gave it, and
# it was given on this result's content, so it is not stale.
GIVEN_HERE = {
    "reused": False,
    "imported": False,
    "stale": False,
    "content_fingerprint": "",
    "reused_from_id": None,
    "reused_from_list_id": None,
}


def _grade_columns(
    slot: _ReadSlot, giver: Giver, grade: int, reason: str, now: datetime
) -> dict[str, Any]:
    changes: dict[str, Any] = {
        "grade": grade,
        "reason": reason,
        "graded_at": _adapt(now),
        **GIVEN_HERE,
        "source": Source.JUDGE if giver.judge_source else Source.PERSON,
        "source_detail_id": giver.judge_source,
    }
    if giver.kind == GiverKind.RECORDED:
        changes.update(grader_id=giver.user.id if giver.user else None, external_grader=giver.name)
    if giver.kind != GiverKind.GRADER:
        # The time the named grader took the slot, as if from the queue.
        holder = giver.user if giver.kind == GiverKind.RECORDED else slot.grader_id
        changes["assigned_at"] = _adapt(now) if holder else None
    return changes


def _lead_takes_judges_grade(
    slot: _ReadSlot, siblings: list[_ReadSlot], giver: Giver
) -> dict[str, Any]:
    """A lead who edits an AI judge's grade becomes its giver: the grade is theirs (their
    account, or their name when they already hold another slot of the result)."""
    if giver.kind != GiverKind.LEAD or slot.source != Source.JUDGE or giver.user is None:
        return {}
    holds_another = any(s.grader_id == giver.user.id for s in siblings if s.id != slot.id)
    if holds_another:
        return {"grader_id": None, "external_grader": giver.user.get_username()}
    return {"grader_id": giver.user.id, "external_grader": ""}


def _adapt(moment: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(moment)


def _cleared_columns() -> dict[str, Any]:
    return {
        "grade": None,
        "reason": "",
        "graded_at": None,
        "grader_id": None,
        "external_grader": "",
        "assigned_at": None,
        **GIVEN_HERE,
        "source": "",
        "source_detail_id": None,
    }


def _set_started(snapshot_id: int, *, started: bool) -> None:
    """The queue offers the other slots of a snapshot with a grade before fresh ones."""
    with connection.cursor() as cursor:
        cursor.execute(sql.set_snapshot_started(), [started, snapshot_id])


def _skip(slot: _ReadSlot, giver: Giver, reason: str) -> None:
    held = giver.kind == GiverKind.GRADER and slot.grader_id == giver.user.id
    if not held or slot.grade is not None:
        raise NotAllowed(NOT_YOURS_TO_SKIP)
    released = FeedbackSlot.objects.filter(
        id=slot.id, grader_id=giver.user.id, grade__isnull=True
    ).update(grader=None, assigned_at=None)
    if not released:  # graded or taken over since it was read
        raise NotAllowed(NOT_YOURS_TO_SKIP)
    SnapshotSkip.objects.get_or_create(
        snapshot_id=slot.snapshot_id, user=giver.user, defaults={"reason": reason.strip()}
    )


NOTHING_TO_UNDO = "there is no grade of yours on this result to take back"


def _undo(slot_id: int, giver: Giver, earlier: Any, team_id: int | None) -> engine.Scale:
    """A grader takes back their grade of a slot they graded: with `earlier` (the grade
    it replaced) that grade is back, their note kept; without, the slot is ungraded and
    theirs again, its lock renewed, as if just claimed. Locks the result's slots first:
    taking back its only grade makes the result fresh again."""
    if giver.kind != GiverKind.GRADER or giver.judge_source is not None:
        raise NotAllowed("only the grader who gave a grade takes it back")
    slot, siblings = _snapshot_of(slot_id, giver, team_id, lock=True)
    if slot.grader_id != giver.user.id or slot.grade is None:
        raise NotAllowed(NOTHING_TO_UNDO)
    if slot.status != Status.ACTIVE:
        raise InvalidState("the evaluation is not open for grading")
    now = timezone.now()
    if earlier is None:
        changes = {**_cleared_columns(), "grader_id": giver.user.id, "assigned_at": _adapt(now)}
        if all(s.grade is None for s in siblings if s.id != slot.id):
            _set_started(slot.snapshot_id, started=False)
    else:
        changes = _grade_columns(slot, giver, check_grade(earlier, slot.scale), "", now)
        del changes["reason"]  # the note given with it is the one still there
    if not _write(slot.id, changes, holder=giver.user.id):
        raise NotAllowed(NOTHING_TO_UNDO)
    pipeline.grades_changed(keyword_ids=[slot.keyword_id])
    return slot.scale


def skip_undo(*, snapshot_id: int, giver: Giver, team_id: int) -> int | None:
    """Take back a grader's skip of a result: the queue may offer it to them again, and
    if one of its slots is free in an evaluation open for grading, they hold it now.
    The id of that slot, or None (every slot taken or graded meanwhile). NotFound when
    the grader has no skip of that result in the team."""
    if giver.kind != GiverKind.GRADER:
        raise NotAllowed("only the grader who skipped a result takes the skip back")
    with transaction.atomic():
        deleted, _ = SnapshotSkip.objects.filter(
            snapshot_id=snapshot_id,
            user=giver.user,
            snapshot__keyword__evaluation__team_id=team_id,
        ).delete()
        if not deleted:
            raise NotFound("No such skip.")
        now = timezone.now()
        cutoff = lock_cutoff(now)
        free = (
            FeedbackSlot.objects.filter(
                snapshot_id=snapshot_id, grade__isnull=True, evaluation__status=Status.ACTIVE
            )
            .filter(Q(grader__isnull=True) | Q(assigned_at__lt=cutoff))
            .order_by("id")
            .values_list("id", flat=True)
        )
        for slot_id in free[:1]:
            # Taken only if still free: another grader's claim may have taken it.
            taken = (
                FeedbackSlot.objects.filter(id=slot_id, grade__isnull=True)
                .filter(Q(grader__isnull=True) | Q(assigned_at__lt=cutoff))
                .update(grader=giver.user, assigned_at=now)
            )
            return slot_id if taken else None
    return None


@dataclass(frozen=True)
class BulkJudgement:
    """One grade of a bulk write: a slot, its grade and who gave it when."""

    slot_id: int
    grade: int
    reason: str = ""
    grader_id: int | None = None
    external_grader: str = ""
    graded_at: datetime | None = None
    # A copied grade: the fingerprint of the content it was given on, and whether that
    # differs from this result's (models.FeedbackSlot).
    content_fingerprint: str = ""
    stale: bool = False
    # Who gave it (models.Source, its JudgementSource), and for a copy the evaluation it
    # was copied from and the library's judgement list its original is in: a copy keeps
    # its original's source.
    source: str = Source.PERSON
    source_detail_id: int | None = None
    reused_from_id: int | None = None
    reused_from_list_id: int | None = None


def slots_judge_in_bulk(
    *, evaluation: Evaluation, judgements: Sequence[BulkJudgement], reused: bool = False
) -> int:
    """Grade many untouched slots of one evaluation at once (reuse of earlier grades),
    under the rules of slot_judge: slots of this evaluation, grades of its scale. Their
    snapshots start, their keywords are marked, and the evaluation is recomputed once
    the caller's transaction commits. `reused`: copied from earlier evaluations or the
    library's judgement lists (not new work for the leaderboard). Returns the number of
    slots graded."""
    if not judgements:
        return 0
    problems = _bulk_problems(evaluation, judgements)
    if problems:
        raise InvalidInput(problems)
    ids = [j.slot_id for j in judgements]
    with transaction.atomic():
        rows = list(
            FeedbackSlot.objects.select_for_update()
            .filter(id__in=ids, evaluation_id=evaluation.id)
            .order_by("id")
            .values_list("id", "snapshot_id", "keyword_id")
        )
        if len(rows) != len(set(ids)):
            raise NotFound("a slot is not one of this evaluation's")
        bulk_set(
            FeedbackSlot,
            ids,
            {
                "grade": [j.grade for j in judgements],
                "reason": [j.reason for j in judgements],
                "grader_id": [j.grader_id for j in judgements],
                "external_grader": [j.external_grader for j in judgements],
                "graded_at": [j.graded_at for j in judgements],
                "reused": [reused] * len(judgements),
                "content_fingerprint": [j.content_fingerprint for j in judgements],
                "stale": [j.stale for j in judgements],
                "source": [j.source for j in judgements],
                "source_detail_id": [j.source_detail_id for j in judgements],
                "reused_from_id": [j.reused_from_id for j in judgements],
                "reused_from_list_id": [j.reused_from_list_id for j in judgements],
            },
        )
        snapshots = sorted({snapshot for _, snapshot, _ in rows})
        FeedbackSlot.objects.filter(snapshot_id__in=snapshots).update(snapshot_started=True)
        pipeline.grades_changed(keyword_ids={keyword for _, _, keyword in rows})
    return len(ids)


@dataclass(frozen=True)
class HeldJudgement:
    """One grade of a slot the grader holds, in a bulk write (slots_judge_held)."""

    slot_id: int
    grade: int
    reason: str = ""


def slots_judge_held(
    *, giver: Giver, judgements: Sequence[HeldJudgement], team_id: int
) -> set[int]:
    """Grade many slots one grader holds, in one transaction (an AI judge's call: its
    results of one keyword), under slot_judge's rules: slots of the team, still held by
    the grader, in an evaluation open for grading, grades of its scale (one off the
    scale: InvalidInput, nothing written). A slot the grader no longer holds, or in an
    evaluation closed meanwhile, is left alone. Returns the ids of the slots graded.

    Locks every slot of the results in id order first, as a first grade does: a result
    this write starts is started for its other slots in the same transaction."""
    if giver.kind != GiverKind.GRADER:
        raise ValueError("slots_judge_held writes a grader's held slots")
    if not judgements:
        return set()
    wanted = {judgement.slot_id: judgement for judgement in judgements}
    with transaction.atomic():
        # The slots' rows are locked (of=self); their evaluations' come along unlocked, as
        # a person's grade reads them.
        siblings = list(
            FeedbackSlot.objects.select_for_update(of=("self",))
            .filter(
                snapshot_id__in=FeedbackSlot.objects.filter(id__in=wanted).values("snapshot_id")
            )
            .order_by("id")
            .values_list(
                "id",
                "snapshot_id",
                "keyword_id",
                "grader_id",
                "snapshot_started",
                "evaluation__team_id",
                "evaluation__status",
                "evaluation__scale",
                "evaluation__scale_levels",
            )
        )
        writable = [
            row
            for row in siblings
            if row[0] in wanted
            and row[3] == giver.user.id
            and row[5] == team_id
            and row[6] == Status.ACTIVE
        ]
        problems: list[str] = []
        for slot_id, *_rest, scale, levels in writable:
            try:
                check_grade(wanted[slot_id].grade, scale_of(scale, levels))
            except InvalidInput as error:
                problems.extend(f"slot {slot_id}: {problem}" for problem in error.problems)
        if problems:
            raise InvalidInput(problems)
        if not writable:
            return set()
        ids = [row[0] for row in writable]
        now = timezone.now()
        bulk_set(
            FeedbackSlot,
            ids,
            {
                "grade": [wanted[slot_id].grade for slot_id in ids],
                "reason": [wanted[slot_id].reason for slot_id in ids],
                "graded_at": [now] * len(ids),
                "snapshot_started": [True] * len(ids),
                "source": [Source.JUDGE if giver.judge_source else Source.PERSON] * len(ids),
                "source_detail_id": [giver.judge_source] * len(ids),
            },
        )
        # The other slots of the results this write starts (strategy 3) start with them.
        starting = {row[1] for row in writable if not row[4]}
        written = set(ids)
        others = [row[0] for row in siblings if row[1] in starting and row[0] not in written]
        if others:
            FeedbackSlot.objects.filter(id__in=others).update(snapshot_started=True)
        pipeline.grades_changed(keyword_ids={row[2] for row in writable})
    return set(ids)


def _bulk_problems(evaluation: Evaluation, judgements: Sequence[BulkJudgement]) -> list[str]:
    problems: list[str] = []
    scale = evaluation.grading_scale
    for number, judgement in enumerate(judgements):
        try:
            check_grade(judgement.grade, scale)
        except InvalidInput as error:
            problems.extend(f"judgements[{number}].{problem}" for problem in error.problems)
    return problems
