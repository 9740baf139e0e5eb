"""The evaluation page's metric cards: each metric's value, its change against the
reference evaluation (reference.py chooses which) and its history; the values the page
polls while graders work. The dashboard's pins are drawn with the same cards."""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils.timezone import localtime

from apps import engine
from apps.evaluations.models import Evaluation, EvaluationMetric, EvaluationMetricPoint, Status

from . import charts
from .coverage import Coverage, evaluation_coverage
from .metric_columns import MetricKey, keyword_counts, metric_key_text
from .reference import EvaluationKey, change, reference_for

# --- What a change is measured against ---------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """The evaluation a change is measured against, and its metric values."""

    evaluation_id: int
    name: str
    why: str  # "previous": the model's previous finished evaluation; "baseline": the team's
    values: dict[MetricKey, float | None]


def _key(evaluation: Any) -> EvaluationKey:
    return EvaluationKey(
        id=evaluation.id,
        search_model_id=evaluation.search_model_id,
        finished_at=evaluation.finished_at if evaluation.status == Status.FINISHED else None,
    )


def references_for(
    evaluations: Sequence[Evaluation], *, baseline_id: int | None
) -> dict[int, Reference | None]:
    """Each evaluation's reference (see reference.py), in at most two queries."""
    if not evaluations:
        return {}
    team_id = evaluations[0].team_id
    model_ids = {e.search_model_id for e in evaluations if e.search_model_id is not None}
    wanted = Q(status=Status.FINISHED, search_model_id__in=model_ids)
    if baseline_id is not None:
        wanted |= Q(id=baseline_id)
    candidates = (
        list(
            Evaluation.objects.filter(wanted, team_id=team_id).values_list(
                "id", "name", "status", "search_model_id", "finished_at"
            )
        )
        if model_ids or baseline_id is not None
        else []
    )
    names = {row[0]: row[1] for row in candidates}
    finished = [
        EvaluationKey(id=row[0], search_model_id=row[3], finished_at=row[4])
        for row in candidates
        if row[2] == Status.FINISHED
    ]
    # A baseline of another team (or deleted) is no reference.
    baseline = baseline_id if baseline_id in names else None
    chosen = {e.id: reference_for(_key(e), finished, baseline) for e in evaluations}
    values: dict[int, dict[MetricKey, float | None]] = defaultdict(dict)
    reference_ids = {reference_id for reference_id, _why in chosen.values() if reference_id}
    for evaluation_id, metric, k, value in EvaluationMetric.objects.filter(
        evaluation_id__in=reference_ids
    ).values_list("evaluation_id", "metric", "k", "value"):
        values[evaluation_id][(metric, k)] = value
    return {
        evaluation_id: None
        if reference_id is None
        else Reference(reference_id, names[reference_id], why, values[reference_id])
        for evaluation_id, (reference_id, why) in chosen.items()
    }


# --- Metric cards ------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryPoint:
    at: datetime  # the minute, in local time
    value: float | None
    progress: float

    @property
    def label(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M}"


@dataclass(frozen=True)
class MetricCard:
    id: int
    metric: str
    k: int
    label: str
    value: float | None
    keywords_counted: int
    exact: bool
    pinned: bool
    reference_value: float | None = None
    change: float | None = None
    history: list[HistoryPoint] = field(default_factory=list)
    # RBP's residual at the same k when the evaluation has it: RBP reads "0.41 ± 0.12".
    residual: float | None = None
    # How far the judgements reach into the metric's top k (coverage.py).
    coverage: Coverage | None = None

    @property
    def key(self) -> str:
        return metric_key_text(self.metric, self.k)

    @property
    def chart_id(self) -> str:
        return f"history-{self.id}"

    def chart(self) -> dict[str, Any]:
        return charts.chart(
            "line",
            [point.label for point in self.history],
            [(self.label, [point.value for point in self.history])],
            compact=True,
            times=[point.at for point in self.history],
        )


def cards_of(
    metrics: Sequence[EvaluationMetric],
    *,
    many_keywords: bool,
    reference: Reference | None,
    histories: dict[int, list[HistoryPoint]] | None = None,
    coverage: dict[int, Coverage] | None = None,
) -> list[MetricCard]:
    """A card per metric, with its change against the reference and its coverage at
    its cutoff (no queries)."""
    residuals = residuals_of((m.metric, m.k, m.value) for m in metrics)
    cards = []
    for m in metrics:
        reference_value = reference.values.get((m.metric, m.k)) if reference else None
        cards.append(
            MetricCard(
                id=m.id,
                metric=m.metric,
                k=m.k,
                label=engine.metric_label(m.metric, m.k, many_keywords=many_keywords),
                value=m.value,
                keywords_counted=m.value_count,
                exact=m.means_exact,
                pinned=m.pinned,
                reference_value=reference_value,
                change=change(m.value, reference_value),
                history=(histories or {}).get(m.id, []),
                residual=residuals.get((m.metric, m.k)),
                coverage=(coverage or {}).get(m.k) if m.metric not in engine.COVERAGE else None,
            )
        )
    return cards


def residuals_of(
    values: Iterable[tuple[str, int, float | None]],
) -> dict[tuple[str, int], float | None]:
    """(RBP metric, k) -> its residual's value, for each RBP whose residual at the same k
    is among ``values`` (metric, k, value)."""
    by_key = {(metric, k): value for metric, k, value in values}
    return {
        (metric[: -len(RESIDUAL)], k): value
        for (metric, k), value in by_key.items()
        if metric.endswith(RESIDUAL) and (metric[: -len(RESIDUAL)], k) in by_key
    }


RESIDUAL = "_res"


def metric_histories(evaluation: Evaluation) -> dict[int, list[HistoryPoint]]:
    """Each metric's history points (thinned for a chart), oldest first, in one query."""
    rows: dict[int, list[tuple[Any, float | None, float]]] = defaultdict(list)
    for metric_id, minute, value, progress in (
        EvaluationMetricPoint.objects.filter(evaluation_metric__evaluation=evaluation)
        .order_by("evaluation_metric_id", "minute")
        .values_list("evaluation_metric_id", "minute", "value", "progress")
    ):
        rows[metric_id].append((minute, value, progress))
    # Thinned first: converting the time of thousands of points is most of the cost.
    return {
        metric_id: [
            HistoryPoint(localtime(minute), value, progress)
            for minute, value, progress in charts.thin(series)
        ]
        for metric_id, series in rows.items()
    }


@dataclass(frozen=True)
class MetricCards:
    cards: list[MetricCard]
    reference: Reference | None


def metric_cards(
    evaluation: Evaluation, *, baseline_id: int | None, with_history: bool = True
) -> MetricCards:
    """The evaluation's metrics with their change against its reference and history."""
    many = keyword_counts([evaluation.id]).get(evaluation.id, 0) > 1
    reference = references_for([evaluation], baseline_id=baseline_id)[evaluation.id]
    metrics = list(
        EvaluationMetric.objects.filter(evaluation=evaluation).order_by("position", "id")
    )
    histories = metric_histories(evaluation) if with_history else None
    coverage = evaluation_coverage(evaluation, (m.k for m in metrics))
    cards = cards_of(
        metrics, many_keywords=many, reference=reference, histories=histories, coverage=coverage
    )
    return MetricCards(cards, reference)


@dataclass(frozen=True)
class LiveMetric:
    """What the evaluation page's live answer redraws of one metric's card."""

    id: int
    value: float | None
    residual: float | None
    coverage: Coverage | None


def metric_values(evaluation: Evaluation) -> list[LiveMetric]:
    """Each of the evaluation's metrics' value, RBP's residual and coverage, for the
    page's live update."""
    rows = list(
        EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("id", "metric", "k", "value")
    )
    residuals = residuals_of((metric, k, value) for _, metric, k, value in rows)
    coverage = evaluation_coverage(evaluation, (k for _, _, k, _ in rows))
    return [
        LiveMetric(
            id,
            value,
            residuals.get((metric, k)),
            coverage.get(k) if metric not in engine.COVERAGE else None,
        )
        for id, metric, k, value in rows
    ]


def evaluation_metric_in_team(*, metric_id: int, evaluation_id: int, team_id: int) -> Any:
    return (
        EvaluationMetric.objects.select_related("evaluation")
        .filter(id=metric_id, evaluation_id=evaluation_id, evaluation__team_id=team_id)
        .first()
    )
