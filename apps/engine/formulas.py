"""Stage 2 for one keyword: every metric formula in plain Python (metrics.md section 4).

``batch.py`` computes the same formulas over many keywords with numpy. Both paths call
the per-rank helpers defined here and add terms in the same order (rank 1 first), so
they give bit-for-bit the same floats; keep them in step when changing either.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .metrics import TREC, WHOLE_LIST, check_cutoff, check_profile, cut, get_metric

Values = Sequence[float | None]
# (the top k values, the pool, k, profile): the pool is every value the keyword's metric
# may look at past the cutoff: its results, and under trec its judged unretrieved
# documents too.
Formula = Callable[[Values, Values, int, str], float | None]

# ERR reads a grade as the probability that the user stops there: (2^v - 1) / 2^max,
# with max = 3, the top grade of the graded scale ERR is defined on.
ERR_MAX_GAIN = 2.0**3


def metric_value(
    metric: str,
    k: int,
    values: Sequence[float | None],
    profile: str = "searchtweak",
    *,
    unretrieved: Sequence[float] = (),
    zero_without_results: bool = False,
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
    """
    get_metric(metric)
    check_cutoff(k)
    check_profile(profile)
    if not values:
        judged = any(value is not None for value in unretrieved)
        return 0.0 if zero_without_results and judged else None
    top = cut(values, k)
    pool: Values
    if profile == TREC:
        pool = [*values, *unretrieved]
        # trec_eval evaluates every query that has judgements, however far down they are.
        if all(value is None for value in pool):
            return None
    else:
        pool = values
        if all(value is None for value in top):
            # searchtweak: nothing judged in the top k means there is nothing to report yet.
            return None
    return FORMULAS[metric](top, pool, k, profile)


# --- per-rank helpers shared with batch.py ------------------------------------------


def rank_discount(rank: int) -> float:
    """DCG's position discount log2(rank + 1); rank 1 is not discounted."""
    return math.log2(rank + 1)


def err_018_rank_factor(rank: int) -> float:
    """ERR-0.18 divides by rank^0.18, a much gentler decay than ERR's 1/rank."""
    return float(rank) ** 0.18


def exponential_gain(value: float | None) -> float:
    """2^v - 1, the gain that rewards the top grades far more than the middle ones."""
    return 0.0 if value is None else 2.0**value - 1.0


def linear_gain(value: float | None) -> float:
    return 0.0 if value is None else value


def count_relevant(values: Values) -> int:
    return sum(1 for value in values if value == 1)


def count_judged(values: Values) -> int:
    return sum(1 for value in values if value is not None)


# --- binary metrics -------------------------------------------------------------------


def precision(top: Values, pool: Values, k: int, profile: str) -> float:
    if profile == TREC:
        # trec_eval's P_k always divides by k: a list shorter than k, or with unjudged
        # results, is charged for the slots it did not fill with known-relevant results.
        # Over the whole list that is trec_eval's set_P: relevant retrieved / retrieved.
        return count_relevant(top) / (len(top) if k == WHOLE_LIST else k)
    # searchtweak: the share of relevant results among those judged; an ungraded or
    # tied result says nothing either way, so it is left out of the divisor.
    return count_relevant(top) / count_judged(top)


def average_precision(top: Values, pool: Values, k: int, profile: str) -> float:
    total = 0.0
    relevant_so_far = 0
    for rank, value in enumerate(top, start=1):
        if value == 1:
            relevant_so_far += 1
            total += relevant_so_far / rank
    # trec divides by every relevant document in the pool (a relevant result below k, or
    # one the search did not return, lowers AP, as in trec_eval's map_cut); searchtweak
    # only by those it found in k.
    divisor = count_relevant(pool) if profile == TREC else relevant_so_far
    return total / divisor if divisor else 0.0


def reciprocal_rank(top: Values, pool: Values, k: int, profile: str) -> float:
    for rank, value in enumerate(top, start=1):
        if value == 1:
            return 1 / rank
    return 0.0


def recall(top: Values, pool: Values, k: int, profile: str) -> float | None:
    relevant_anywhere = count_relevant(pool)
    if relevant_anywhere == 0:
        # Nothing to recall: searchtweak says "undefined", trec_eval reports 0.
        return 0.0 if profile == TREC else None
    return count_relevant(top) / relevant_anywhere


def f1(top: Values, pool: Values, k: int, profile: str) -> float | None:
    p = precision(top, pool, k, profile)
    r = recall(top, pool, k, profile)
    if r is None:
        return None
    if p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


# --- graded and detail metrics ----------------------------------------------------------


def cumulative_gain(top: Values, pool: Values, k: int, profile: str) -> float:
    total = 0.0
    for value in top:
        total += linear_gain(value)
    return total


def discounted_gain_sum(gains: Sequence[float]) -> float:
    total = 0.0
    for rank, gain in enumerate(gains, start=1):
        total += gain / rank_discount(rank)
    return total


def _normalised_dcg(
    top: Values, pool: Values, k: int, profile: str, gain: Callable[[float | None], float]
) -> float:
    if profile == TREC:
        # trec_eval adds only positive gains: a custom scale's negative level counts as 0.
        gain = _positive(gain)
    gains = [gain(value) for value in top]
    if profile == TREC:
        # trec_eval's ideal ranking is the whole pool sorted: a highly relevant document
        # judged below rank k, or not retrieved at all, still raises the bar the top k is
        # measured against.
        ideal = sorted((gain(value) for value in pool if value is not None), reverse=True)
        ideal = list(cut(ideal, k))
    else:
        ideal = sorted(gains, reverse=True)
    ideal_dcg = discounted_gain_sum(ideal)
    return discounted_gain_sum(gains) / ideal_dcg if ideal_dcg != 0 else 0.0


def _positive(gain: Callable[[float | None], float]) -> Callable[[float | None], float]:
    return lambda value: max(gain(value), 0.0)


def dcg(top: Values, pool: Values, k: int, profile: str) -> float:
    return discounted_gain_sum([linear_gain(value) for value in top])


def ndcg(top: Values, pool: Values, k: int, profile: str) -> float:
    return _normalised_dcg(top, pool, k, profile, linear_gain)


def dcg_exp(top: Values, pool: Values, k: int, profile: str) -> float:
    return discounted_gain_sum([exponential_gain(value) for value in top])


def ndcg_exp(top: Values, pool: Values, k: int, profile: str) -> float:
    return _normalised_dcg(top, pool, k, profile, exponential_gain)


def _expected_reciprocal_rank(top: Values, rank_factor: Callable[[int], float]) -> float:
    # The user scans down and stops at rank i with probability p_i, having not stopped
    # before (trust). ERR is the expected 1/rank_factor of the stopping rank.
    total = 0.0
    trust = 1.0
    for rank, value in enumerate(top, start=1):
        stop = exponential_gain(value) / ERR_MAX_GAIN
        total += trust * stop / rank_factor(rank)
        trust *= 1.0 - stop
    return total


def err(top: Values, pool: Values, k: int, profile: str) -> float:
    return _expected_reciprocal_rank(top, float)


def err_018(top: Values, pool: Values, k: int, profile: str) -> float:
    return _expected_reciprocal_rank(top, err_018_rank_factor)


FORMULAS: dict[str, Formula] = {
    "precision": precision,
    "ap": average_precision,
    "rr": reciprocal_rank,
    "recall": recall,
    "f1": f1,
    "cg": cumulative_gain,
    "dcg": dcg,
    "ndcg": ndcg,
    "dcg_exp": dcg_exp,
    "ndcg_exp": ndcg_exp,
    "err": err,
    "err_018": err_018,
    # The detail metrics are the graded formulas applied to detail values.
    "cg_d": cumulative_gain,
    "dcg_d": dcg,
    "ndcg_d": ndcg,
}
