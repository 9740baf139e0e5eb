"""A metric that is a sum of one share per result: what decisive.py bounds exactly.

An additive metric's keyword value is, over the ranks within the cutoff, the weight of
the rank (the rank alone decides it) times the gain of the result there (its stage-1
value alone decides it). A metric's definition in ``metrics.py`` says whether it is one,
with which gain and weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .conventions import WHOLE_LIST
from .formulas import rank_discount, rbp_weight

Gain = Callable[[float | None], float]
# (rank from 1, k, the number of results listed) -> the rank's weight.
Weight = Callable[[int, int, int], float]


@dataclass(frozen=True)
class Additive:
    """How a metric's value splits into one share per result. ``trec_only``: additive
    under the trec profile alone (searchtweak's precision divides by the results judged,
    which the grades decide)."""

    gain: Gain
    weight: Weight
    trec_only: bool = False


def relevant_gain(value: float | None) -> float:
    """The binary metrics' gain: 1 for a relevant result; unjudged or tied count 0."""
    return 1.0 if value == 1 else 0.0


def flat_weight(rank: int, k: int, listed: int) -> float:
    return 1.0


def per_cutoff_weight(rank: int, k: int, listed: int) -> float:
    # trec_eval's P_k divides by k, or over the whole list by the results retrieved.
    return 1.0 / (listed if k == WHOLE_LIST else k)


def discounted_weight(rank: int, k: int, listed: int) -> float:
    return 1.0 / rank_discount(rank)


def rank_biased_weight(persistence: float) -> Weight:
    return lambda rank, k, listed: rbp_weight(rank, persistence)
