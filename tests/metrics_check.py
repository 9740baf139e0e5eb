"""Are an evaluation's stored metrics exact? Compared with a fresh computation.

What the pipeline stores (each keyword's values, each mean, the graded counts) must equal,
to the bit, what the engine computes now from the grades in the database, once nothing
waits to be scored. Tests and the fault drill (bench/fault_drill.py) use this to say
"every metric is exact again".
"""

from django.db.models import Count, Q

from apps import engine
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Keyword
from apps.scoring.loading import load_keyword_inputs
from apps.scoring.models import KeywordMetric


def metric_differences(evaluation_id: int, *, limit: int = 5) -> list[str]:
    """What differs from a fresh computation (at most `limit` lines); empty: all exact."""
    problems: list[str] = []
    fresh_by_metric: dict[tuple[str, int], list[float | None]] = {}
    stored = {
        (keyword_id, metric, k): value
        for keyword_id, metric, k, value in KeywordMetric.objects.filter(
            evaluation_id=evaluation_id
        ).values_list("keyword_id", "metric", "k", "value")
    }
    graded_by_keyword = dict(
        FeedbackSlot.objects.filter(evaluation_id=evaluation_id, grade__isnull=False)
        .order_by()
        .values_list("keyword_id")
        .annotate(Count("id"))
    )
    keywords = Keyword.objects.filter(evaluation_id=evaluation_id).order_by("id")
    for keyword in keywords.only("id", "needs_scoring", "graded_slots"):
        if keyword.needs_scoring:
            problems.append(f"keyword {keyword.id} still waits to be scored")
        if keyword.graded_slots != graded_by_keyword.get(keyword.id, 0):
            problems.append(
                f"keyword {keyword.id}: {keyword.graded_slots} graded slots counted, "
                f"{graded_by_keyword.get(keyword.id, 0)} in the database"
            )
        inputs = load_keyword_inputs(keyword_id=keyword.id)
        assert inputs is not None
        for (metric, k), value in inputs.score().metrics.items():
            fresh_by_metric.setdefault((metric, k), []).append(value)
            kept = stored.get((keyword.id, metric, k))
            if kept != value:
                problems.append(f"keyword {keyword.id} {metric}@{k}: stored {kept}, fresh {value}")
    for mean in EvaluationMetric.objects.filter(evaluation_id=evaluation_id):
        exact = engine.metric_mean(mean.metric, fresh_by_metric.get((mean.metric, mean.k), []))
        if mean.value != exact or not mean.means_exact:
            problems.append(
                f"mean {mean.metric}@{mean.k}: stored {mean.value} "
                f"(means_exact={mean.means_exact}), exact {exact}"
            )
    graded = FeedbackSlot.objects.filter(evaluation_id=evaluation_id).aggregate(
        n=Count("id", filter=Q(grade__isnull=False))
    )["n"]
    counted = Evaluation.objects.values_list("graded_slots", flat=True).get(id=evaluation_id)
    if counted != graded:
        problems.append(f"evaluation: {counted} graded slots counted, {graded} in the database")
    return problems[:limit]
