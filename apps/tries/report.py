"""What a try shows: each query's list beside the baseline's, how far they agree, the
metrics from the team's judgement library with judged@k beside each, and the verdict.

Everything is read when asked, so a grade given a second ago (by a person, or an AI
judge filling the holes) counts at once: the library lookup is one statement for every
(query, document) pair of both sides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from apps.engine import CONDENSED, METRICS, metric_label, score_keyword
from apps.evaluations.models import Snapshot
from apps.evaluations.scales import scale_of
from apps.insights.comparison.ranking import rank_agreement
from apps.library.entries import CLICKS, scale_key
from apps.library.grades import LibraryGrade, library_grades
from apps.stats.paired import PairedResult, compare_paired

from .models import Try, TryQuery
from .verdict import Verdict, verdict_of

COVERAGE_GAP = 0.1  # judged@k differing more than this offers the condensed metric

Metric = tuple[str, int]


@dataclass(frozen=True)
class Result:
    doc_id: str
    name: str
    grade: int | None
    basis: str | None  # "decision", "people", "judges" or "clicks"; None: unjudged
    stale: bool
    other_rank: int | None  # 1-based rank in the other list; None: not there


@dataclass
class Side:
    results: list[Result]
    values: dict[Metric, float | None] = field(default_factory=dict)
    judged: dict[int, float | None] = field(default_factory=dict)  # k -> judged@k, a share


@dataclass
class QueryRow:
    text: str
    error: str
    tried: Side | None  # None: not run yet
    baseline: Side | None  # None: the baseline has no list for this query
    tau: float | None = None
    rbo: float | None = None

    @property
    def new(self) -> list[str]:
        return [r.doc_id for r in self.tried.results if r.other_rank is None] if self.tried else []

    @property
    def dropped(self) -> list[str]:
        if self.baseline is None:
            return []
        return [r.doc_id for r in self.baseline.results if r.other_rank is None]


@dataclass(frozen=True)
class MetricLine:
    metric: str
    k: int
    label: str
    tried_mean: float | None
    baseline_mean: float | None
    judged_tried: float | None
    judged_baseline: float | None
    paired: PairedResult | None
    verdict: Verdict
    condensed: MetricLine | None = None  # offered when the two sides' coverage differs


@dataclass(frozen=True)
class TryReport:
    attempt: Try
    baseline_label: str
    queries: list[QueryRow]
    metrics: list[MetricLine]
    tau_mean: float | None
    rbo_mean: float | None
    unjudged: int  # the try's top-k results the library has no grade for
    baseline_unjudged: int  # the baseline's
    bases: dict[str, int]  # how many of the try's graded top-k results rest on each

    @property
    def verdict(self) -> Verdict:
        return self.metrics[0].verdict if self.metrics else Verdict.NO_BASELINE


def try_report(attempt: Try, *, against: Try | None = None, with_clicks: bool = False) -> TryReport:
    """The try against its own baseline, or `against` another try of the team (of any
    model: two rankings side by side before anyone grades). Click models' judgements
    count only `with_clicks` (the lead asks): they are never mixed in silently."""
    queries = list(attempt.queries.order_by("position"))
    texts = [q.text for q in queries]
    if against is not None:
        baseline_lists, baseline_label = _try_lists(against, texts), str(against)
    else:
        baseline_lists, baseline_label = _baseline_lists(attempt, texts)
    scale = scale_key(attempt.scale, attempt.scale_levels)
    pairs = {(q.text, doc["doc_id"]) for q in queries for doc in q.documents}
    pairs |= {(text, doc_id) for text, docs in baseline_lists.items() for doc_id, _ in docs}
    grades = library_grades(team_id=attempt.team_id, pairs=pairs, scale=scale)
    if not with_clicks:
        grades = {pair: grade for pair, grade in grades.items() if grade.basis != CLICKS}
    metrics = [(metric, k) for metric, k in attempt.metrics]
    rows = [_row(attempt, query, baseline_lists, grades) for query in queries]
    _agreement(rows)
    cutoffs = {k or attempt.depth for _metric, k in metrics}
    _score(attempt, rows, [*metrics, *_condensed_twins(metrics)], cutoffs)
    lines = _metric_lines(attempt, rows, metrics, has_baseline=bool(baseline_label))
    top = max(cutoffs, default=attempt.depth)
    unjudged, bases = _coverage([row.tried for row in rows], top)
    baseline_unjudged, _ = _coverage([row.baseline for row in rows], top)
    return TryReport(
        attempt=attempt,
        baseline_label=baseline_label,
        queries=rows,
        metrics=lines,
        tau_mean=_mean([row.tau for row in rows]),
        rbo_mean=_mean([row.rbo for row in rows]),
        unjudged=unjudged,
        baseline_unjudged=baseline_unjudged,
        bases=bases,
    )


def _baseline_lists(
    attempt: Try, texts: Sequence[str]
) -> tuple[dict[str, list[tuple[str, str]]], str]:
    """Per query text, the baseline's (doc id, name) in rank order, and its name."""
    if attempt.baseline_try_id is not None:
        other = attempt.baseline_try
        assert other is not None
        return _try_lists(other, texts), f"try {other.number}"
    evaluation = attempt.baseline_evaluation
    if evaluation is None:
        return {}, ""
    lists: dict[str, list[tuple[str, str]]] = {}
    rows = (
        Snapshot.objects.filter(keyword__evaluation=evaluation, keyword__text__in=texts)
        .order_by("keyword_id", "position")
        .values_list("keyword__text", "doc_id", "name")
    )
    for text, doc_id, name in rows:
        documents = lists.setdefault(text, [])
        if len(documents) < attempt.depth and all(doc_id != seen for seen, _ in documents):
            documents.append((doc_id, name))
    return lists, evaluation.name


def _try_lists(other: Try, texts: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    ran = TryQuery.objects.filter(attempt=other, text__in=texts, ran_at__isnull=False)
    return {query.text: [(doc["doc_id"], doc["name"]) for doc in query.documents] for query in ran}


def _row(
    attempt: Try,
    query: TryQuery,
    baseline_lists: dict[str, list[tuple[str, str]]],
    grades: dict[tuple[str, str], LibraryGrade],
) -> QueryRow:
    baseline_docs = baseline_lists.get(query.text)
    tried_docs = [(doc["doc_id"], doc["name"]) for doc in query.documents]
    tried_ranks = {doc_id: rank for rank, (doc_id, _) in enumerate(tried_docs, 1)}
    baseline_ranks = {doc_id: rank for rank, (doc_id, _) in enumerate(baseline_docs or [], 1)}

    def side(docs: list[tuple[str, str]], other: dict[str, int]) -> Side:
        results = []
        for doc_id, name in docs:
            grade = grades.get((query.text, doc_id))
            results.append(
                Result(
                    doc_id=doc_id,
                    name=name,
                    grade=grade.grade if grade else None,
                    basis=grade.basis if grade else None,
                    stale=bool(grade and grade.stale),
                    other_rank=other.get(doc_id) if baseline_docs is not None else None,
                )
            )
        return Side(results)

    ran = query.ran_at is not None and not query.error
    return QueryRow(
        text=query.text,
        error=query.error,
        tried=side(tried_docs, baseline_ranks) if ran else None,
        baseline=side(baseline_docs, tried_ranks) if baseline_docs is not None else None,
    )


def _agreement(rows: list[QueryRow]) -> None:
    both = [row for row in rows if row.tried is not None and row.baseline is not None]
    if not both:
        return
    taus, rbos = rank_agreement(
        [[r.doc_id for r in row.tried.results] for row in both if row.tried],
        [[r.doc_id for r in row.baseline.results] for row in both if row.baseline],
    )
    for row, tau, rbo in zip(both, taus, rbos, strict=True):
        row.tau = None if math.isnan(tau) else float(tau)
        row.rbo = None if math.isnan(rbo) else float(rbo)


def _condensed_twins(metrics: list[Metric]) -> list[Metric]:
    return [
        (metric + CONDENSED, k)
        for metric, k in metrics
        if not metric.endswith(CONDENSED) and metric + CONDENSED in METRICS
    ]


def _score(attempt: Try, rows: list[QueryRow], metrics: list[Metric], cutoffs: set[int]) -> None:
    scale = scale_of(attempt.scale, attempt.scale_levels)
    for row in rows:
        for side in (row.tried, row.baseline):
            if side is None:
                continue
            grades = [[r.grade] if r.grade is not None else [] for r in side.results]
            score = score_keyword(grades, scale=scale, metrics=metrics, profile=attempt.profile)
            side.values = dict(score.metrics)
            for k in cutoffs:
                top = side.results[:k]
                share = sum(r.grade is not None for r in top) / len(top) if top else None
                side.judged[k] = share


def _judged(side: Side, k: int, depth: int) -> float | None:
    return side.judged.get(k or depth)


def _metric_lines(
    attempt: Try, rows: list[QueryRow], metrics: list[Metric], *, has_baseline: bool
) -> list[MetricLine]:
    lines = []
    for metric, k in metrics:
        line = _metric_line(attempt, rows, (metric, k), has_baseline=has_baseline)
        twin = (metric + CONDENSED, k)
        gap = abs((line.judged_tried or 0.0) - (line.judged_baseline or 0.0))
        if has_baseline and gap > COVERAGE_GAP and twin in _condensed_twins([(metric, k)]):
            condensed = _metric_line(attempt, rows, twin, has_baseline=True)
            line = replace(line, condensed=condensed)
        lines.append(line)
    return lines


def _metric_line(
    attempt: Try, rows: list[QueryRow], wanted: Metric, *, has_baseline: bool
) -> MetricLine:
    metric, k = wanted
    tried = [row.tried.values.get(wanted) if row.tried else None for row in rows]
    baseline = [row.baseline.values.get(wanted) if row.baseline else None for row in rows]
    judged_tried = _mean([_judged(row.tried, k, attempt.depth) for row in rows if row.tried])
    judged_baseline = _mean(
        [_judged(row.baseline, k, attempt.depth) for row in rows if row.baseline]
    )
    paired = None
    if has_baseline:
        matrix_tried = np.array([[np.nan if v is None else v] for v in tried], dtype=np.float64)
        matrix_baseline = np.array(
            [[np.nan if v is None else v] for v in baseline], dtype=np.float64
        )
        paired = compare_paired(matrix_baseline, matrix_tried)[0] if rows else None
    return MetricLine(
        metric=metric,
        k=k,
        label=metric_label(metric, k),
        tried_mean=_mean(tried),
        baseline_mean=_mean(baseline),
        judged_tried=judged_tried,
        judged_baseline=judged_baseline,
        paired=paired,
        verdict=verdict_of(paired, judged_try=judged_tried, judged_baseline=judged_baseline),
    )


def _coverage(sides: list[Side | None], k: int) -> tuple[int, dict[str, int]]:
    """How many of the sides' top-k results are unjudged, and whose grades the rest are."""
    unjudged = 0
    bases: dict[str, int] = {}
    for side in sides:
        for result in side.results[:k] if side else []:
            if result.basis is None:
                unjudged += 1
            else:
                key = f"{result.basis} (stale)" if result.stale else result.basis
                bases[key] = bases.get(key, 0) + 1
    return unjudged, bases


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None
