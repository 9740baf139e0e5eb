"""Score one keyword: raw slot grades in, stage-1 values and every requested metric out.

This is the path the app runs after each single grade, so it stays plain Python: for a
few dozen snapshots it is faster than numpy's per-call overhead. ``metric_value`` is
stage 2 of one metric: the null rules, then the metric's formula (its definition's,
metrics.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .aggregate import binary_vote, mean_grade
from .conventions import TREC, check_cutoff, check_profile, cut, split_condensed
from .decisions import Decisions, with_decisions
from .formulas import (
    Formula,
    ReadsUnjudgedPool,
    Values,
    emptied_by_condensing,
    value_without_results,
)
from .metrics import get_metric, metric_scale
from .pool import take_out_unjudged_levels
from .scales import Scale, check_grades, get_scale
from .transformers import resolve_rules

SnapshotGrades = Sequence[Sequence[int | None]]
MetricRequest = tuple[str, int]


@dataclass(frozen=True)
class KeywordScore:
    """``snapshot_values``: stage 1 on the native scale, one per snapshot in position
    order (None = ungraded or tied). ``metrics``: (metric id, k) -> value or None."""

    snapshot_values: list[float | None]
    metrics: dict[MetricRequest, float | None]


def score_keyword(
    snapshot_grades: SnapshotGrades,
    *,
    scale: str | Scale,
    metrics: Sequence[MetricRequest],
    profile: str = "searchtweak",
    rules: Mapping[str, Mapping[int, int]] | None = None,
    decisions: Decisions | None = None,
    unretrieved: Sequence[int] = (),
    zero_without_results: bool = False,
) -> KeywordScore:
    """Score one keyword from the raw grades of its snapshots.

    ``snapshot_grades`` holds, per snapshot in position order, the slot grades on the
    native ``scale`` (None = empty slot). For each metric the raw grades are mapped to
    the metric's scale with the resolved transformer ``rules`` first and only then
    aggregated (stage 1), then the metric is computed (stage 2). Stage 1 runs once per
    scale, however many metrics share it.

    ``decisions``: a lead's grade per snapshot (None = not decided) that replaces the
    snapshot's slot grades in stage 1 (see decisions.py).

    ``unretrieved``: the native grades of judged documents that are not among the
    results, one each; ``zero_without_results``: a keyword without results but with
    judgements scores 0 instead of null (both as ``metric_value`` takes them).

    Raises EngineError for an unknown scale/metric/profile, k < 1, a grade or decision
    that is not on ``scale`` or invalid rules.
    """
    native = get_scale(scale)
    check_profile(profile)
    targets = {}
    for metric, k in metrics:
        targets[metric] = metric_scale(metric, native).name
        check_cutoff(k)
    for slots in snapshot_grades:
        check_grades(slots, native)
    check_grades(unretrieved, native)
    pooled = take_out_unjudged_levels(
        with_decisions(snapshot_grades, decisions, native), unretrieved, native, profile
    )
    snapshot_grades, unretrieved = pooled.snapshot_grades, pooled.unretrieved
    resolved_rules = resolve_rules(native, rules)

    values_by_scale: dict[tuple[str, bool], list[float | None]] = {}
    unretrieved_by_scale: dict[str, list[float]] = {}

    def stage_one(target: str, condensed: bool = False) -> list[float | None]:
        if (target, condensed) not in values_by_scale:
            values_by_scale[(target, condensed)] = snapshot_values_on(
                condensed_grades() if condensed else snapshot_grades,
                source=native.name,
                target=target,
                mapping=resolved_rules[target],
            )
        return values_by_scale[(target, condensed)]

    def condensed_grades() -> SnapshotGrades:
        # The condensed list: the results with a value on the native scale, in order.
        native_values = stage_one(native.name)
        return [
            slots
            for slots, value in zip(snapshot_grades, native_values, strict=True)
            if value is not None
        ]

    def judged_elsewhere(target: str) -> list[float]:
        # One grade each, so stage 1 of an unretrieved document is its mapped grade.
        if target not in unretrieved_by_scale:
            mapping = resolved_rules[target]
            unretrieved_by_scale[target] = [float(mapping[grade]) for grade in unretrieved]
        return unretrieved_by_scale[target]

    results = {}
    for metric, k in metrics:
        target = targets[metric]
        base, condensed = split_condensed(metric)
        values = stage_one(target, condensed)
        if condensed and snapshot_grades and not values:
            elsewhere = judged_elsewhere(target)
            in_qrels = (
                bool(elsewhere) or pooled.unjudged_elsewhere > 0 or any(pooled.unjudged_in_pool)
            )
            results[(metric, k)] = emptied_by_condensing(base, profile, elsewhere, in_qrels)
            continue
        results[(metric, k)] = metric_value(
            base,
            k,
            values,
            profile,
            unretrieved=judged_elsewhere(target),
            zero_without_results=zero_without_results,
            unjudged_in_pool=() if condensed else pooled.unjudged_in_pool,
            unjudged_elsewhere=pooled.unjudged_elsewhere,
        )
    return KeywordScore(snapshot_values=stage_one(native.name), metrics=results)


def metric_value(
    metric: str,
    k: int,
    values: Sequence[float | None],
    profile: str = "searchtweak",
    *,
    unretrieved: Sequence[float] = (),
    zero_without_results: bool = False,
    unjudged_in_pool: Sequence[bool] = (),
    unjudged_elsewhere: int = 0,
) -> float | None:
    """Stage 2: the value of ``metric`` at cutoff ``k`` (WHOLE_LIST: no cutoff) for one
    keyword.

    ``values`` are the stage-1 values of ALL the keyword's snapshots in position order,
    on the metric's scale (None = ungraded or tied); recall and the trec ideal ranking
    look past the cutoff, so this function cuts to ``k`` itself. ``unretrieved`` are the
    values of judged documents that are not among the results (TREC qrels lines for
    documents the run did not retrieve): under `trec` they belong to the pool, counting
    in R and in the ideal ranking as trec_eval counts them; `searchtweak` knows only the
    results. A keyword without results is null, as trec_eval skips a query missing from
    the run, unless ``zero_without_results`` and it has judgements (trec_eval -c).
    Values are not checked against a scale here: the formulas are plain arithmetic and
    also serve examples outside the product's scales.

    A condensed metric (``ndcg_cond``) drops the null values first; a coverage measure
    (judged, unjudged) reads the nulls themselves, so no null rule applies to it.

    ``unjudged_in_pool`` (per result) and ``unjudged_elsewhere`` (a count) say which
    null values are documents in the pool that nobody judged, trec_eval's negative qrels
    levels (pool.py): infAP reads them, and under `trec` they make the keyword judged.
    """
    definition = get_metric(metric)
    check_cutoff(k)
    check_profile(profile)
    metric, condensed = split_condensed(metric)
    # In trec_eval's qrels beyond its judged results: a judged document the search did not
    # return, or a document of the pool nobody judged, retrieved or not.
    qrels_elsewhere = unjudged_elsewhere > 0 or any(value is not None for value in unretrieved)
    in_qrels = qrels_elsewhere or any(unjudged_in_pool)
    if condensed:
        listed = bool(values)
        values = [value for value in values if value is not None]
        unjudged_in_pool = ()  # the condensed list holds judged results only
        if listed and not values:
            return emptied_by_condensing(metric, profile, unretrieved, in_qrels)
    if not values:
        if zero_without_results and qrels_elsewhere:
            return value_without_results(metric, profile, unretrieved)
        return None
    if definition.coverage:
        return _apply(definition.formula, cut(values, k), values, k, profile, ())
    top = cut(values, k)
    pool: Values
    if profile == TREC:
        pool = [*values, *unretrieved]
        # trec_eval evaluates every query that has judgements, however far down they are,
        # and a query whose qrels hold only unjudged pool documents too.
        if not in_qrels and all(value is None for value in values):
            return None
    else:
        pool = values
        if all(value is None for value in top):
            # searchtweak: nothing judged in the top k means there is nothing to report yet.
            return None
    return _apply(definition.formula, top, pool, k, profile, cut(unjudged_in_pool, k))


def _apply(
    formula: Formula | ReadsUnjudgedPool,
    top: Values,
    pool: Values,
    k: int,
    profile: str,
    unjudged_in_pool: Sequence[bool],
) -> float | None:
    if isinstance(formula, ReadsUnjudgedPool):
        return formula.formula(top, pool, profile, unjudged_in_pool)
    return formula(top, pool, k, profile)


def snapshot_values_on(
    snapshot_grades: SnapshotGrades, *, source: str, target: str, mapping: Mapping[int, int]
) -> list[float | None]:
    """Stage-1 values on ``target`` of grades given on ``source`` (already validated):
    transform every raw grade with ``mapping`` first, then vote or average."""
    aggregate = binary_vote if target == "binary" else mean_grade
    if source == target:
        return [aggregate(slots) for slots in snapshot_grades]
    return [
        aggregate([None if grade is None else mapping[grade] for grade in slots])
        for slots in snapshot_grades
    ]
