"""Evaluation level: means over keywords and grading progress (metrics.md section 4)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .errors import EngineError
from .metrics import get_metric


def mean_of(values: Iterable[float | None]) -> float | None:
    """Mean of the non-null keyword values; None when there is none.

    Keywords with a null value (failed, ungraded, tied) are left out rather than counted
    as 0, so an unfinished keyword does not drag the evaluation down. NaN, the batch
    path's null, is treated as null too.
    """
    kept = [value for value in values if value is not None and not math.isnan(value)]
    # fsum is exactly rounded and so independent of order: the mean of the same values
    # is the same number to the last bit however the database returns the rows.
    return math.fsum(kept) / len(kept) if kept else None


def mean_from_sum(metric: str, total: float, count: int) -> float | None:
    """The evaluation's value of ``metric`` from the sum and count of its keyword values:
    their mean, or exp of it for a geometric metric (GMAP, whose keyword values are
    logarithms). None without a value."""
    if not count:
        return None
    mean = total / count
    return math.exp(mean) if get_metric(metric).geometric else mean


def metric_mean(metric: str, values: Iterable[float | None]) -> float | None:
    """``mean_of`` for ``metric``: exp of the mean for a geometric metric."""
    kept = [value for value in values if value is not None and not math.isnan(value)]
    return mean_from_sum(metric, math.fsum(kept), len(kept))


def progress(graded: int, total: int) -> float:
    """Share of feedback slots graded (slots, not snapshots: a snapshot with 2 of 3
    slots graded is 2/3 done). 0.0 for an evaluation without slots."""
    if graded < 0 or total < 0 or graded > total:
        raise EngineError(f"progress needs 0 <= graded <= total, got {graded} of {total}")
    return graded / total if total else 0.0
