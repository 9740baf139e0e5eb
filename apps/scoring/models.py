"""Stored results of the scoring pipeline, one row per keyword and (metric, k)."""

from django.db import models

from apps.evaluations.models import Evaluation, Keyword


class KeywordMetric(models.Model):
    keyword = models.ForeignKey(Keyword, on_delete=models.CASCADE, related_name="metric_values")
    # A copy of the keyword's evaluation, so a keyword table sorts by a metric without a join.
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=16)
    k = models.PositiveSmallIntegerField()
    value = models.FloatField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["keyword", "metric", "k"]
        constraints = [
            models.UniqueConstraint(fields=["keyword", "metric", "k"], name="keyword_metric_once"),
        ]
        indexes = [
            models.Index(fields=["evaluation", "metric", "k", "value"], name="keyword_metric_sort"),
        ]

    def __str__(self) -> str:
        return f"{self.metric}@{self.k}={self.value}"
