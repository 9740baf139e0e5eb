"""Stage 2 for one keyword: every metric formula in plain Python (metrics.md section 4).

Each metric's definition in ``metrics.py`` names its formula here; ``keyword.py`` applies
the null rules and calls it. ``batch.py`` computes the same formulas over many keywords
with numpy. Both paths call the per-rank helpers defined here and add terms in the same
order (rank 1 first), so they give bit-for-bit the same floats; keep them in step when
changing either.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .conventions import RECALL_LEVELS, TREC, WHOLE_LIST, cut, split_condensed

Values = Sequence[float | None]
# (the top k values, the pool, k, profile): the pool is every value the keyword's metric
# may look at past the cutoff: its results, and under trec its judged unretrieved
# documents too.
Formula = Callable[[Values, Values, int, str], float | None]

# ERR reads a grade as the probability that the user stops there: (2^v - 1) / 2^max,
# with max = 3, the top grade of the graded scale ERR is defined on.
ERR_MAX_GAIN = 2.0**3


def emptied_by_condensing(
    metric: str, profile: str, unretrieved: Sequence[float | None], in_qrels: bool
) -> float | None:
    """The value of a keyword whose results were all unjudged, on its condensed list: under
    trec what a judged query without results scores (trec_eval -J: the query is in the
    run, its results all gone) when it has judgements (or unjudged pool documents)
    elsewhere, and null when it has none; under searchtweak null (nothing judged)."""
    if profile == TREC and in_qrels:
        return value_without_results(split_condensed(metric)[0], profile, unretrieved)
    return None


def value_without_results(metric: str, profile: str, unretrieved: Sequence[float | None]) -> float:
    """A judged keyword without results, where trec_eval scores such a query (-c, or a -J
    list that lost every result): 0, except that num_rel keeps its R (the relevant
    documents are still there to find) and GMAP's log AP takes AP at its floor, as
    trec_eval's gm_map does, never log 1."""
    if metric == "gm_ap":
        return math.log(GEOMETRIC_FLOOR)
    if metric == "num_rel":
        return float(count_relevant(unretrieved)) if profile == TREC else 0.0
    return 0.0


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


# trec_eval's floor for AP inside gm_map's logarithm: a keyword with AP 0 counts as this.
GEOMETRIC_FLOOR = 0.00001


# infAP's smoothing of the precision it infers from the judged sample above a rank.
INFERRED_EPSILON = 0.00001


def inferred_average_precision(
    top: Values, pool: Values, profile: str, unjudged_in_pool: Sequence[bool]
) -> float | None:
    """infAP (Yilmaz and Aslam, 2006): AP when the pool was judged only in part. At each
    relevant result at rank r the precision above it is inferred from the judged sample:
    1/r + (pooled above / r) x (relevant above + e) / (judged above + 2e), where pooled
    counts every document of the pool above r, judged or not, and a result outside the
    pool counts as not relevant. The sum is divided by R, as AP's is."""
    relevant_anywhere = count_relevant(pool)
    if relevant_anywhere == 0:
        # As recall: searchtweak says "undefined", trec_eval reports 0.
        return 0.0 if profile == TREC else None
    total = 0.0
    pooled = relevant = judged = 0
    for rank, value in enumerate(top, start=1):
        if value == 1:
            if rank == 1:
                total += 1.0
            else:
                sampled = (relevant + INFERRED_EPSILON) / (judged + 2 * INFERRED_EPSILON)
                total += 1.0 / rank + pooled / rank * sampled
            relevant += 1
        if value is not None:
            judged += 1
            pooled += 1
        elif rank <= len(unjudged_in_pool) and unjudged_in_pool[rank - 1]:
            pooled += 1
    return total / relevant_anywhere


@dataclass(frozen=True)
class ReadsUnjudgedPool:
    """A formula that also reads, per result of the top k, whether it is a document of the
    pool nobody judged (infAP): called as ``formula(top, pool, profile, unjudged)``."""

    formula: Callable[[Values, Values, str, Sequence[bool]], float | None]


def log_average_precision(top: Values, pool: Values, k: int, profile: str) -> float:
    """log(max(AP, 0.00001)): a keyword's share of GMAP, as trec_eval -q prints gm_map."""
    return math.log(max(average_precision(top, pool, k, profile), GEOMETRIC_FLOOR))


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


def success(top: Values, pool: Values, k: int, profile: str) -> float:
    """1 when a relevant result is in the top k, else 0: did the searcher find anything."""
    return 1.0 if count_relevant(top) else 0.0


def r_precision(top: Values, pool: Values, k: int, profile: str) -> float | None:
    """Precision at R, R the number of relevant documents: relevant in the top R / R.

    At a cutoff k the list is cut first, so a list shorter than R (or k < R) is charged
    for the relevant documents it could not show, as trec_eval's Rprec of a run k deep.
    """
    relevant_anywhere = count_relevant(pool)
    if relevant_anywhere == 0:
        # As recall: searchtweak says "undefined", trec_eval reports 0.
        return 0.0 if profile == TREC else None
    return count_relevant(top[:relevant_anywhere]) / relevant_anywhere


def relevant_count(top: Values, pool: Values, k: int, profile: str) -> float:
    """num_rel: the relevant documents there are to find (R), whatever the cutoff: under
    trec the pool's, judged documents the search did not return included."""
    return float(count_relevant(pool))


def retrieved_count(top: Values, pool: Values, k: int, profile: str) -> float:
    """num_ret: the results in the top k (all of them over the whole list)."""
    return float(len(top))


def relevant_retrieved_count(top: Values, pool: Values, k: int, profile: str) -> float:
    """num_rel_ret: the relevant results in the top k."""
    return float(count_relevant(top))


def bpref(top: Values, pool: Values, k: int, profile: str) -> float | None:
    """Binary preference: how rarely a judged non-relevant result is ranked above a
    relevant one, reading judged results only, so an unjudged result costs nothing.

    Each relevant result in the top k scores 1 - (judged non-relevant results above it,
    at most R) / min(R, N), with R the relevant and N the judged non-relevant documents
    of the pool; the sum is divided by R (trec_eval's bpref).
    """
    relevant_anywhere = count_relevant(pool)
    if relevant_anywhere == 0:
        return 0.0 if profile == TREC else None
    judged_non_relevant = sum(1 for value in pool if value is not None and value != 1)
    worst = min(relevant_anywhere, judged_non_relevant)
    total = 0.0
    non_relevant_above = 0
    for value in top:
        if value == 1:
            if non_relevant_above == 0:
                total += 1.0
            else:
                total += 1.0 - min(non_relevant_above, relevant_anywhere) / worst
        elif value is not None:
            non_relevant_above += 1
    return total / relevant_anywhere


def relevant_needed(level: int, relevant_anywhere: int) -> int:
    """How many relevant results reach recall ``level`` (per cent) of R: trec_eval's
    rounding, level x R + 0.9 cut to a whole number, so a level a hair above a reachable
    recall (0.7 of R = 3 is 2.1) is read at that recall (2 relevant results)."""
    return int(level / 100 * relevant_anywhere + 0.9)


def interpolated_precision_at(level: int) -> Formula:
    """The formula of interpolated precision at recall ``level`` (per cent): the best
    precision at any rank whose recall is at least the level, 0 when the top k never
    reaches it. Precision peaks at relevant results, so only their ranks are read."""

    def formula(top: Values, pool: Values, k: int, profile: str) -> float | None:
        relevant_anywhere = count_relevant(pool)
        if relevant_anywhere == 0 and profile != TREC:
            return None
        return interpolated_precisions(top, relevant_anywhere)[RECALL_LEVELS.index(level)]

    return formula


def interpolated_precisions(top: Values, relevant_anywhere: int) -> list[float]:
    """Interpolated precision at every one of RECALL_LEVELS."""
    # precision_at_relevant[j - 1]: precision at the rank of the j-th relevant result.
    precision_at_relevant: list[float] = []
    for rank, value in enumerate(top, start=1):
        if value == 1:
            precision_at_relevant.append((len(precision_at_relevant) + 1) / rank)
    # best_from[j]: the best precision at the j+1-th relevant result or below it.
    best_from = precision_at_relevant[:]
    for j in range(len(best_from) - 2, -1, -1):
        best_from[j] = max(best_from[j], best_from[j + 1])
    values = []
    for level in RECALL_LEVELS:
        needed = relevant_needed(level, relevant_anywhere)
        if needed > len(best_from) or not best_from:
            values.append(0.0)
        else:
            values.append(best_from[max(needed, 1) - 1])
    return values


def eleven_point_average(top: Values, pool: Values, k: int, profile: str) -> float | None:
    """The mean of the 11 interpolated precisions (trec_eval's 11pt_avg)."""
    relevant_anywhere = count_relevant(pool)
    if relevant_anywhere == 0 and profile != TREC:
        return None
    total = 0.0
    for value in interpolated_precisions(top, relevant_anywhere):
        total += value
    return total / len(RECALL_LEVELS)


def rbp_weight(rank: int, persistence: float) -> float:
    """(1 - p) p^(rank - 1): the share of the searcher's attention rank gets."""
    return (1.0 - persistence) * persistence ** (rank - 1)


def rank_biased_precision(persistence: float) -> Formula:
    """RBP(p) = sum of the weights of the relevant results in the top k. Unjudged
    results count as not relevant: the residual says how much they might add."""

    def formula(top: Values, pool: Values, k: int, profile: str) -> float:
        total = 0.0
        for rank, value in enumerate(top, start=1):
            if value == 1:
                total += rbp_weight(rank, persistence)
        return total

    return formula


def rbp_residual(persistence: float) -> Formula:
    """How much RBP(p) could still rise: the weights of the unjudged results in the top
    k, plus p^n for everything below the n results read (which the searcher reaches
    with that probability). RBP lies between its value and value + residual."""

    def formula(top: Values, pool: Values, k: int, profile: str) -> float:
        total = 0.0
        for rank, value in enumerate(top, start=1):
            if value is None:
                total += rbp_weight(rank, persistence)
        return total + persistence ** len(top)

    return formula


# --- coverage ---------------------------------------------------------------------------


def judged_share(top: Values, pool: Values, k: int, profile: str) -> float:
    """Judged@k: the share of the top k (of the results there are, when fewer) that has
    a value, as ir_measures' Judged@k."""
    return count_judged(top) / len(top)


def unjudged_count(top: Values, pool: Values, k: int, profile: str) -> float:
    return float(len(top) - count_judged(top))


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
