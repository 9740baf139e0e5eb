"""Stage 1 and stage 2 over many keywords at once: the numpy twin of aggregate.py and
formulas.py, used by batch.py; each metric's definition (metrics.py) names its batch
formula here.

Each keyword is a row of a keywords x positions matrix (NaN = null). Formulas loop over
ranks, never over keywords, and add terms rank 1 first like the per-keyword loops so the
floats come out bit for bit the same (see batch.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property

import numpy as np

from .conventions import RECALL_LEVELS, TREC, WHOLE_LIST
from .formulas import (
    ERR_MAX_GAIN,
    GEOMETRIC_FLOOR,
    INFERRED_EPSILON,
    err_018_rank_factor,
    exponential_gain,
    rank_discount,
    rbp_weight,
)
from .scales import Scale

FloatArray = np.ndarray  # float64; NaN marks null


# --- stage 1 ------------------------------------------------------------------------


class StageOneMatrix:
    """Stage-1 values of every keyword on one scale (keywords x positions, NaN = null),
    and the derived matrices the formulas share, each computed once on first use.

    ``unretrieved``: the values of each keyword's judged documents that are not among
    its results (keywords x documents, NaN = padding), which the trec profile counts in
    R and in the ideal ranking; ``snapshot_counts``: each keyword's number of results.
    """

    def __init__(
        self,
        grades: FloatArray,
        scale: Scale,
        *,
        snapshot_counts: np.ndarray,
        unretrieved: FloatArray,
        listed_counts: np.ndarray | None = None,
        unjudged_in_pool: np.ndarray | None = None,
        pooled_anywhere: np.ndarray | None = None,
    ) -> None:
        self.grades = grades
        self.scale = scale
        self.snapshot_counts = snapshot_counts
        self.unretrieved = unretrieved
        # On a condensed list, how many results each keyword had before condensing.
        self.listed_counts = snapshot_counts if listed_counts is None else listed_counts
        # Documents of the pool nobody judged (pool.py): per result, for infAP, and per
        # keyword, which makes a keyword judged under trec.
        positions = grades.shape[:2]
        self.unjudged_in_pool = (
            np.zeros(positions, dtype=bool) if unjudged_in_pool is None else unjudged_in_pool
        )
        self.pooled_anywhere = (
            np.zeros(positions[0], dtype=bool) if pooled_anywhere is None else pooled_anywhere
        )
        # Matrices several formulas read at one (k, profile), made by the first of them.
        self.shared: dict[tuple[str, int, str], FloatArray] = {}
        if grades.shape[2] == 1:
            # One slot per snapshot: the vote or the mean of one grade is that grade.
            self.values = grades[:, :, 0]
        elif scale.name == "binary":
            ones = (grades == 1).sum(axis=2)
            zeros = self.slot_counts - ones
            self.values = np.where(ones > zeros, 1.0, np.where(zeros > ones, 0.0, np.nan))
        else:
            self.values = self.grade_sums / self.slot_counts

    @cached_property
    def slot_counts(self) -> np.ndarray:
        return (~np.isnan(self.grades)).sum(axis=2)

    @cached_property
    def grade_sums(self) -> FloatArray:
        # Sums of a few small integers are exact in float64, in any order.
        return np.nansum(self.grades, axis=2)

    @cached_property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.values)

    @cached_property
    def any_judged(self) -> np.ndarray:
        return np.asarray(self.judged.any(axis=1))

    @cached_property
    def relevant(self) -> np.ndarray:
        return np.equal(self.values, 1.0)

    @cached_property
    def relevant_total(self) -> np.ndarray:
        return self.relevant.sum(axis=1)

    @cached_property
    def has_results(self) -> np.ndarray:
        return np.asarray(self.snapshot_counts > 0)

    @cached_property
    def unretrieved_judged(self) -> np.ndarray:
        return np.asarray((~np.isnan(self.unretrieved)).any(axis=1))

    @cached_property
    def relevant_in_pool(self) -> np.ndarray:
        """R of the trec profile: relevant results and relevant unretrieved documents."""
        return self.relevant_total + np.equal(self.unretrieved, 1.0).sum(axis=1)

    @cached_property
    def linear_gains(self) -> FloatArray:
        return np.nan_to_num(self.values, nan=0.0)

    @cached_property
    def unretrieved_linear_gains(self) -> FloatArray:
        return np.nan_to_num(self.unretrieved, nan=0.0)

    @cached_property
    def unretrieved_exponential_gains(self) -> FloatArray:
        # Whole grades, one each: Python's 2^v - 1 per distinct grade (module docstring).
        gains = np.zeros(self.unretrieved.shape)
        for grade in np.unique(self.unretrieved[~np.isnan(self.unretrieved)]).tolist():
            gains[self.unretrieved == grade] = exponential_gain(grade)
        return gains

    @cached_property
    def exponential_gains(self) -> FloatArray:
        # A value is grade_sum / slot_count, so there are few distinct values: tabulate
        # Python's 2^v - 1 per (sum, count) pair and look it up (see module docstring).
        max_slots = int(self.slot_counts.max(initial=0))
        max_sum = max(self.scale.highest, 0) * max_slots
        min_sum = min(self.scale.lowest, 0) * max_slots  # below 0 on a custom scale
        table = np.array(
            [
                [
                    exponential_gain(total / count) if count else 0.0
                    for count in range(max_slots + 1)
                ]
                for total in range(min_sum, max_sum + 1)
            ]
        )
        return table[(self.grade_sums - min_sum).astype(np.intp), self.slot_counts]

    def ideal_gains(self, gains: FloatArray) -> FloatArray:
        """Each row's gains sorted descending."""
        return np.sort(gains, axis=1)[:, ::-1]

    # The trec profile's ideal rankings: the whole pool (results and judged unretrieved
    # documents) sorted, once per gain however many cutoffs read it; gains below 0 (a
    # custom scale's negative levels) count as 0, as trec_eval counts them.
    @cached_property
    def pool_ideal_linear_gains(self) -> FloatArray:
        pool = np.concatenate([self.linear_gains, self.unretrieved_linear_gains], axis=1)
        return self.ideal_gains(np.maximum(pool, 0.0))

    @cached_property
    def pool_ideal_exponential_gains(self) -> FloatArray:
        pool = np.concatenate([self.exponential_gains, self.unretrieved_exponential_gains], axis=1)
        return self.ideal_gains(np.maximum(pool, 0.0))


# --- stage 2 ------------------------------------------------------------------------


# (the stage-1 matrix, k, profile) -> one value per keyword.
BatchFormula = Callable[[StageOneMatrix, int, str], FloatArray]


def metric_array(
    metric: str,
    formula: BatchFormula,
    k: int,
    stage: StageOneMatrix,
    profile: str,
    *,
    coverage: bool,
    zero_without_results: bool,
) -> FloatArray:
    """``formula``, the batch formula of ``metric`` (its definition's, metrics.py), with
    the null rules of keyword.metric_value; ``coverage``: a measure of the judgements,
    which reads the nulls themselves."""
    values = formula(stage, k, profile)
    in_qrels_elsewhere = stage.unretrieved_judged | stage.pooled_anywhere
    without_results = ~stage.has_results & in_qrels_elsewhere
    if coverage:
        # Coverage reads the nulls themselves: defined wherever there are results.
        covered = np.where(stage.has_results, values, np.nan)
        return np.where(without_results, 0.0, covered) if zero_without_results else covered
    # The null rules of metric_value: trec needs results and a judgement anywhere in the
    # pool, searchtweak a judgement in the top k; a keyword without results is 0 when
    # asked for and it has judgements, else null.
    if profile == TREC:
        judged = stage.has_results & (stage.any_judged | in_qrels_elsewhere)
    else:
        judged = stage.judged[:, _upto(k)].any(axis=1)
    scored = np.where(judged, values, np.nan)
    if zero_without_results:
        scored = np.where(without_results, _without_results(metric, stage, profile), scored)
    if profile == TREC:
        # A condensed list that lost every result scores as a judged query without results
        # (formulas.emptied_by_condensing).
        emptied = (stage.listed_counts > 0) & without_results
        scored = np.where(emptied, _without_results(metric, stage, profile), scored)
    return scored


def _without_results(metric: str, stage: StageOneMatrix, profile: str) -> FloatArray | float:
    """formulas.value_without_results for every keyword (read only where one has none)."""
    if metric == "gm_ap":
        return math.log(GEOMETRIC_FLOOR)
    if metric == "num_rel" and profile == TREC:
        return stage.relevant_in_pool.astype(float)
    return 0.0


def _upto(k: int) -> slice:
    """The columns of the top k (all of them for the whole list)."""
    return slice(None if k == WHOLE_LIST else k)


def _sum_by_rank(terms: FloatArray) -> FloatArray:
    """Row sums added rank 1 first, in the per-keyword path's order."""
    total = np.zeros(terms.shape[0])
    for column in terms.T:
        total += column
    return total


def _ranks(count: int) -> np.ndarray:
    return np.arange(1, count + 1)


def precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant_in_top = stage.relevant[:, _upto(k)].sum(axis=1)
    if profile == TREC:
        # Why k, and the whole list's number of results: see formulas.precision.
        return relevant_in_top / (stage.snapshot_counts if k == WHOLE_LIST else k)
    return relevant_in_top / stage.judged[:, _upto(k)].sum(axis=1)


def average_precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant = stage.relevant[:, _upto(k)]
    relevant_so_far = relevant.cumsum(axis=1)
    total = _sum_by_rank(np.where(relevant, relevant_so_far / _ranks(relevant.shape[1]), 0.0))
    divisor = stage.relevant_in_pool if profile == TREC else relevant.sum(axis=1)
    return np.where(divisor > 0, total / divisor, 0.0)


def inferred_average_precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    """formulas.inferred_average_precision, term for term."""
    relevant = stage.relevant[:, _upto(k)]
    judged = stage.judged[:, _upto(k)]
    pooled = judged | stage.unjudged_in_pool[:, _upto(k)]
    ranks = _ranks(relevant.shape[1])
    # Counts above each rank: the running count less the rank's own.
    relevant_above = relevant.cumsum(axis=1) - relevant
    sampled = (relevant_above + INFERRED_EPSILON) / (
        judged.cumsum(axis=1) - judged + 2 * INFERRED_EPSILON
    )
    terms = 1.0 / ranks + (pooled.cumsum(axis=1) - pooled) / ranks * sampled
    terms[:, :1] = 1.0  # the first rank has nothing above it to infer from
    total = _sum_by_rank(np.where(relevant, terms, 0.0))
    to_find = _to_find(stage, profile)
    return np.where(to_find > 0, total / to_find, _undefined_without_relevant(profile))


def log_average_precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    # math.log per value, not numpy's: both paths must give the same bits (batch.py).
    average_precisions = np.maximum(average_precision(stage, k, profile), GEOMETRIC_FLOOR)
    return np.array([math.log(value) for value in average_precisions.tolist()])


def reciprocal_rank(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant = stage.relevant[:, _upto(k)]
    if relevant.shape[1] == 0:  # argmax cannot look at zero positions
        return np.zeros(len(relevant))
    first = relevant.argmax(axis=1) + 1
    return np.where(relevant.any(axis=1), 1 / first, 0.0)


def recall(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    to_find = stage.relevant_in_pool if profile == TREC else stage.relevant_total
    found = stage.relevant[:, _upto(k)].sum(axis=1) / to_find
    none_to_find = 0.0 if profile == TREC else np.nan
    return np.where(to_find > 0, found, none_to_find)


def f1(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    p = precision(stage, k, profile)
    r = recall(stage, k, profile)
    # A NaN recall stays NaN: NaN == 0 is false and 2pr/(p+r) is NaN.
    return np.where(p + r == 0, 0.0, 2 * p * r / (p + r))


def success(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return np.asarray(stage.relevant[:, _upto(k)].any(axis=1), dtype=np.float64)


def r_precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    to_find = stage.relevant_in_pool if profile == TREC else stage.relevant_total
    top = stage.relevant[:, _upto(k)]
    # Relevant results among each row's first min(R, k) positions: the running count of
    # relevant results, read at that column (a leading 0 column for R = 0).
    running = np.concatenate([np.zeros((len(top), 1)), top.cumsum(axis=1)], axis=1)
    found = running[np.arange(len(top)), np.minimum(to_find, top.shape[1])]
    none_to_find = 0.0 if profile == TREC else np.nan
    return np.where(to_find > 0, found / to_find, none_to_find)


def _to_find(stage: StageOneMatrix, profile: str) -> np.ndarray:
    """R: the relevant documents of each keyword's pool (see formulas.py)."""
    return stage.relevant_in_pool if profile == TREC else stage.relevant_total


def relevant_count(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _to_find(stage, profile).astype(np.float64)


def retrieved_count(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    counts = stage.snapshot_counts
    return (counts if k == WHOLE_LIST else np.minimum(counts, k)).astype(np.float64)


def relevant_retrieved_count(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return stage.relevant[:, _upto(k)].sum(axis=1).astype(np.float64)


def _undefined_without_relevant(profile: str) -> float:
    # As recall: searchtweak says "undefined" when nothing is relevant, trec_eval 0.
    return 0.0 if profile == TREC else np.nan


def bpref(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    to_find = _to_find(stage, profile)
    judged_non_relevant = np.equal(stage.values, 0.0).sum(axis=1)
    if profile == TREC:
        judged_non_relevant = judged_non_relevant + np.equal(stage.unretrieved, 0.0).sum(axis=1)
    worst = np.minimum(to_find, judged_non_relevant)
    total = np.zeros(len(to_find))
    above = np.zeros(len(to_find), dtype=np.intp)
    for values in stage.values[:, _upto(k)].T:
        relevant = values == 1.0
        # formulas.bpref's share, vectorised: 1, or 1 - min(above, R) / min(R, N).
        share = np.where(above == 0, 1.0, 1.0 - np.minimum(above, to_find) / np.maximum(worst, 1))
        total += np.where(relevant, share, 0.0)
        above += values == 0.0
    return np.where(to_find > 0, total / to_find, _undefined_without_relevant(profile))


def _interpolated_precisions(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    """keywords x RECALL_LEVELS: interpolated precision at each level (formulas.py),
    computed once per (k, profile) however many of the levels are asked for."""
    key = ("interpolated_precisions", k, profile)
    if key not in stage.shared:
        stage.shared[key] = _compute_interpolated_precisions(stage, k, profile)
    return stage.shared[key]


def _compute_interpolated_precisions(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant = stage.relevant[:, _upto(k)]
    levels = np.zeros((len(relevant), len(RECALL_LEVELS)))
    if relevant.shape[1] == 0:
        return levels
    to_find = _to_find(stage, profile)
    found = relevant.cumsum(axis=1)
    found_total = found[:, -1]
    precision_here = np.where(relevant, found / _ranks(relevant.shape[1]), 0.0)
    # best_below[:, i]: the best precision at a relevant rank i + 1 or below it.
    best_below = np.maximum.accumulate(precision_here[:, ::-1], axis=1)[:, ::-1]
    rows = np.arange(len(relevant))
    for column, level in enumerate(RECALL_LEVELS):
        # relevant_needed, vectorised: the same float arithmetic, truncated.
        needed = (level / 100 * to_find + 0.9).astype(np.intp)
        # Read at the rank of the max(needed, 1)-th relevant result.
        rank_index = np.argmax(found >= np.maximum(needed, 1)[:, None], axis=1)
        reached = (needed <= found_total) & (found_total > 0)
        levels[:, column] = np.where(reached, best_below[rows, rank_index], 0.0)
    return levels


def interpolated_precision_at(level: int) -> BatchFormula:
    column = RECALL_LEVELS.index(level)

    def formula(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
        to_find = _to_find(stage, profile)
        values = _interpolated_precisions(stage, k, profile)[:, column]
        return np.where(to_find > 0, values, _undefined_without_relevant(profile))

    return formula


def eleven_point_average(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    to_find = _to_find(stage, profile)
    total = _sum_by_rank(_interpolated_precisions(stage, k, profile))
    return np.where(to_find > 0, total / len(RECALL_LEVELS), _undefined_without_relevant(profile))


def _rbp_weights(count: int, persistence: float) -> FloatArray:
    return np.array([rbp_weight(rank, persistence) for rank in range(1, count + 1)])


def rank_biased_precision(persistence: float) -> BatchFormula:
    def formula(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
        relevant = stage.relevant[:, _upto(k)]
        return _sum_by_rank(np.where(relevant, _rbp_weights(relevant.shape[1], persistence), 0.0))

    return formula


def rbp_residual(persistence: float) -> BatchFormula:
    def formula(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
        # Padding is NaN too: only a keyword's own results may count as unjudged.
        top = stage.values[:, _upto(k)]
        shown = retrieved_count(stage, k, profile).astype(np.intp)
        really_there = _ranks(top.shape[1]) <= shown[:, None]
        unjudged = np.isnan(top) & really_there
        within = _sum_by_rank(np.where(unjudged, _rbp_weights(top.shape[1], persistence), 0.0))
        beyond = np.array([persistence**n for n in range(int(shown.max(initial=0)) + 1)])
        return within + beyond[shown]

    return formula


def judged_share(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    shown = retrieved_count(stage, k, profile)
    return stage.judged[:, _upto(k)].sum(axis=1) / shown


def unjudged_count(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return retrieved_count(stage, k, profile) - stage.judged[:, _upto(k)].sum(axis=1)


def cumulative_gain(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _sum_by_rank(stage.linear_gains[:, _upto(k)])


def _discounted_sum(gains: FloatArray) -> FloatArray:
    discounts = np.array([rank_discount(rank) for rank in _ranks(gains.shape[1]).tolist()])
    return _sum_by_rank(gains / discounts)


def _normalised(
    gains: FloatArray,
    pool_ideal: Callable[[], FloatArray],
    k: int,
    stage: StageOneMatrix,
    profile: str,
) -> FloatArray:
    """Discounted gains over the ideal's: under trec the pool's ideal (`pool_ideal`, read
    only then), under searchtweak the top k sorted."""
    top = gains[:, _upto(k)]
    if profile == TREC:
        # trec_eval adds only positive gains: a negative level counts as 0.
        top = np.maximum(top, 0.0)
        ideal = pool_ideal()[:, _upto(k)]
    else:
        ideal = stage.ideal_gains(top)
    ideal_dcg = _discounted_sum(ideal)
    return np.where(ideal_dcg != 0, _discounted_sum(top) / ideal_dcg, 0.0)


def dcg(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _discounted_sum(stage.linear_gains[:, _upto(k)])


def ndcg(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _normalised(stage.linear_gains, lambda: stage.pool_ideal_linear_gains, k, stage, profile)


def dcg_exp(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _discounted_sum(stage.exponential_gains[:, _upto(k)])


def ndcg_exp(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _normalised(
        stage.exponential_gains, lambda: stage.pool_ideal_exponential_gains, k, stage, profile
    )


def _expected_reciprocal_rank(
    stage: StageOneMatrix, k: int, rank_factor: Callable[[int], float]
) -> FloatArray:
    stop = stage.exponential_gains[:, _upto(k)] / ERR_MAX_GAIN
    total = np.zeros(len(stop))
    trust = np.ones(len(stop))
    for rank, stop_here in enumerate(stop.T, start=1):
        total += trust * stop_here / rank_factor(rank)
        trust *= 1.0 - stop_here
    return total


def err(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _expected_reciprocal_rank(stage, k, float)


def err_018(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _expected_reciprocal_rank(stage, k, err_018_rank_factor)
