"""Metric values stored with new keywords: the scoring rows an import writes.

An import scores its keywords while their grades are in memory (the engine's batch path,
as recompute_evaluation scores) and stores one KeywordMetric per (metric, k) beside each
new keyword, in its transaction: through its COPY on PostgreSQL (`copy_lines`, fields
`METRIC_FIELDS`) or bulk_create elsewhere (`objects`). The rows are scoring's; they are
built here so that the import does not write scoring's table by its own rules.
"""

from collections.abc import Iterable, Iterator
from datetime import datetime

from apps.core.copy_text import NULL

from .models import KeywordMetric

MetricKey = tuple[str, int]
# a new keyword's id and its values, (metric, k) -> value (None: undefined)
ScoredKeyword = tuple[int, dict[MetricKey, float | None]]

METRIC_FIELDS = ("keyword", "evaluation", "metric", "k", "value", "computed_at")


class NewKeywordScores:
    """The metric rows of one evaluation's new keywords, computed at `now`."""

    def __init__(self, evaluation_id: int, metrics: list[MetricKey], now: datetime) -> None:
        self.evaluation_id = evaluation_id
        self.metrics = metrics
        self.now = now

    def copy_lines(self, keywords: Iterable[ScoredKeyword]) -> Iterator[str]:
        """COPY text lines, fields in METRIC_FIELDS order."""
        now = self.now.isoformat()
        evaluation = self.evaluation_id
        for keyword_id, values in keywords:
            for metric, k in self.metrics:
                value = values.get((metric, k))
                shown = NULL if value is None else repr(value)
                yield f"{keyword_id}\t{evaluation}\t{metric}\t{k}\t{shown}\t{now}"

    def objects(self, keywords: Iterable[ScoredKeyword]) -> Iterator[KeywordMetric]:
        for keyword_id, values in keywords:
            for metric, k in self.metrics:
                yield KeywordMetric(
                    keyword_id=keyword_id,
                    evaluation_id=self.evaluation_id,
                    metric=metric,
                    k=k,
                    value=values.get((metric, k)),
                )
