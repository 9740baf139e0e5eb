"""A search model's history: each metric across its finished evaluations, oldest to
newest, as a table and a chart per metric along a time axis (each evaluation where it
finished). Its evaluations still pending or running are listed apart: their numbers
still move, so they are not points of the history yet.

Each point says whose grades it rests on (People, AI, Mixed: source_mix.py), and points
of different sources are drawn as lines of their own, so a change of who judged is never
drawn as a step of the ranking."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.timezone import localtime

from apps import engine
from apps.evaluations.models import Evaluation, EvaluationMetric, Status
from apps.evaluations.source_mix import NO_GRADES, SourceMix, evaluation_mixes

from . import charts
from .metric_columns import Column, MetricKey, keyword_counts

# The most finished evaluations a model history shows (the latest ones).
MODEL_HISTORY_LIMIT = 200
# The most evaluations still pending or running it names (the newest ones).
UNFINISHED_LIMIT = 20


@dataclass(frozen=True)
class HistoryRow:
    evaluation: Evaluation
    finished: datetime  # in local time: where the evaluation stands on the time axis
    values: list[float | None]
    judged_by: SourceMix = NO_GRADES

    @property
    def label(self) -> str:
        """What a chart's point is titled: the evaluation and when it finished."""
        return f"{self.evaluation.name} · {self.finished:%Y-%m-%d %H:%M}"


@dataclass(frozen=True)
class ModelHistory:
    columns: list[Column]
    rows: list[HistoryRow]  # oldest to newest
    more: bool  # older finished evaluations were left out
    unfinished: list[Evaluation]  # pending or running, newest first

    @property
    def sources(self) -> list[str]:
        """The kinds of source its points rest on (People, AI, Mixed), in order of use."""
        return list(dict.fromkeys(row.judged_by.badge for row in self.rows))

    def charts(self) -> list[tuple[Column, str, dict[str, Any]]]:
        """(column, element id, chart) of each metric: its value per evaluation, where
        the evaluation finished along a time axis; a line for each kind of source when
        its points rest on more than one."""
        labels = [row.label for row in self.rows]
        times = [row.finished for row in self.rows]
        return [
            (
                column,
                f"model-history-{index}",
                charts.chart("line", labels, self._series(column, index), times=times),
            )
            for index, column in enumerate(self.columns)
        ]

    def _series(self, column: Column, index: int) -> list[tuple[str, list[float | None]]]:
        sources = self.sources
        if len(sources) <= 1:
            return [(column.label, [row.values[index] for row in self.rows])]
        return [
            (
                f"{column.label} · {source or 'no grades'}",
                [row.values[index] if row.judged_by.badge == source else None for row in self.rows],
            )
            for source in sources
        ]


def model_history(*, search_model_id: int) -> ModelHistory:
    """Every metric across the model's finished evaluations, oldest to newest, and its
    evaluations not finished yet, in four queries (and one for the sources of those
    whose grades changed since they were last read). A metric appears in the order of
    first use; an evaluation without it has no value there."""
    # Every finished evaluation has its moment (scoring/finishing.py); asking for it
    # keeps the time axis whole whatever an old row holds.
    latest = list(
        Evaluation.objects.filter(
            search_model_id=search_model_id, status=Status.FINISHED, finished_at__isnull=False
        ).order_by("-finished_at", "-id")[: MODEL_HISTORY_LIMIT + 1]
    )
    more = len(latest) > MODEL_HISTORY_LIMIT
    evaluations = list(reversed(latest[:MODEL_HISTORY_LIMIT]))
    ids = [e.id for e in evaluations]
    values: dict[int, dict[MetricKey, float | None]] = defaultdict(dict)
    order: dict[MetricKey, tuple[int, int]] = {}
    rank = {evaluation_id: index for index, evaluation_id in enumerate(ids)}
    for evaluation_id, metric, k, value, position in EvaluationMetric.objects.filter(
        evaluation_id__in=ids
    ).values_list("evaluation_id", "metric", "k", "value", "position"):
        values[evaluation_id][(metric, k)] = value
        first_use = (rank[evaluation_id], position)
        order[(metric, k)] = min(order.get((metric, k), first_use), first_use)
    many = any(count > 1 for count in keyword_counts(ids).values())
    keys = sorted(order, key=order.__getitem__)
    columns = [
        Column(metric, k, engine.metric_label(metric, k, many_keywords=many)) for metric, k in keys
    ]
    mixes = evaluation_mixes(evaluations)
    rows = [
        HistoryRow(
            e, localtime(e.finished_at), [values[e.id].get(key) for key in keys], mixes[e.id]
        )
        for e in evaluations
    ]
    unfinished = list(
        Evaluation.objects.filter(search_model_id=search_model_id)
        .exclude(status=Status.FINISHED)
        .order_by("-created_at", "-id")[:UNFINISHED_LIMIT]
    )
    return ModelHistory(columns, rows, more, unfinished)
