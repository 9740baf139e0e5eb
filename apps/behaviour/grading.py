"""An evaluation graded with a click model's judgements, as a judge grades: a lead asks,
the team's calibration rule must let the judgements grade (judges.team_rule), and each
result the judgements know gets one grade, in one of its slots nobody holds or graded.
People's slots stay theirs. The grade keeps its source ("clicks: PBM, ...") and names
the list it came from, so the library counts it once."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef

from apps.accounts.models import User
from apps.core.errors import InvalidInput, InvalidState, NotFound
from apps.evaluations.models import Evaluation, FeedbackSlot, Source, Status
from apps.judges.team_rule import list_refusal
from apps.judging.judgements import BulkJudgement, slots_judge_in_bulk
from apps.library.entries import scale_key
from apps.library.models import JudgementList, ListedJudgement


@dataclass(frozen=True)
class ClickGrading:
    graded: int  # results graded now
    unknown: int  # results the judgements have no grade for
    taken: int  # results graded by clicks before, or whose slots are all taken


def evaluation_grade_with_clicks(
    *, evaluation: Evaluation, judgement_list: JudgementList, user: User | None
) -> ClickGrading:
    """Grade the evaluation's results with the list's click judgements (see the
    module's docstring)."""
    if judgement_list.team_id != evaluation.team_id:
        raise NotFound("No such judgement list.")
    if judgement_list.source.kind != Source.CLICKS:
        raise InvalidInput(["judgement_list: not a click model's judgements"])
    listed_on = scale_key(judgement_list.scale, judgement_list.scale_levels)
    graded_on = scale_key(evaluation.scale, evaluation.scale_levels)
    if listed_on != graded_on:
        raise InvalidInput(
            [
                f"judgement_list: its grades are on the {listed_on} scale, the evaluation's "
                f"on the {graded_on} scale"
            ]
        )
    if evaluation.status != Status.ACTIVE:
        raise InvalidState("the evaluation is not open for grading", field="evaluation")
    why = list_refusal(judgement_list)
    if why:
        raise InvalidState(why, field="judgement_list")
    with transaction.atomic():
        return _graded(evaluation, judgement_list)


def _graded(evaluation: Evaluation, judgement_list: JudgementList) -> ClickGrading:
    slots = FeedbackSlot.objects.filter(evaluation_id=evaluation.id)
    by_clicks = slots.filter(snapshot_id=OuterRef("snapshot_id"), source=Source.CLICKS)
    # The free slots, locked: a grader taking one meanwhile waits, then finds it graded.
    free = list(
        slots.filter(grade__isnull=True, grader__isnull=True)
        .exclude(Exists(by_clicks))
        .select_for_update(of=("self",))
        .order_by("snapshot_id", "index", "id")
        .values_list("id", "snapshot_id", "keyword__text", "snapshot__doc_id")
    )
    first_free: dict[int, tuple[int, str, str]] = {}
    for slot_id, snapshot_id, text, doc_id in free:
        first_free.setdefault(snapshot_id, (slot_id, text, doc_id))
    grades = dict(
        ((query, doc_id), grade)
        for query, doc_id, grade in ListedJudgement.objects.filter(
            judgement_list=judgement_list,
            query__in={text for _, text, _ in first_free.values()},
        ).values_list("query", "doc_id", "grade")
    )
    judgements = [
        BulkJudgement(
            slot_id=slot_id,
            grade=grades[(text, doc_id)],
            source=Source.CLICKS,
            source_detail_id=judgement_list.source_id,
            reused_from_list_id=judgement_list.id,
        )
        for slot_id, text, doc_id in first_free.values()
        if (text, doc_id) in grades
    ]
    slots_judge_in_bulk(evaluation=evaluation, judgements=judgements, reused=True)
    results = slots.values("snapshot_id").distinct().count()
    return ClickGrading(
        graded=len(judgements),
        unknown=len(first_free) - len(judgements),
        taken=results - len(first_free),
    )
