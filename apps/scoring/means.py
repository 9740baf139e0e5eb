"""An evaluation's means made exact, and its metric history.

Each grade moves a mean by one keyword's change (store.py), in constant time; floating
point sums drift in their last bits after many such moves, so the sweep and finishing
re-add the stored keyword values with an exactly rounded sum (math.fsum).
"""

import math
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps import engine
from apps.evaluations.models import Evaluation, EvaluationMetric, EvaluationMetricPoint

from .models import KeywordMetric


def lock_evaluation(evaluation_id: int) -> Evaluation:
    """Lock the evaluation's row, step 1 of the lock order (store.py's docstring), and read
    what the pipeline moves under that lock: its graded count, total, status, progress
    (and its team, whose live pages learn of the change)."""
    return (
        Evaluation.objects.select_for_update(no_key=True)
        .only("graded_slots", "total_slots", "status", "progress", "team_id")
        .order_by()
        .get(id=evaluation_id)
    )


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def record_history_point(*, evaluation_id: int, progress: float | None = None) -> None:
    """Upsert this minute's point of every metric of the evaluation (at most one a minute).

    `progress`: the evaluation's current progress when the caller holds it already.
    """
    minute = _minute(timezone.now())
    if progress is None:
        progress = Evaluation.objects.values_list("progress", flat=True).get(id=evaluation_id)
    EvaluationMetricPoint.objects.bulk_create(
        (
            EvaluationMetricPoint(
                evaluation_metric_id=metric_id, minute=minute, value=value, progress=progress
            )
            for metric_id, value in EvaluationMetric.objects.filter(evaluation_id=evaluation_id)
            .order_by("id")
            .values_list("id", "value")
        ),
        update_conflicts=True,
        unique_fields=["evaluation_metric", "minute"],
        update_fields=["value", "progress"],
    )


def store_exact_means(*, evaluation_id: int) -> None:
    """Set every mean to the exactly rounded mean of the stored keyword values."""
    with transaction.atomic():
        lock_evaluation(evaluation_id)
        metrics = list(
            EvaluationMetric.objects.select_for_update(no_key=True)
            .filter(evaluation_id=evaluation_id)
            .order_by("id")  # no join on the evaluation (store.py's docstring, "Lock order")
        )
        for evaluation_metric in metrics:
            values = [
                value
                for value in KeywordMetric.objects.filter(
                    evaluation_id=evaluation_id,
                    metric=evaluation_metric.metric,
                    k=evaluation_metric.k,
                    value__isnull=False,
                ).values_list("value", flat=True)
                if value is not None  # always true; it tells the type checker so
            ]
            evaluation_metric.value_sum = math.fsum(values)
            evaluation_metric.value_count = len(values)
            evaluation_metric.value = engine.mean_from_sum(
                evaluation_metric.metric, evaluation_metric.value_sum, len(values)
            )
            evaluation_metric.means_exact = True
        EvaluationMetric.objects.bulk_update(
            metrics, ["value_sum", "value_count", "value", "means_exact"]
        )
        record_history_point(evaluation_id=evaluation_id)
