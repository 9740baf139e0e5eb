"""Read what the engine needs for a keyword: its slots in order, a lead's decision per
snapshot, and the settings."""

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from apps import engine
from apps.engine.explain import Explanation, explain_keyword
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    UnretrievedJudgement,
)


@dataclass(frozen=True)
class SnapshotGrades:
    snapshot_id: int
    stored_value: float | None
    grades: list[int | None]
    # A lead's final grade for the snapshot (apps.judging.models.SnapshotDecision), which stage 1
    # uses instead of the grades; None when no lead has decided.
    decision: int | None = None


@dataclass(frozen=True)
class EvaluationSettings:
    evaluation_id: int
    scale: str | engine.Scale
    profile: str
    transformers: dict[str, Any]
    metrics: list[tuple[str, int]]
    zero_without_results: bool = False

    def score(
        self, snapshots: list[SnapshotGrades], unretrieved: list[int] | None = None
    ) -> engine.KeywordScore:
        """`unretrieved`: the grades of the keyword's judged, unretrieved documents."""
        return engine.score_keyword(
            [snapshot.grades for snapshot in snapshots],
            scale=self.scale,
            metrics=self.metrics,
            profile=self.profile,
            rules=_int_keyed(self.transformers) or None,
            decisions=self._decisions(snapshots),
            unretrieved=self._on_scale(unretrieved or []),
            zero_without_results=self.zero_without_results,
        )

    def score_many(
        self,
        keywords: list[list[SnapshotGrades]],
        unretrieved: list[list[int]] | None = None,
    ) -> engine.BatchScores:
        """The engine's numpy path for many keywords: `.keyword_score(i)` is exactly what
        `score` gives for keywords[i] (and unretrieved[i]), at a fraction of the cost."""
        return engine.score_keywords_batch(
            [[snapshot.grades for snapshot in snapshots] for snapshots in keywords],
            scale=self.scale,
            metrics=self.metrics,
            profile=self.profile,
            rules=_int_keyed(self.transformers) or None,
            decisions=self._decisions_per_keyword(keywords),
            unretrieved=None
            if unretrieved is None
            else [self._on_scale(grades) for grades in unretrieved],
            zero_without_results=self.zero_without_results,
        )

    def _on_scale(self, grades: list[int]) -> list[int]:
        """Unretrieved grades are checked against the scale when they are stored; one that
        is not on it any more (a pending evaluation's scale changed after the import) is
        left out rather than stopping the keyword's scoring, as decisions are."""
        if not grades:
            return grades
        scale = engine.get_scale(self.scale)
        return [grade for grade in grades if scale.is_grade(grade)]

    def _decisions_per_keyword(
        self, keywords: list[list[SnapshotGrades]]
    ) -> list[list[int | None] | None] | None:
        decisions = [self._decisions(snapshots) for snapshots in keywords]
        return None if all(decided is None for decided in decisions) else decisions

    def _decisions(self, snapshots: list[SnapshotGrades]) -> list[int | None] | None:
        """The decisions to pass to the engine, None when the keyword has none.

        A decision is checked against the scale when it is made; one that is not on the
        scale any more (a pending evaluation's scale changed after it) is left out rather
        than stopping the keyword's scoring.
        """
        if all(snapshot.decision is None for snapshot in snapshots):
            return None
        scale = engine.get_scale(self.scale)
        return [
            snapshot.decision if scale.is_grade(snapshot.decision) else None
            for snapshot in snapshots
        ]


@dataclass(frozen=True)
class KeywordInputs:
    keyword_id: int
    # The keyword's grade_version read BEFORE its slots: the slots are at least this fresh.
    version: int
    settings: EvaluationSettings
    snapshots: list[SnapshotGrades]
    # The grades of the keyword's judged documents that are not among its results.
    unretrieved: list[int] = field(default_factory=list)

    @property
    def graded_slots(self) -> int:
        return sum(grade is not None for s in self.snapshots for grade in s.grades)

    def score(self) -> engine.KeywordScore:
        return self.settings.score(self.snapshots, self.unretrieved)

    def explain(self, metric: str, k: int) -> Explanation:
        """How the keyword's value of (metric, k) is computed, from the inputs `score`
        reads (apps/engine/explain.py)."""
        settings = self.settings
        return explain_keyword(
            [snapshot.grades for snapshot in self.snapshots],
            scale=settings.scale,
            metric=metric,
            k=k,
            profile=settings.profile,
            rules=_int_keyed(settings.transformers) or None,
            decisions=settings._decisions(self.snapshots),
            unretrieved=settings._on_scale(self.unretrieved),
            zero_without_results=settings.zero_without_results,
        )


def _int_keyed(transformers: dict[str, Any]) -> dict[str, dict[int, int]]:
    """JSON keys are strings; the engine maps integer grades."""
    return {
        scale: {int(source): int(target) for source, target in rule.items()}
        for scale, rule in transformers.items()
    }


def load_settings(evaluation: Any) -> EvaluationSettings:
    metrics = list(
        EvaluationMetric.objects.filter(evaluation_id=evaluation.id)
        .order_by("position", "id")
        .values_list("metric", "k")
    )
    return EvaluationSettings(
        evaluation_id=evaluation.id,
        scale=evaluation.grading_scale,
        profile=evaluation.profile,
        transformers=evaluation.transformers or {},
        metrics=metrics,
        zero_without_results=evaluation.zero_without_results,
    )


# What group_slots reads of each slot, after the keyword id in evaluation_slot_rows. The
# decision comes through the snapshot's reverse one-to-one (a LEFT JOIN), in the same
# query as the grades, so it is exactly as fresh as they are.
SLOT_COLUMNS = ("snapshot_id", "snapshot__value", "grade", "snapshot__decision__grade")


def group_slots(rows: Any) -> list[SnapshotGrades]:
    """Rows of (snapshot_id, snapshot value, grade, decision) ordered by position, slot
    index; rows without the decision (three values) mean no decision."""
    return [
        SnapshotGrades(
            snapshot_id=snapshot_id,
            stored_value=group[0][1],
            grades=[row[2] for row in group],
            decision=group[0][3] if len(group[0]) > 3 else None,
        )
        for snapshot_id, group in ((key, list(rows)) for key, rows in groupby(rows, lambda r: r[0]))
    ]


def evaluation_slot_rows(*, evaluation_id: int) -> Iterator[tuple[Any, ...]]:
    """Every slot of an evaluation as (keyword_id, *SLOT_COLUMNS), streamed in keyword,
    position and slot order: what a whole-evaluation recompute groups per keyword."""
    return (
        FeedbackSlot.objects.filter(evaluation_id=evaluation_id)
        .order_by("keyword_id", "snapshot__position", "index")
        .values_list("keyword_id", *SLOT_COLUMNS)
        .iterator(chunk_size=20_000)
    )


def load_keyword_inputs(*, keyword_id: int) -> KeywordInputs | None:
    """One keyword's inputs (None: it was deleted)."""
    loaded = load_keywords_inputs(keyword_ids=[keyword_id])
    return loaded[0] if loaded else None


def load_keywords_inputs(*, keyword_ids: Collection[int]) -> list[KeywordInputs]:
    """The inputs of keywords of one evaluation, in id order (a keyword deleted meanwhile
    is left out): four queries however many keywords."""
    # Versions are read before the slots, so every slot read is at least that fresh.
    keywords = list(
        Keyword.objects.filter(id__in=keyword_ids)
        .order_by("id")
        .values_list("id", "grade_version", "evaluation_id")
    )
    if not keywords:
        return []
    evaluations = {evaluation_id for _, _, evaluation_id in keywords}
    if len(evaluations) != 1:
        raise ValueError("load_keywords_inputs reads keywords of one evaluation")
    evaluation = Evaluation.objects.only(
        "scale", "scale_levels", "profile", "transformers", "zero_without_results"
    ).get(id=evaluations.pop())
    settings = load_settings(evaluation)
    ids = [keyword_id for keyword_id, _, _ in keywords]
    rows = (
        FeedbackSlot.objects.filter(keyword_id__in=ids)
        .order_by("keyword_id", "snapshot__position", "index")
        .values_list("keyword_id", *SLOT_COLUMNS)
    )
    slots: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        slots.setdefault(row[0], []).append(row[1:])
    unretrieved: dict[int, list[int]] = {}
    for keyword_id, grade in UnretrievedJudgement.objects.filter(keyword_id__in=ids).values_list(
        "keyword_id", "grade"
    ):
        unretrieved.setdefault(keyword_id, []).append(grade)
    return [
        KeywordInputs(
            keyword_id=keyword_id,
            version=version,
            settings=settings,
            snapshots=group_slots(slots.get(keyword_id, [])),
            unretrieved=unretrieved.get(keyword_id, []),
        )
        for keyword_id, version, _ in keywords
    ]


def evaluation_unretrieved(*, evaluation_id: int) -> dict[int, list[int]]:
    """keyword id -> the grades of its judged, unretrieved documents, for the keywords of
    an evaluation that have any."""
    grades: dict[int, list[int]] = {}
    rows = UnretrievedJudgement.objects.filter(keyword__evaluation_id=evaluation_id).values_list(
        "keyword_id", "grade"
    )
    for keyword_id, grade in rows.iterator(chunk_size=20_000):
        grades.setdefault(keyword_id, []).append(grade)
    return grades
