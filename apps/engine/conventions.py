"""The conventions every metric shares: the two profiles, cutoffs, the condensed list,
and the recall levels and persistences the metric families are built from.

They sit below the formulas and the metric registry (metrics.py), which both read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from .errors import EngineError

T = TypeVar("T")

# The scale of a measure read on the evaluation's own scale (coverage: whether a result
# has a value at all), whatever that scale is.
NATIVE = "native"

SEARCHTWEAK = "searchtweak"
TREC = "trec"
# `searchtweak` is the default; `trec` reproduces trec_eval / ir_measures numbers.
PROFILES: tuple[str, ...] = (SEARCHTWEAK, TREC)


def check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise EngineError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


# Interpolated precision is read at these recall levels, in per cent (trec_eval's
# iprec_at_recall_0.00 ... _1.00); 11pt_avg is their mean.
RECALL_LEVELS = tuple(range(0, 101, 10))
# Rank-biased precision: the searcher looks at the next result with probability p.
RBP_PERSISTENCES = {"rbp_50": 0.5, "rbp_80": 0.8, "rbp_95": 0.95}


def trec_eval_recall_name(level: int) -> str:
    """trec_eval's name of interpolated precision at recall `level` per cent."""
    return f"iprec_at_recall_{level / 100:.2f}"


# A metric id with this suffix is its base metric on the condensed list: the results
# nobody judged are removed first and the rest move up (Sakai's AP', nDCG'), which keeps
# unjudged results from counting as not relevant. Every rating metric has one.
CONDENSED = "_cond"


def split_condensed(metric: str) -> tuple[str, bool]:
    """(the base metric, whether on the condensed list): "ndcg_cond" -> ("ndcg", True)."""
    if metric.endswith(CONDENSED):
        return metric[: -len(CONDENSED)], True
    return metric, False


# k of a metric computed over the whole ranking, with no cutoff (trec_eval's `map`,
# `recip_rank`, `ndcg`). Stored as 0 so that (metric, k) stays a pair of plain values
# everywhere; shown as the bare name ("AP"), and as null in JSON.
WHOLE_LIST = 0
# The deepest cutoff a metric may ask for: real TREC runs are 1,000 results deep.
MAX_CUTOFF = 1000


def check_cutoff(k: int) -> None:
    # bool is an int subclass, and True is not a cutoff anyone meant.
    if type(k) is not int or k < 0:
        raise EngineError(
            f"cutoff k must be a whole number >= 1 (or {WHOLE_LIST} for the whole list), got {k!r}"
        )


def cut(values: Sequence[T], k: int) -> Sequence[T]:
    """The first k values, or all of them for the whole list."""
    return values if k == WHOLE_LIST else values[:k]
