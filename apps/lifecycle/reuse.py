"""Reuse strategies: fill a new evaluation's slots with earlier grades of the same team.

When an evaluation opens, each of its snapshots that nobody has touched yet looks for
grades given to the same keyword text and document (and, for the stricter strategy, at
the same position) in finished evaluations of the same team on the same scale. Those
grades are copied into its slots, most recent first, one per grader: a grader never
holds two slots of one snapshot, here as in the queue.

Copied slots are flagged `reused` (they are not new work for the leaderboard) and keep
the original grade time and reason. Each keeps the fingerprint of the content it was
graded on (fingerprints.py); when that differs from the new result's, the document
changed since, and the copy is marked `stale`: it counts, but the lead sees how many the
metrics rest on and may send them back to the queue (stale.py). An evaluation that reuses
fresh grades only (`reuse_fresh_only`: a scheduled run, a gate's candidate) copies none
of those: the changed document waits in the queue.

Whose grades: people's (and imported people's) always; an AI judge's only when the lead
ticks `reuse_judges`, and then only a grade whose judge, model and prompt version meet the
team's calibration rule (the judges' app registers that rule here: `judge_rule`, as it
sits above this one). A copy keeps its original's source (through copies of copies)
and names the evaluation it came from. They are written by the
grade writer's bulk entry (apps.judging.judgements.slots_judge_in_bulk), which marks
their keywords for scoring in the same transaction, so the metrics follow through the
normal pipeline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, Q

from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    JudgementSource,
    Reuse,
    Snapshot,
    Source,
    Status,
    judges_q,
    people_q,
)
from apps.judging.judgements import BulkJudgement, slots_judge_in_bulk

# Whether a judge's grades may be copied: (team id, judge id, model, prompt version) ->
# bool. The judges' app sets it when it loads (apps.judges.apps); without it no judge's
# grade is copied.
JudgeRule = Callable[[int, int, str, str], bool]
judge_rule: JudgeRule | None = None


@dataclass(frozen=True)
class EarlierGrade:
    grader_id: int | None
    external_grader: str
    grade: int
    reason: str
    graded_at: datetime | None
    fingerprint: str  # of the content it was given on
    source: str
    source_detail_id: int | None
    evaluation_id: int  # where it was given or copied to: the copy's `reused_from`

    @property
    def who(self) -> tuple[int | None, str]:
        return (self.grader_id, self.external_grader)


def _match_key(reuse: str, text: str, doc_id: str, position: int) -> tuple[object, ...]:
    if reuse == Reuse.KEYWORD_DOC_POSITION:
        return (text, doc_id, position)
    return (text, doc_id)


def _untouched_snapshots(evaluation: Evaluation) -> dict[int, list[int]]:
    """Snapshot id -> its slot ids in index order, for snapshots with no grader or grade."""
    slots: dict[int, list[int]] = defaultdict(list)
    touched: set[int] = set()
    rows = (
        FeedbackSlot.objects.filter(evaluation=evaluation)
        .order_by("snapshot_id", "index")
        .values_list("id", "snapshot_id", "grader_id", "external_grader", "grade")
    )
    for slot_id, snapshot_id, grader_id, external, grade in rows:
        slots[snapshot_id].append(slot_id)
        if grader_id is not None or external or grade is not None:
            touched.add(snapshot_id)
    return {snapshot: ids for snapshot, ids in slots.items() if snapshot not in touched}


def _earlier_grades(
    evaluation: Evaluation, texts: set[str]
) -> dict[tuple[object, ...], list[EarlierGrade]]:
    """Earlier grades by match key, most recent first."""
    found: dict[tuple[object, ...], list[EarlierGrade]] = defaultdict(list)
    rows = (
        FeedbackSlot.objects.filter(
            evaluation__team_id=evaluation.team_id,
            evaluation__status=Status.FINISHED,
            evaluation__scale=evaluation.scale,
            # A custom scale's grades mean what its own levels say: the same levels only.
            **(
                {"evaluation__scale_levels": evaluation.scale_levels}
                if evaluation.scale_levels is not None
                else {}
            ),
            grade__isnull=False,
            keyword__text__in=texts,
        )
        .filter(_copyable(evaluation))
        .exclude(evaluation_id=evaluation.id)
        .order_by(F("graded_at").desc(nulls_last=True), "-id")
        .values_list(
            "keyword__text",
            "snapshot__doc_id",
            "snapshot__position",
            "grader_id",
            "external_grader",
            "grade",
            "reason",
            "graded_at",
            "content_fingerprint",
            "snapshot__name",
            "snapshot__image",
            "snapshot__attributes",
            "source",
            "source_detail_id",
            "evaluation_id",
        )
        .iterator(chunk_size=5000)
    )
    for (
        text,
        doc_id,
        position,
        grader_id,
        external,
        grade,
        reason,
        graded_at,
        fingerprint,
        name,
        image,
        attributes,
        source,
        source_detail_id,
        evaluation_id,
    ) in rows:
        key = _match_key(evaluation.reuse, text, doc_id, position)
        # A copy keeps the fingerprint of its own source; a grade given there, its result's.
        seen = fingerprint or content_fingerprint(name, image, attributes)
        found[key].append(
            EarlierGrade(
                grader_id,
                external,
                int(grade or 0),
                reason,
                graded_at,
                seen,
                source,
                source_detail_id,
                evaluation_id,
            )
        )
    return found


def _copyable(evaluation: Evaluation) -> Q:
    """The earlier grades reuse may copy: people's, and with `reuse_judges` those of the
    team's judges whose model and prompt version meet its calibration rule."""
    if not evaluation.reuse_judges or judge_rule is None:
        return people_q()
    rule = judge_rule
    allowed = [
        source_id
        for source_id, judge_id, model, prompt_version in JudgementSource.objects.filter(
            team_id=evaluation.team_id, kind=Source.JUDGE, judge_id__gt=0
        ).values_list("id", "judge_id", "model_name", "prompt_version")
        if rule(evaluation.team_id, judge_id, model, prompt_version)
    ]
    return people_q() | (judges_q() & Q(source_detail_id__in=allowed))


def _one_per_grader(grades: list[EarlierGrade], limit: int) -> list[EarlierGrade]:
    """The most recent grade of each grader, up to `limit` graders."""
    chosen: list[EarlierGrade] = []
    seen: set[tuple[int | None, str]] = set()
    for grade in grades:
        if grade.who in seen:
            continue
        seen.add(grade.who)
        chosen.append(grade)
        if len(chosen) == limit:
            break
    return chosen


def planned_copies(evaluation: Evaluation) -> list[BulkJudgement]:
    """The grades reuse would copy into the evaluation's untouched snapshots now."""
    if evaluation.reuse == Reuse.NONE:
        return []
    untouched = _untouched_snapshots(evaluation)
    if not untouched:
        return []
    snapshots = list(
        Snapshot.objects.filter(id__in=list(untouched)).values_list(
            "id", "keyword__text", "doc_id", "position", "name", "image", "attributes"
        )
    )
    earlier = _earlier_grades(evaluation, {text for _, text, *_ in snapshots})
    judgements: list[BulkJudgement] = []
    for snapshot_id, text, doc_id, position, name, image, attributes in snapshots:
        grades = earlier.get(_match_key(evaluation.reuse, text, doc_id, position), [])
        shown_now = content_fingerprint(name, image, attributes)
        if evaluation.reuse_fresh_only:  # a changed document is graded again, not copied
            grades = [grade for grade in grades if grade.fingerprint == shown_now]
        chosen = _one_per_grader(grades, evaluation.strategy)
        for slot_id, grade in zip(untouched[snapshot_id], chosen, strict=False):
            judgements.append(
                BulkJudgement(
                    slot_id=slot_id,
                    grade=grade.grade,
                    reason=grade.reason,
                    grader_id=grade.grader_id,
                    external_grader=grade.external_grader,
                    graded_at=grade.graded_at,
                    content_fingerprint=grade.fingerprint,
                    stale=grade.fingerprint != shown_now,
                    source=grade.source,
                    source_detail_id=grade.source_detail_id,
                    reused_from_id=grade.evaluation_id,
                )
            )
    return judgements


@dataclass(frozen=True)
class ReusePreview:
    """What reuse would copy now, by source: the start page says it before it copies."""

    people: int
    imported: int
    judges: int
    stale: int

    @property
    def total(self) -> int:
        return self.people + self.imported + self.judges


def reuse_preview(*, evaluation: Evaluation) -> ReusePreview:
    copies = planned_copies(evaluation)
    return ReusePreview(
        people=sum(1 for c in copies if c.source == Source.PERSON),
        imported=sum(1 for c in copies if c.source == Source.IMPORT),
        judges=sum(1 for c in copies if c.source == Source.JUDGE),
        stale=sum(1 for c in copies if c.stale),
    )


@transaction.atomic
def reuse_apply(*, evaluation: Evaluation) -> int:
    """Copy earlier grades into untouched snapshots; returns the number of slots filled.

    Call inside the transaction that opens the evaluation. The grades are written by the
    grade writer's bulk entry, which marks their keywords and queues the recompute.
    """
    judgements = planned_copies(evaluation)
    return slots_judge_in_bulk(evaluation=evaluation, judgements=judgements, reused=True)
