"""Load evaluations of one team and compare them over their common keywords.

Five queries whatever the size: the evaluations, the metrics they report, their
keywords, the keywords' metric values, and the result lists (doc ids in position order).
Keywords are matched by their exact text; the common keywords are those every selected
evaluation has, in the baseline's keyword order. The first evaluation is the baseline and
every other one is compared with it, on each (metric, k) both report.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, QuerySet
from django.http import Http404

from apps import engine
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id
from apps.evaluations.metric_list import metric_text, parse_metric_list
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
)
from apps.evaluations.source_mix import SourceMix, evaluation_mixes
from apps.scoring.models import KeywordMetric
from apps.stats import paired as stats
from apps.stats.power import detectable_change

from ..coverage import Coverage, coverage_of_keywords
from . import ranking
from .chart import DifferenceBar, difference_bar
from .wording import coverage_warning, methods_disagree, verdict

MAX_EVALUATIONS = 6

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


# The power a comparison's detectable change is given at (the usual planning target).
DETECTABLE_POWER = 0.8


@dataclass(frozen=True)
class MetricComparison:
    metric: str
    k: int
    label: str
    result: stats.PairedResult
    excluded: int  # common keywords left out: no value in one of the two evaluations
    sentence: str
    bar: DifferenceBar | None
    # Over the common keywords, at the metric's k: how much of each top k is judged.
    baseline_coverage: Coverage | None = None
    candidate_coverage: Coverage | None = None
    # Said when the two coverages differ enough to bias this metric's comparison.
    coverage_warning: str = ""
    # The smallest mean change these keywords detect with 80 % power at p < 0.05, from the
    # spread of the observed differences (apps/stats/power.py); None below two keywords.
    detectable: float | None = None

    @property
    def key(self) -> str:
        return metric_text(self.metric, self.k)

    @property
    def ranks(self) -> bool:
        """False for a count or a residual: its difference is neither better nor worse."""
        return engine.get_metric(self.metric).ranks

    @property
    def methods_note(self) -> str:
        """Why the interval and the test disagree on this metric, when they do."""
        return methods_disagree(self.result, geometric=self.geometric)

    @property
    def geometric(self) -> bool:
        """GMAP: the keyword values are logarithms, so the statistics run on them (the
        paired test of log AP is GMAP's), and a lead reads the means as exp of theirs and
        the difference, with its interval, as the ratio of the two GMAPs."""
        return engine.get_metric(self.metric).geometric

    @property
    def shown_means(self) -> tuple[float | None, float | None]:
        """(baseline, candidate) as the evaluation page shows them (GMAP: exp of the mean)."""
        baseline, candidate = self.result.baseline_mean, self.result.candidate_mean
        if not self.geometric:
            return baseline, candidate
        return (
            None if baseline is None else math.exp(baseline),
            None if candidate is None else math.exp(candidate),
        )


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
    # Whose grades each evaluation's numbers rest on (source_mix.py).
    mixes: dict[int, SourceMix] = field(default_factory=dict)
    # Only the common keywords no AI judge or click model graded on any side (people_only).
    people_only: bool = False
    people_keywords: int = 0  # how many common keywords that leaves (or would leave)

    @property
    def evaluations_with_counts(self) -> list[tuple[Evaluation, int]]:
        return [(e, self.keyword_counts[e.id]) for e in self.evaluations]

    @property
    def evaluations_with_mixes(self) -> list[tuple[Evaluation, int, SourceMix]]:
        return [(e, self.keyword_counts[e.id], self.mixes[e.id]) for e in self.evaluations]

    @property
    def sources_differ(self) -> bool:
        """The sides were judged by different sources (people against an AI judge, or
        other judges): a difference may be the judges', not the rankings'."""
        return sources_differ([self.mixes[e.id] for e in self.evaluations])

    def pair_with(self, evaluation_id: int) -> PairComparison | None:
        return next((p for p in self.pairs if p.candidate.id == evaluation_id), None)


def _mean_or_none(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else None


def parse_evaluation_ids(values: Sequence[str], *, field: str) -> list[int]:
    """Evaluation ids as given (the first is the baseline); InvalidInput names `field`."""
    ids: list[int] = []
    for text in (value.strip() for value in values):
        number = parse_id(text)
        if number is None:
            raise InvalidInput([f"{field}: {text[:40]!r} is not an evaluation id"])
        if number in ids:
            raise InvalidInput([f"{field}: evaluation {text} is chosen twice"])
        ids.append(number)
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
    people_only: bool = False,
) -> Comparison:
    """Compare the evaluations (the first is the baseline) over their common keywords;
    with `people_only`, over those of them that no AI judge or click model graded on any
    side, so the numbers compared rest on people's grades alone.

    `metrics` limits the comparison to these (metric, k); each must be reported by the
    baseline and at least one other evaluation, else InvalidInput names `metric_field`.
    """
    settings = settings or Settings()
    evaluations = team_evaluations_in_order(team_id=team_id, ids=evaluation_ids)
    ids = [e.id for e in evaluations]
    reported = reported_metrics(ids)
    baseline = evaluations[0]
    if metrics is not None:
        _check_metric_filter(metrics, baseline, evaluations[1:], reported, metric_field)
    mixes = evaluation_mixes(evaluations)
    keyword_ids, texts, counts = _common_keywords(ids)
    people_keywords = len(texts)
    if people_only or sources_differ(list(mixes.values())):
        keyword_ids_by_people, texts_by_people = _graded_by_people_alone(keyword_ids, texts)
        people_keywords = len(texts_by_people)
        if people_only:
            keyword_ids, texts = keyword_ids_by_people, texts_by_people
    wanted = {(ids.index(e), key) for e in ids for key in reported[e]}
    values = _keyword_values(ids, keyword_ids, wanted)
    coverage = _coverage_of_common_keywords(ids, keyword_ids, reported)
    plans = []
    for candidate in evaluations[1:]:
        keys = [
            key
            for key in reported[baseline.id]
            if key in reported[candidate.id] and (metrics is None or key in metrics)
        ]
        index = ids.index(candidate.id)
        plans.append(
            (
                candidate,
                index,
                keys,
                _matrix(values, 0, keys, len(texts)),
                _matrix(values, index, keys, len(texts)),
            )
        )
    # The statistics (numpy, mostly outside the GIL) run in a second thread while this one
    # waits for the result lists from the database and compares them.
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = [
            pool.submit(
                _metric_comparisons,
                baseline,
                candidate,
                keys,
                baseline_values,
                candidate_values,
                settings=settings,
                many_keywords=len(texts) > 1,
            )
            for candidate, _index, keys, baseline_values, candidate_values in plans
        ]
        lists = _result_lists(ids, keyword_ids)
        baseline_lists = [lists[keyword_id] for keyword_id in keyword_ids[0]]
        pairs = []
        for (candidate, index, _keys, baseline_values, candidate_values), future in zip(
            plans, running, strict=True
        ):
            tau, rbo = ranking.rank_agreement(
                baseline_lists,
                [lists[keyword_id] for keyword_id in keyword_ids[index]],
                settings.rbo_persistence,
            )
            metrics_compared = with_coverage(
                with_detectable(future.result(), baseline_values, candidate_values),
                (baseline.name, coverage[baseline.id]),
                (candidate.name, coverage[candidate.id]),
                many_keywords=len(texts) > 1,
            )
            pairs.append(
                PairComparison(
                    candidate, metrics_compared, baseline_values, candidate_values, tau, rbo
                )
            )
    return Comparison(
        baseline, evaluations, counts, texts, pairs, settings, mixes, people_only, people_keywords
    )


def sources_differ(mixes: Sequence[SourceMix]) -> bool:
    """Whether evaluations with these mixes were judged by different sources: their kinds
    differ (people, AI, clicks, mixed), or AI judges or click models graded them and not
    the same ones."""
    graded = [mix for mix in mixes if mix.graded]
    if len({mix.kind for mix in graded}) > 1:
        return True
    judges = {tuple(sorted(name for name, _count in (*mix.judges, *mix.clicks))) for mix in graded}
    return len(judges) > 1


def _graded_by_people_alone(
    keyword_ids: list[list[int]], texts: list[str]
) -> tuple[list[list[int]], list[str]]:
    """The common keywords (ids per evaluation, texts) that no AI judge or click model
    graded on any side; one query."""
    everyone = [keyword for row in keyword_ids for keyword in row]
    by_judges = set(
        FeedbackSlot.objects.filter(keyword_id__in=everyone, grade__isnull=False)
        .by_machines()
        .values_list("keyword_id", flat=True)
        .distinct()
    )
    kept = [
        column
        for column in range(len(texts))
        if not any(row[column] in by_judges for row in keyword_ids)
    ]
    return [[row[column] for column in kept] for row in keyword_ids], [texts[c] for c in kept]


def _coverage_of_common_keywords(
    ids: list[int], keyword_ids: list[list[int]], reported: dict[int, list[MetricKey]]
) -> dict[int, dict[int, Coverage]]:
    """Evaluation id -> k -> its coverage over the common keywords, at each cutoff its
    metrics use; one query."""
    return coverage_of_keywords(
        dict(zip(ids, keyword_ids, strict=True)),
        {evaluation_id: [k for _metric, k in reported[evaluation_id]] for evaluation_id in ids},
    )


def with_detectable(
    metrics: list[MetricComparison], baseline_values: np.ndarray, candidate_values: np.ndarray
) -> list[MetricComparison]:
    """Each metric comparison with the smallest change its keywords could have detected."""
    found = []
    for column, metric in enumerate(metrics):
        differences = candidate_values[:, column] - baseline_values[:, column]
        differences = differences[~np.isnan(differences)]
        detectable = None
        if len(differences) >= 2:
            spread = float(np.std(differences, ddof=1))
            detectable = detectable_change(
                sd=spread, keywords=len(differences), power=DETECTABLE_POWER
            )
        found.append(replace(metric, detectable=detectable))
    return found


def with_coverage(
    metrics: list[MetricComparison],
    baseline: tuple[str, dict[int, Coverage]],
    candidate: tuple[str, dict[int, Coverage]],
    *,
    many_keywords: bool,
) -> list[MetricComparison]:
    """The metric comparisons with each side's (name, coverage by k) at the metric's k,
    and a warning where it differs enough to bias the comparison (coverage.py)."""
    (baseline_name, baseline_coverage), (candidate_name, candidate_coverage) = baseline, candidate
    return [
        replace(
            metric,
            baseline_coverage=baseline_coverage.get(metric.k),
            candidate_coverage=candidate_coverage.get(metric.k),
            coverage_warning=coverage_warning(
                metric.metric,
                metric.k,
                (baseline_name, baseline_coverage.get(metric.k)),
                (candidate_name, candidate_coverage.get(metric.k)),
                many_keywords=many_keywords,
            ),
        )
        for metric in metrics
    ]


def reported_metrics(ids: list[int]) -> dict[int, list[MetricKey]]:
    """Evaluation id -> the (metric, k) it reports, in its display order; one query."""
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
            shown = metric_text(metric, k)
            problems.append(f"{field}: {shown} is not reported by {baseline.name}")
        elif not any(key in reported[c.id] for c in candidates):
            shown = metric_text(metric, k)
            problems.append(f"{field}: {shown} is not reported by any other evaluation")
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
    """(evaluation index, metric key) -> one value per common keyword, NaN = none.

    The rows (one per keyword and metric, 100,000s for large evaluations) are placed with
    numpy: each row's keyword is found among the common keywords by binary search.
    """
    size = len(keyword_ids[0]) if keyword_ids else 0
    keys = sorted({key for _index, key in wanted})
    table = np.full((len(ids), len(keys), size), np.nan)
    values = {(index, key): table[index, keys.index(key)] for index, key in wanted}
    rows = _fetch(
        KeywordMetric.objects.filter(evaluation_id__in=ids, value__isnull=False)
        .values_list("keyword_id", "metric", "k", "value")
        .order_by()  # the model's ordering would join keywords and sort 100,000s of rows
    )
    if not rows or not size:
        return values
    keyword_column, metric_column, k_column, value_column = zip(*rows, strict=True)
    common = np.array(keyword_ids, dtype=np.int64)  # evaluations x rows
    order = np.argsort(common, axis=None)
    known = common.ravel()[order]
    found = np.fromiter(keyword_column, dtype=np.int64, count=len(rows))
    at = np.minimum(np.searchsorted(known, found), len(known) - 1)
    key_index = {key: number for number, key in enumerate(keys)}
    metric = np.fromiter(
        (key_index.get(key, -1) for key in zip(metric_column, k_column, strict=True)),
        dtype=np.int64,
        count=len(rows),
    )
    keep = (known[at] == found) & (metric >= 0)
    evaluation, row = np.divmod(order[at[keep]], size)
    table[evaluation, metric[keep], row] = np.fromiter(value_column, float, len(rows))[keep]
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
    # comparison_bench.py's data (2 x 10,000 keywords x 20 results), this read alone: median
    # 0.41-0.61 s this way, 0.58-0.92 s a row per result (2026-11-28, a busy machine).
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


def _matrix(
    values: dict[tuple[int, MetricKey], np.ndarray], index: int, keys: list[MetricKey], size: int
) -> np.ndarray:
    """Keywords x metrics of one evaluation (by its index), NaN = no value."""
    if not keys:
        return np.empty((size, 0))
    return np.column_stack([values[(index, key)] for key in keys])


# Sorting or paging the per-keyword table asks for the same comparison again; the
# statistics depend only on the values and the settings, so they are kept a while under a
# digest of both (changed values make another digest).
CACHE_SECONDS = 3600


def _paired_results(
    baseline_values: np.ndarray, candidate_values: np.ndarray, settings: Settings
) -> list[stats.PairedResult]:
    digest = hashlib.blake2b(digest_size=20)
    for values in (baseline_values, candidate_values):
        digest.update(repr(values.shape).encode())
        digest.update(np.ascontiguousarray(values).tobytes())
    digest.update(repr(settings).encode())
    key = f"relevo:comparison:{digest.hexdigest()}"
    results: list[stats.PairedResult] | None = cache.get(key)
    if results is None:
        results = stats.compare_paired(
            baseline_values,
            candidate_values,
            samples=settings.samples,
            permutations=settings.permutations,
            confidence=settings.confidence,
            seed=settings.seed,
        )
        cache.set(key, results, CACHE_SECONDS)
    return results


def _metric_comparisons(
    baseline: Evaluation,
    candidate: Evaluation,
    keys: list[MetricKey],
    baseline_values: np.ndarray,
    candidate_values: np.ndarray,
    *,
    settings: Settings,
    many_keywords: bool,
) -> list[MetricComparison]:
    results = _paired_results(baseline_values, candidate_values, settings)
    metrics = []
    for (metric, k), result in zip(keys, results, strict=True):
        label = engine.metric_label(metric, k, many_keywords=many_keywords)
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
                    baseline=baseline.name,
                    candidate=candidate.name,
                    label=label,
                    result=result,
                    ranks=engine.get_metric(metric).ranks,
                ),
                bar=bar,
            )
        )
    return metrics
