"""Load evaluations of one team and compare them over their common keywords.

Five queries whatever the size: the evaluations, the metrics they report, their
keywords, the keywords' metric values, and the result lists (doc ids in position order).
Keywords are matched by their exact text; the common keywords are those every selected
evaluation has, in the baseline's keyword order. The first evaluation is the baseline and
every other one is compared with it, on each (metric, k) both report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Count, QuerySet
from django.http import Http404

from apps.core.errors import InvalidInput
from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword, Snapshot
from apps.scoring import engine
from apps.scoring.models import KeywordMetric

from . import ranking, stats
from .chart import DifferenceBar, difference_bar
from .wording import verdict

MAX_EVALUATIONS = 6
MAX_ID = 2**63 - 1

MetricKey = tuple[str, int]


@dataclass(frozen=True)
class Settings:
    """How the numbers were made; shown on the page and returned by the API."""

    samples: int = stats.SAMPLES
    permutations: int = stats.PERMUTATIONS
    confidence: float = stats.CONFIDENCE
    significance: float = stats.SIGNIFICANCE
    seed: int = stats.SEED
    tie_tolerance: float = stats.TIE_TOLERANCE
    rbo_persistence: float = ranking.PERSISTENCE


@dataclass(frozen=True)
class MetricComparison:
    metric: str
    k: int
    label: str
    result: stats.PairedResult
    excluded: int  # common keywords left out: no value in one of the two evaluations
    sentence: str
    bar: DifferenceBar | None

    @property
    def key(self) -> str:
        return f"{self.metric}@{self.k}"


@dataclass(frozen=True)
class PairComparison:
    """One evaluation against the baseline. Arrays have one row per common keyword."""

    candidate: Evaluation
    metrics: list[MetricComparison]
    baseline_values: np.ndarray  # keywords x metrics, NaN = no value
    candidate_values: np.ndarray
    kendall_tau: np.ndarray
    rbo: np.ndarray

    @property
    def differences(self) -> np.ndarray:
        return self.candidate_values - self.baseline_values

    @property
    def kendall_tau_mean(self) -> float | None:
        return _mean_or_none(self.kendall_tau)

    @property
    def rbo_mean(self) -> float | None:
        return _mean_or_none(self.rbo)

    @property
    def kendall_tau_count(self) -> int:
        return int((~np.isnan(self.kendall_tau)).sum())

    @property
    def rbo_count(self) -> int:
        return int((~np.isnan(self.rbo)).sum())


@dataclass(frozen=True)
class Comparison:
    baseline: Evaluation
    evaluations: list[Evaluation]
    keyword_counts: dict[int, int]  # evaluation id -> its number of keywords
    keywords: list[str]  # the common keywords, in the baseline's order
    pairs: list[PairComparison]
    settings: Settings = field(default_factory=Settings)

    @property
    def evaluations_with_counts(self) -> list[tuple[Evaluation, int]]:
        return [(e, self.keyword_counts[e.id]) for e in self.evaluations]

    def pair_with(self, evaluation_id: int) -> PairComparison | None:
        return next((p for p in self.pairs if p.candidate.id == evaluation_id), None)


def _mean_or_none(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else None


def parse_evaluation_ids(values: Sequence[str], *, field: str) -> list[int]:
    """Evaluation ids as given (the first is the baseline); InvalidInput names `field`."""
    ids: list[int] = []
    for text in (value.strip() for value in values):
        if not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_ID:
            raise InvalidInput([f"{field}: {text[:40]!r} is not an evaluation id"])
        if int(text) in ids:
            raise InvalidInput([f"{field}: evaluation {text} is chosen twice"])
        ids.append(int(text))
    if len(ids) < 2:
        raise InvalidInput([f"{field}: choose at least two evaluations to compare"])
    if len(ids) > MAX_EVALUATIONS:
        raise InvalidInput([f"{field}: compare at most {MAX_EVALUATIONS} evaluations at once"])
    return ids


def parse_metric_filter(text: str, *, field: str) -> list[MetricKey] | None:
    """'ndcg@10,precision@5' -> those (metric, k); blank -> None (every metric)."""
    if not text.strip():
        return None
    try:
        return parse_metric_list(text)
    except ValueError as error:
        raise InvalidInput([f"{field}: {error}"]) from None


def team_evaluations_in_order(*, team_id: int, ids: Sequence[int]) -> list[Evaluation]:
    """The team's evaluations with these ids, in the order given; 404 if any is not one."""
    found = {e.id: e for e in Evaluation.objects.filter(team_id=team_id, id__in=ids)}
    if len(found) != len(ids):
        raise Http404("No such evaluation in this team.")
    return [found[evaluation_id] for evaluation_id in ids]


def comparison_build(
    *,
    team_id: int,
    evaluation_ids: Sequence[int],
    metrics: Sequence[MetricKey] | None = None,
    metric_field: str = "metric",
    settings: Settings | None = None,
) -> Comparison:
    """Compare the evaluations (the first is the baseline) over their common keywords.

    `metrics` limits the comparison to these (metric, k); each must be reported by the
    baseline and at least one other evaluation, else InvalidInput names `metric_field`.
    """
    settings = settings or Settings()
    evaluations = team_evaluations_in_order(team_id=team_id, ids=evaluation_ids)
    ids = [e.id for e in evaluations]
    reported = _reported_metrics(ids)
    baseline = evaluations[0]
    if metrics is not None:
        _check_metric_filter(metrics, baseline, evaluations[1:], reported, metric_field)
    keyword_ids, texts, counts = _common_keywords(ids)
    wanted = {(ids.index(e), key) for e in ids for key in reported[e]}
    values = _keyword_values(ids, keyword_ids, wanted)
    lists = _result_lists(ids, keyword_ids)

    loaded = _Loaded(ids, keyword_ids, values, lists, many_keywords=len(texts) > 1)
    pairs = []
    for candidate in evaluations[1:]:
        keys = [
            key
            for key in reported[baseline.id]
            if key in reported[candidate.id] and (metrics is None or key in metrics)
        ]
        pairs.append(_pair(baseline, candidate, keys, loaded, settings))
    return Comparison(baseline, evaluations, counts, texts, pairs, settings)


def _reported_metrics(ids: list[int]) -> dict[int, list[MetricKey]]:
    reported: dict[int, list[MetricKey]] = {evaluation_id: [] for evaluation_id in ids}
    for evaluation_id, metric, k in (
        EvaluationMetric.objects.filter(evaluation_id__in=ids)
        .order_by("position", "id")
        .values_list("evaluation_id", "metric", "k")
    ):
        reported[evaluation_id].append((metric, k))
    return reported


def _check_metric_filter(
    metrics: Sequence[MetricKey],
    baseline: Evaluation,
    candidates: Sequence[Evaluation],
    reported: dict[int, list[MetricKey]],
    field: str,
) -> None:
    problems = []
    for metric, k in metrics:
        key = (metric, k)
        if key not in reported[baseline.id]:
            problems.append(f"{field}: {metric}@{k} is not reported by {baseline.name}")
        elif not any(key in reported[c.id] for c in candidates):
            problems.append(f"{field}: {metric}@{k} is not reported by any other evaluation")
    if problems:
        raise InvalidInput(problems)


def _fetch(queryset: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of a values_list query as the database driver returns them.

    Only for columns the driver already returns as Python wants them (numbers, text):
    it skips the ORM's per-row work, which for the 100,000s of rows a large comparison
    reads costs more than the query itself.
    """
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _common_keywords(ids: list[int]) -> tuple[list[list[int]], list[str], dict[int, int]]:
    """Per evaluation, the ids of the common keywords (row order); their texts; counts."""
    by_text: dict[int, dict[str, int]] = {evaluation_id: {} for evaluation_id in ids}
    for keyword_id, evaluation_id, text in _fetch(
        Keyword.objects.filter(evaluation_id__in=ids)
        .order_by("evaluation_id", "position")
        .values_list("id", "evaluation_id", "text")
    ):
        by_text[evaluation_id][text] = keyword_id
    others = [by_text[evaluation_id] for evaluation_id in ids[1:]]
    texts = [text for text in by_text[ids[0]] if all(text in other for other in others)]
    keyword_ids = [[by_text[e][text] for text in texts] for e in ids]
    return keyword_ids, texts, {e: len(by_text[e]) for e in ids}


def _keyword_values(
    ids: list[int], keyword_ids: list[list[int]], wanted: set[tuple[int, MetricKey]]
) -> dict[tuple[int, MetricKey], np.ndarray]:
    """(evaluation index, metric key) -> one value per common keyword, NaN = none."""
    size = len(keyword_ids[0]) if keyword_ids else 0
    row_of = {
        keyword_id: (index, row)
        for index, rows in enumerate(keyword_ids)
        for row, keyword_id in enumerate(rows)
    }
    values = {key: np.full(size, np.nan) for key in wanted}
    for keyword_id, metric, k, value in _fetch(
        KeywordMetric.objects.filter(evaluation_id__in=ids, value__isnull=False).values_list(
            "keyword_id", "metric", "k", "value"
        )
    ):
        place = row_of.get(keyword_id)
        if place is not None:
            column = values.get((place[0], (metric, k)))
            if column is not None:
                column[place[1]] = value
    return values


# Joins a keyword's doc ids into one text on PostgreSQL: one short string per keyword
# moves faster than an array or a row per result. A doc id holding this character is
# caught by the count and read again as an array.
SEPARATOR = "\x1f"


def _result_lists(ids: list[int], keyword_ids: list[list[int]]) -> dict[int, list[str]]:
    """Keyword id -> its doc ids in position order, for every common keyword."""
    common = {keyword_id for rows in keyword_ids for keyword_id in rows}
    snapshots = Snapshot.objects.filter(keyword__evaluation_id__in=ids)
    lists: dict[int, list[str]] = {keyword_id: [] for keyword_id in common}
    if connection.vendor == "postgresql":
        from django.contrib.postgres.aggregates import ArrayAgg, StringAgg

        joined = (
            snapshots.values("keyword_id")
            .annotate(
                documents=StringAgg("doc_id", delimiter=SEPARATOR, order_by="position"),
                count=Count("id"),
            )
            .values_list("keyword_id", "documents", "count")
            .order_by()
        )
        unclear = []
        for keyword_id, documents, count in _fetch(joined):
            if keyword_id in lists:
                lists[keyword_id] = documents.split(SEPARATOR)
                if len(lists[keyword_id]) != count:
                    unclear.append(keyword_id)
        if unclear:
            for keyword_id, documents in _fetch(
                Snapshot.objects.filter(keyword_id__in=unclear)
                .values("keyword_id")
                .annotate(documents=ArrayAgg("doc_id", order_by="position"))
                .values_list("keyword_id", "documents")
                .order_by()
            ):
                lists[keyword_id] = documents
        return lists
    for keyword_id, document in _fetch(
        snapshots.order_by("keyword_id", "position").values_list("keyword_id", "doc_id")
    ):
        documents = lists.get(keyword_id)
        if documents is not None:
            documents.append(document)
    return lists


@dataclass(frozen=True)
class _Loaded:
    ids: list[int]
    keyword_ids: list[list[int]]  # per evaluation, the common keywords' ids in row order
    values: dict[tuple[int, MetricKey], np.ndarray]
    lists: dict[int, list[str]]
    many_keywords: bool

    def matrix(self, index: int, keys: list[MetricKey]) -> np.ndarray:
        size = len(self.keyword_ids[0])
        if not keys:
            return np.empty((size, 0))
        return np.column_stack([self.values[(index, key)] for key in keys])

    def result_lists(self, index: int) -> list[list[str]]:
        return [self.lists[keyword_id] for keyword_id in self.keyword_ids[index]]


def _pair(
    baseline: Evaluation,
    candidate: Evaluation,
    keys: list[MetricKey],
    loaded: _Loaded,
    settings: Settings,
) -> PairComparison:
    index = loaded.ids.index(candidate.id)
    baseline_values = loaded.matrix(0, keys)
    candidate_values = loaded.matrix(index, keys)
    results = stats.compare_paired(
        baseline_values,
        candidate_values,
        samples=settings.samples,
        permutations=settings.permutations,
        confidence=settings.confidence,
        seed=settings.seed,
    )
    metrics = []
    for (metric, k), result in zip(keys, results, strict=True):
        label = engine.metric_label(metric, k, many_keywords=loaded.many_keywords)
        bar = None
        if result.difference is not None and result.ci_low is not None:
            bar = difference_bar(result.difference, result.ci_low, result.ci_high or 0.0)
        metrics.append(
            MetricComparison(
                metric,
                k,
                label,
                result,
                excluded=len(baseline_values) - result.compared,
                sentence=verdict(
                    baseline=baseline.name, candidate=candidate.name, label=label, result=result
                ),
                bar=bar,
            )
        )
    tau, rbo = ranking.rank_agreement(
        loaded.result_lists(0), loaded.result_lists(index), settings.rbo_persistence
    )
    return PairComparison(candidate, metrics, baseline_values, candidate_values, tau, rbo)
