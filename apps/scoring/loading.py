"""Read what the engine needs for a keyword: its slots in order, and the settings."""

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from apps.evaluations.models import EvaluationMetric, FeedbackSlot, Keyword

from . import engine


@dataclass(frozen=True)
class SnapshotGrades:
    snapshot_id: int
    stored_value: float | None
    grades: list[int | None]


@dataclass(frozen=True)
class EvaluationSettings:
    evaluation_id: int
    scale: str
    profile: str
    transformers: dict[str, Any]
    metrics: list[tuple[str, int]]

    def score(self, snapshots: list[SnapshotGrades]) -> engine.KeywordScore:
        return engine.score_keyword(
            [snapshot.grades for snapshot in snapshots],
            scale=self.scale,
            metrics=self.metrics,
            profile=self.profile,
            rules=_int_keyed(self.transformers) or None,
        )

    def score_many(self, keywords: list[list[SnapshotGrades]]) -> engine.BatchScores:
        """The engine's numpy path for many keywords: `.keyword_score(i)` is exactly what
        `score` gives for keywords[i], at a fraction of the cost per keyword."""
        return engine.score_keywords_batch(
            [[snapshot.grades for snapshot in snapshots] for snapshots in keywords],
            scale=self.scale,
            metrics=self.metrics,
            profile=self.profile,
            rules=_int_keyed(self.transformers) or None,
        )


@dataclass(frozen=True)
class KeywordInputs:
    keyword_id: int
    # The keyword's grade_version read BEFORE its slots: the slots are at least this fresh.
    version: int
    settings: EvaluationSettings
    snapshots: list[SnapshotGrades]

    @property
    def graded_slots(self) -> int:
        return sum(grade is not None for s in self.snapshots for grade in s.grades)

    def score(self) -> engine.KeywordScore:
        return self.settings.score(self.snapshots)


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
        scale=evaluation.scale,
        profile=evaluation.profile,
        transformers=evaluation.transformers or {},
        metrics=metrics,
    )


def group_slots(rows: Any) -> list[SnapshotGrades]:
    """Rows of (snapshot_id, snapshot value, grade) ordered by position, slot index."""
    return [
        SnapshotGrades(
            snapshot_id=snapshot_id,
            stored_value=group[0][1],
            grades=[row[2] for row in group],
        )
        for snapshot_id, group in ((key, list(rows)) for key, rows in groupby(rows, lambda r: r[0]))
    ]


def load_keyword_inputs(*, keyword_id: int) -> KeywordInputs | None:
    keyword = (
        Keyword.objects.select_related("evaluation")
        .only(
            "grade_version",
            "evaluation__scale",
            "evaluation__profile",
            "evaluation__transformers",
        )
        .filter(id=keyword_id)
        .first()
    )
    if keyword is None:
        return None
    rows = (
        FeedbackSlot.objects.filter(keyword_id=keyword_id)
        .order_by("snapshot__position", "index")
        .values_list("snapshot_id", "snapshot__value", "grade")
    )
    return KeywordInputs(
        keyword_id=keyword_id,
        version=keyword.grade_version,
        settings=load_settings(keyword.evaluation),
        snapshots=group_slots(rows),
    )
