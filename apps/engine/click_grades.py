"""Click estimates (apps/engine/clicks.py) as grades on a scale of levels 0..k.

A value becomes a grade through ascending thresholds: at or above ``thresholds[i]`` it
is at least grade i + 1. The thresholds are either a lead's or fitted to people's
grades on the pairs both have.

Fitting maximises exact agreement: among all ways of giving grades that never go down
as the value goes up, it takes the one that gives the most common pairs the people's
grade; among equals, the one whose grades are nearest the people's (least total
difference), then the one with the lower grades. Dynamic programming over the distinct
values finds it exactly, so the result is deterministic. Each threshold lies halfway
between the highest value below it and the lowest at or above it; a threshold below
every value is the lowest value, and a grade no value reaches gets an infinite
threshold (it is never given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .clicks import Estimate, Pair
from .errors import EngineError

# Fewer common pairs than this say too little about where the thresholds lie.
MIN_COMMON_PAIRS = 30


def _checked(thresholds: Sequence[float]) -> np.ndarray:
    values = np.asarray(thresholds, dtype=float)
    if values.ndim != 1 or np.isnan(values).any():
        raise EngineError("thresholds are a list of numbers")
    if (np.diff(values) < 0).any():
        raise EngineError("thresholds must be in ascending order")
    return values


def grades_by_thresholds(
    estimates: Mapping[Pair, Estimate], thresholds: Sequence[float]
) -> dict[Pair, int]:
    """Each pair's grade: how many of the ascending thresholds its value reaches
    (value >= thresholds[i] gives at least grade i + 1). Equal thresholds leave the
    grade between them empty."""
    cuts = _checked(thresholds)
    values = np.fromiter((estimate.value for estimate in estimates.values()), float, len(estimates))
    grades = np.searchsorted(cuts, values, side="right")
    return dict(zip(estimates, grades.tolist(), strict=True))


def agreement(grades: Mapping[Pair, int], people_grades: Mapping[Pair, int]) -> float | None:
    """The share of the pairs both have on which the grades are equal (None if none)."""
    common = grades.keys() & people_grades.keys()
    if not common:
        return None
    return sum(grades[pair] == people_grades[pair] for pair in common) / len(common)


def fitted_thresholds(
    estimates: Mapping[Pair, Estimate],
    people_grades: Mapping[Pair, int],
    levels: int,
    minimum_common: int = MIN_COMMON_PAIRS,
) -> tuple[float, ...]:
    """The levels - 1 ascending thresholds that best reproduce people's grades (0 to
    levels - 1) on the pairs both have, by the rule in the module's docstring."""
    if levels < 2:
        raise EngineError("a scale needs at least 2 levels")
    common = sorted(estimates.keys() & people_grades.keys())
    if len(common) < minimum_common:
        raise EngineError(
            f"only {len(common)} pairs have both a click estimate and a person's grade; "
            f"fitting thresholds needs at least {minimum_common}"
        )
    people = np.array([people_grades[pair] for pair in common])
    if people.min() < 0 or people.max() >= levels:
        raise EngineError(f"people's grades must be between 0 and {levels - 1}")
    values, value_index = np.unique(
        np.array([estimates[pair].value for pair in common], dtype=float), return_inverse=True
    )
    if np.isnan(values).any():
        raise EngineError("an estimate has no value")
    grade_of_value = _best_monotone_grades(value_index.reshape(-1), people, values.size, levels)
    return tuple(_thresholds(values, grade_of_value, levels))


def _best_monotone_grades(
    value_index: np.ndarray, people: np.ndarray, distinct: int, levels: int
) -> np.ndarray:
    """The non-decreasing grade per distinct value (ascending) that maximises exact
    agreement, then minimises total difference, then prefers lower grades."""
    tally = np.zeros((distinct, levels), dtype=np.int64)
    np.add.at(tally, (value_index, people), 1)
    grades = np.arange(levels)
    # distance[v, g]: total |g - person's grade| over the pairs with value v.
    distance = np.abs(grades[None, :] - grades[:, None])  # [person's grade, given grade]
    differences = tally @ distance
    # One integer score keeps the order: agreement first, then closeness.
    weight = int(differences.sum()) + 1
    score = tally * weight - differences
    best = np.empty((distinct, levels), dtype=np.int64)
    best[0] = score[0]
    for value in range(1, distinct):
        best[value] = score[value] + np.maximum.accumulate(best[value - 1])
    chosen = np.empty(distinct, dtype=np.int64)
    ceiling = levels
    for value in range(distinct - 1, -1, -1):
        chosen[value] = int(np.argmax(best[value, :ceiling]))  # the first best: lowest grade
        ceiling = chosen[value] + 1
    return chosen


def _thresholds(values: np.ndarray, grade_of_value: np.ndarray, levels: int) -> list[float]:
    thresholds = []
    for grade in range(1, levels):
        reaching = np.flatnonzero(grade_of_value >= grade)
        if not reaching.size:
            thresholds.append(math.inf)
        elif reaching[0] == 0:
            thresholds.append(float(values[0]))
        else:
            below, above = float(values[reaching[0] - 1]), float(values[reaching[0]])
            halfway = (below + above) / 2
            # Two neighbouring floats have no number between them: take the upper one.
            thresholds.append(halfway if halfway > below else above)
    return thresholds
