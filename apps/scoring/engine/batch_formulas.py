"""Stage 1 and stage 2 over many keywords at once: the numpy twin of aggregate.py and
formulas.py, used by batch.py.

Each keyword is a row of a keywords x positions matrix (NaN = null). Formulas loop over
ranks, never over keywords, and add terms rank 1 first like the per-keyword loops so the
floats come out bit for bit the same (see batch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from .formulas import (
    ERR_MAX_GAIN,
    err_018_rank_factor,
    exponential_gain,
    rank_discount,
)
from .metrics import SEARCHTWEAK, TREC
from .scales import Scale

FloatArray = np.ndarray  # float64; NaN marks null


# --- stage 1 ------------------------------------------------------------------------


class StageOneMatrix:
    """Stage-1 values of every keyword on one scale (keywords x positions, NaN = null),
    and the derived matrices the formulas share, each computed once on first use."""

    def __init__(self, grades: FloatArray, scale: Scale) -> None:
        self.grades = grades
        self.scale = scale
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
    def linear_gains(self) -> FloatArray:
        return np.nan_to_num(self.values, nan=0.0)

    @cached_property
    def exponential_gains(self) -> FloatArray:
        # A value is grade_sum / slot_count, so there are few distinct values: tabulate
        # Python's 2^v - 1 per (sum, count) pair and look it up (see module docstring).
        max_slots = int(self.slot_counts.max(initial=0))
        max_sum = self.scale.highest * max_slots
        table = np.array(
            [
                [
                    exponential_gain(total / count) if count else 0.0
                    for count in range(max_slots + 1)
                ]
                for total in range(max_sum + 1)
            ]
        )
        return table[self.grade_sums.astype(np.intp), self.slot_counts]

    def ideal_gains(self, gains: FloatArray) -> FloatArray:
        """Each row's gains sorted descending."""
        return np.sort(gains, axis=1)[:, ::-1]


# --- stage 2 ------------------------------------------------------------------------


def metric_array(metric: str, k: int, stage: StageOneMatrix, profile: str) -> FloatArray:
    values = BATCH_FORMULAS[metric](stage, k, profile)
    # The null rule of metric_value: trec needs a judgement anywhere, searchtweak in the top k.
    judged = stage.any_judged if profile == TREC else stage.judged[:, :k].any(axis=1)
    return np.where(judged, values, np.nan)


def _sum_by_rank(terms: FloatArray) -> FloatArray:
    """Row sums added rank 1 first, in the per-keyword path's order."""
    total = np.zeros(terms.shape[0])
    for column in terms.T:
        total += column
    return total


def _ranks(count: int) -> np.ndarray:
    return np.arange(1, count + 1)


def _precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant_in_top = stage.relevant[:, :k].sum(axis=1)
    if profile == TREC:
        return relevant_in_top / k  # why k: see formulas.precision
    return relevant_in_top / stage.judged[:, :k].sum(axis=1)


def _average_precision(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant = stage.relevant[:, :k]
    relevant_so_far = relevant.cumsum(axis=1)
    total = _sum_by_rank(np.where(relevant, relevant_so_far / _ranks(relevant.shape[1]), 0.0))
    divisor = stage.relevant_total if profile == TREC else relevant.sum(axis=1)
    return np.where(divisor > 0, total / divisor, 0.0)


def _reciprocal_rank(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    relevant = stage.relevant[:, :k]
    if relevant.shape[1] == 0:  # argmax cannot look at zero positions
        return np.zeros(len(relevant))
    first = relevant.argmax(axis=1) + 1
    return np.where(relevant.any(axis=1), 1 / first, 0.0)


def _recall(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    found = stage.relevant[:, :k].sum(axis=1) / stage.relevant_total
    none_to_find = 0.0 if profile == TREC else np.nan
    return np.where(stage.relevant_total > 0, found, none_to_find)


def _f1(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    p = _precision(stage, k, profile)
    r = _recall(stage, k, profile)
    # A NaN recall stays NaN: NaN == 0 is false and 2pr/(p+r) is NaN.
    return np.where(p + r == 0, 0.0, 2 * p * r / (p + r))


def _cumulative_gain(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _sum_by_rank(stage.linear_gains[:, :k])


def _discounted_sum(gains: FloatArray) -> FloatArray:
    discounts = np.array([rank_discount(rank) for rank in _ranks(gains.shape[1]).tolist()])
    return _sum_by_rank(gains / discounts)


def _normalised(gains: FloatArray, k: int, stage: StageOneMatrix, profile: str) -> FloatArray:
    top = gains[:, :k]
    ideal = stage.ideal_gains(gains)[:, :k] if profile == TREC else stage.ideal_gains(top)
    ideal_dcg = _discounted_sum(ideal)
    return np.where(ideal_dcg != 0, _discounted_sum(top) / ideal_dcg, 0.0)


def _dcg(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _discounted_sum(stage.linear_gains[:, :k])


def _ndcg(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _normalised(stage.linear_gains, k, stage, profile)


def _ndcg_detail(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    # As formulas.ndcg_detail: the detail metrics follow searchtweak in both profiles.
    return _normalised(stage.linear_gains, k, stage, SEARCHTWEAK)


def _dcg_exp(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _discounted_sum(stage.exponential_gains[:, :k])


def _ndcg_exp(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _normalised(stage.exponential_gains, k, stage, profile)


def _expected_reciprocal_rank(
    stage: StageOneMatrix, k: int, rank_factor: Callable[[int], float]
) -> FloatArray:
    stop = stage.exponential_gains[:, :k] / ERR_MAX_GAIN
    total = np.zeros(len(stop))
    trust = np.ones(len(stop))
    for rank, stop_here in enumerate(stop.T, start=1):
        total += trust * stop_here / rank_factor(rank)
        trust *= 1.0 - stop_here
    return total


def _err(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _expected_reciprocal_rank(stage, k, float)


def _err_018(stage: StageOneMatrix, k: int, profile: str) -> FloatArray:
    return _expected_reciprocal_rank(stage, k, err_018_rank_factor)


BATCH_FORMULAS: dict[str, Callable[[StageOneMatrix, int, str], FloatArray]] = {
    "precision": _precision,
    "ap": _average_precision,
    "rr": _reciprocal_rank,
    "recall": _recall,
    "f1": _f1,
    "cg": _cumulative_gain,
    "dcg": _dcg,
    "ndcg": _ndcg,
    "dcg_exp": _dcg_exp,
    "ndcg_exp": _ndcg_exp,
    "err": _err,
    "err_018": _err_018,
    "cg_d": _cumulative_gain,
    "dcg_d": _dcg,
    "ndcg_d": _ndcg_detail,
}
