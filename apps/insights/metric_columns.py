"""What the lead's pages share about an evaluation's metrics: a (metric, k) key and how
it is written, a column per metric, and the keyword counts that choose a metric's label
(a keyword's log AP makes an evaluation's GMAP; every other metric has one name)."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count

from apps import engine
from apps.evaluations.metric_list import metric_text
from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword

MetricKey = tuple[str, int]


def metric_key_text(metric: str, k: int) -> str:
    """How a (metric, k) is written in query strings and data attributes: ndcg@10, and
    ap for the whole list."""
    return metric_text(metric, k)


def keyword_counts(evaluation_ids: Sequence[int]) -> dict[int, int]:
    """How many keywords each evaluation has, in one query."""
    return dict(
        Keyword.objects.filter(evaluation_id__in=evaluation_ids)
        .values_list("evaluation_id")
        .annotate(count=Count("id"))
        .order_by()
        .values_list("evaluation_id", "count")
    )


@dataclass(frozen=True)
class Column:
    metric: str
    k: int
    label: str

    @property
    def key(self) -> str:
        return metric_key_text(self.metric, self.k)


def metric_column(metric: str, k: int) -> Column:
    """A metric as lists of evaluations show it: a mean over an evaluation's keywords
    (GMAP, not log AP), whatever their number, which a list does not count."""
    return Column(metric, k, engine.metric_label(metric, k, many_keywords=True))


def keyword_columns(evaluation: Evaluation) -> list[Column]:
    return [
        Column(metric, k, engine.metric_label(metric, k))
        for metric, k in EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("metric", "k")
    ]
