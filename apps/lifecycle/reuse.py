"""Reuse strategies: fill a new evaluation's slots with earlier grades of the same team.

When an evaluation opens, each of its snapshots that nobody has touched yet looks for
grades given to the same keyword text and document (and, for the stricter strategy, at
the same position) in finished evaluations of the same team on the same scale, and in
the judgement lists the team imported into its library on that scale (a custom scale:
the same lowest, highest and relevant levels). Those grades are copied into its slots,
most recent first (a list's grades date from its import), one per grader: a grader never
holds two slots of one snapshot, here as in the queue, and a list is one grader (its
copies name it as their external grader). A list records no position, so the stricter
strategy copies nothing from lists: it copies only what was judged where the document
stands now, and a list cannot say that.

Copied slots are flagged `reused` (they are not new work for the leaderboard) and keep
the original grade time and reason. Each keeps the fingerprint of the content it was
graded on (fingerprints.py); when that differs from the new result's, the document
changed since, and the copy is marked `stale`: it counts, but the lead sees how many the
metrics rest on and may send them back to the queue (stale.py). An evaluation that reuses
fresh grades only (`reuse_fresh_only`: a scheduled run, a gate's candidate) copies none
of those: the changed document waits in the queue. A list records no content: its grade
takes the fingerprint of the result it is copied onto and is never stale, nor is a copy
of that copy while the list is kept.

Whose grades: people's (and imported people's, a list of them too) always; an AI judge's
(in an evaluation or a list) only when the lead ticks `reuse_judges`, and then only a
grade whose judge, model and prompt version meet the team's calibration rule (the judges'
app registers that rule here: `judge_rule`, as it sits above this one). A list imported
as an AI judge's names no judge of the team, so it is never copied. A copy keeps its
original's source (through copies of copies) and names where it came from: the
evaluation (`reused_from`), the list (`reused_from_list`), or both for a copy of a
list's copy. The library counts a copy only once neither is kept, so no grade counts
twice. They are written by the grade writer's bulk entry
(apps.judging.judgements.slots_judge_in_bulk), which marks their keywords for scoring in
the same transaction, so the metrics follow through the normal pipeline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import (
    PEOPLE_SOURCES,
    Evaluation,
    FeedbackSlot,
    JudgementSource,
    Reuse,
    Scale,
    Snapshot,
    Source,
    Status,
    judges_q,
    people_q,
)
from apps.judging.judgements import BulkJudgement, slots_judge_in_bulk
from apps.library.models import ListedJudgement

# Whether a judge's grades may be copied: (team id, judge id, model, prompt version) ->
# bool. The judges' app sets it when it loads (apps.judges.apps); without it no judge's
# grade is copied.
JudgeRule = Callable[[int, int, str, str], bool]
judge_rule: JudgeRule | None = None

MatchKey = tuple[object, ...]


@dataclass(frozen=True)
class EarlierGrade:
    grader_id: int | None
    external_grader: str
    grade: int
    reason: str
    graded_at: datetime | None
    # Of the content it was given on; "" for a list's grade (a list records none): the
    # copy takes the content it is copied onto.
    fingerprint: str
    source: str
    source_detail_id: int | None
    evaluation_id: int | None  # where it was given or copied to: the copy's `reused_from`
    list_id: int | None = None  # the list its original is in: the copy's `reused_from_list`

    @property
    def who(self) -> tuple[int | None, str]:
        return (self.grader_id, self.external_grader)


def _match_key(reuse: str, text: str, doc_id: str, position: int) -> MatchKey:
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


def _same_scale(evaluation: Evaluation) -> dict[str, Any]:
    """Slots of evaluations on the evaluation's scale; a custom scale's grades mean what
    its own levels say: the same levels only."""
    same: dict[str, Any] = {"evaluation__scale": evaluation.scale}
    if evaluation.scale_levels is not None:
        same["evaluation__scale_levels"] = evaluation.scale_levels
    return same


def _list_on_same_scale(evaluation: Evaluation) -> dict[str, Any]:
    """Judgements of lists on the evaluation's scale; a custom one with the same levels:
    lowest, highest and relevant from, what its grades mean (a list's levels are those
    alone, found in its file; the library counts such grades together)."""
    same: dict[str, Any] = {"judgement_list__scale": evaluation.scale}
    levels = evaluation.scale_levels
    if evaluation.scale == Scale.CUSTOM and isinstance(levels, dict):
        same["judgement_list__scale_levels__lowest"] = levels.get("lowest")
        same["judgement_list__scale_levels__highest"] = levels.get("highest")
        same["judgement_list__scale_levels__relevant_from"] = levels.get("relevant_from", 1)
    return same


def _earlier_grades(evaluation: Evaluation, texts: set[str]) -> dict[MatchKey, list[EarlierGrade]]:
    """Earlier grades by match key, most recent first: from evaluations, then lists."""
    judges = _copyable_judge_sources(evaluation)
    found: dict[MatchKey, list[EarlierGrade]] = defaultdict(list)
    for key, grade in _evaluation_grades(evaluation, texts, judges):
        found[key].append(grade)
    listed: set[MatchKey] = set()
    for key, grade in _listed_grades(evaluation, texts, judges):
        found[key].append(grade)
        listed.add(key)
    # A stable sort: at one time, a copy in an evaluation comes before the list it was
    # copied from, so a copy of a copy names both (and the library counts it once).
    for key in listed:
        found[key].sort(key=_newest_first)
    return found


def _newest_first(grade: EarlierGrade) -> tuple[bool, float]:
    at = grade.graded_at
    return (at is None, -at.timestamp() if at else 0.0)


def _evaluation_grades(
    evaluation: Evaluation, texts: set[str], judges: list[int] | None
) -> Iterator[tuple[MatchKey, EarlierGrade]]:
    """Grades of the team's other finished evaluations on the scale, most recent first."""
    rows = (
        FeedbackSlot.objects.filter(
            evaluation__team_id=evaluation.team_id,
            evaluation__status=Status.FINISHED,
            **_same_scale(evaluation),
            grade__isnull=False,
            keyword__text__in=texts,
        )
        .filter(_copyable(judges))
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
            "reused_from_list_id",
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
        list_id,
    ) in rows:
        # A copy keeps the fingerprint of its own source; a grade given there, its
        # result's; a copy of a list that is still kept, none (as the list).
        if list_id is not None:
            seen = ""
        else:
            seen = fingerprint or content_fingerprint(name, image, attributes)
        yield (
            _match_key(evaluation.reuse, text, doc_id, position),
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
                list_id,
            ),
        )


def _listed_grades(
    evaluation: Evaluation, texts: set[str], judges: list[int] | None
) -> Iterator[tuple[MatchKey, EarlierGrade]]:
    """Grades of the team's imported judgement lists on the scale, in one query. A list
    has no positions: the strategy that matches on position finds nothing in it."""
    if evaluation.reuse == Reuse.KEYWORD_DOC_POSITION:
        return
    copyable = Q(judgement_list__source__kind__in=PEOPLE_SOURCES)
    if judges is not None:
        copyable |= Q(
            judgement_list__source__kind=Source.JUDGE, judgement_list__source_id__in=judges
        )
    rows = (
        ListedJudgement.objects.filter(
            team_id=evaluation.team_id,
            query__in=texts,
            **_list_on_same_scale(evaluation),
        )
        .filter(copyable)
        .values_list(
            "query",
            "doc_id",
            "grade",
            "judgement_list_id",
            "judgement_list__name",
            "judgement_list__imported_at",
            "judgement_list__source__kind",
            "judgement_list__source_id",
        )
        .iterator(chunk_size=5000)
    )
    for text, doc_id, grade, list_id, list_name, imported_at, kind, source_id in rows:
        yield (
            (text, doc_id),
            EarlierGrade(
                grader_id=None,
                external_grader=list_name,
                grade=grade,
                reason="",
                graded_at=imported_at,
                fingerprint="",
                source=kind,
                source_detail_id=source_id,
                evaluation_id=None,
                list_id=list_id,
            ),
        )


def _copyable_judge_sources(evaluation: Evaluation) -> list[int] | None:
    """The team's AI judge sources whose grades reuse may copy: with `reuse_judges`,
    those whose judge, model and prompt version meet its calibration rule; None without."""
    if not evaluation.reuse_judges or judge_rule is None:
        return None
    rule = judge_rule
    return [
        source_id
        for source_id, judge_id, model, prompt_version in JudgementSource.objects.filter(
            team_id=evaluation.team_id, kind=Source.JUDGE, judge_id__gt=0
        ).values_list("id", "judge_id", "model_name", "prompt_version")
        if rule(evaluation.team_id, judge_id, model, prompt_version)
    ]


def _copyable(judges: list[int] | None) -> Q:
    """The earlier slots reuse may copy: people's, and those of the judge sources given."""
    if judges is None:
        return people_q()
    return people_q() | (judges_q() & Q(source_detail_id__in=judges))


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
            grades = [grade for grade in grades if grade.fingerprint in ("", shown_now)]
        chosen = _one_per_grader(grades, evaluation.strategy)
        for slot_id, grade in zip(untouched[snapshot_id], chosen, strict=False):
            seen = grade.fingerprint or shown_now  # a list's grade: the content it lands on
            judgements.append(
                BulkJudgement(
                    slot_id=slot_id,
                    grade=grade.grade,
                    reason=grade.reason,
                    grader_id=grade.grader_id,
                    external_grader=grade.external_grader,
                    graded_at=grade.graded_at,
                    content_fingerprint=seen,
                    stale=seen != shown_now,
                    source=grade.source,
                    source_detail_id=grade.source_detail_id,
                    reused_from_id=grade.evaluation_id,
                    reused_from_list_id=grade.list_id,
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
    """Counted by source: a list's copies as its source's (imported, or AI judges')."""
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
