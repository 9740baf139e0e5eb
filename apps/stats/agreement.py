"""Chance-corrected agreement between graders: Fleiss' kappa and Krippendorff's alpha.

Pure numpy, no Django. Both start from a count table: one row per item (a snapshot), one
column per grade of the scale, each cell the number of graders who gave that grade.
Which graders gave them does not matter to either statistic.

- Fleiss' kappa needs the same number of ratings n on every item; ``fleiss_kappa`` takes
  only the items with exactly n ratings and says how many it left out.
- Krippendorff's alpha takes any number of ratings per item; items with fewer than two
  cannot be paired and do not count. Nominal (any two different grades disagree
  equally) suits the binary scale, ordinal (a disagreement weighs more the more grades
  lie between the two, as the data use them) suits the graded and detail scales.

When a statistic is not defined (no item to use, or every grade the same so that chance
agreement is already perfect) its value is None with the reason, never a made-up number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Level = Literal["nominal", "ordinal"]
IntArray = np.ndarray


@dataclass(frozen=True)
class Statistic:
    """A statistic's value, or None and why; ``items`` = how many items it used."""

    name: str
    value: float | None
    items: int
    reason: str = ""


def category_counts(
    items: Sequence[int] | IntArray, grades: Sequence[int] | IntArray, scale_grades: Sequence[int]
) -> IntArray:
    """The count table of ratings given as parallel ``items`` (0 .. n_items - 1) and
    ``grades``: row = item, column = position of the grade in ``scale_grades``."""
    item_codes = np.asarray(items, dtype=np.int64)
    categories = np.asarray(scale_grades, dtype=np.int64)
    columns = np.searchsorted(categories, np.asarray(grades, dtype=np.int64))
    item_count = int(item_codes.max()) + 1 if item_codes.size else 0
    flat = np.bincount(
        item_codes * len(categories) + columns, minlength=item_count * len(categories)
    )
    return flat.reshape(item_count, len(categories))


def fleiss_kappa(counts: IntArray, ratings_per_item: int) -> Statistic:
    """Fleiss' kappa over the items with exactly ``ratings_per_item`` ratings.

    kappa = (P - Pe) / (1 - Pe), P the mean share of agreeing rater pairs per item, Pe
    the agreement expected from the overall share of each grade.
    """
    name = "Fleiss' kappa"
    if ratings_per_item < 2:
        return Statistic(name, None, 0, "it needs at least two grades per result")
    table = np.asarray(counts, dtype=np.float64)
    table = table[table.sum(axis=1) == ratings_per_item]
    items = len(table)
    if items == 0:
        return Statistic(name, None, 0, f"no result has all {ratings_per_item} grades yet")
    n = ratings_per_item
    per_item = ((table * table).sum(axis=1) - n) / (n * (n - 1))
    shares = table.sum(axis=0) / (items * n)
    expected = float((shares * shares).sum())
    if expected >= 1.0:
        return Statistic(name, None, items, ONE_VALUE_REASON)
    return Statistic(name, (float(per_item.mean()) - expected) / (1.0 - expected), items)


ONE_VALUE_REASON = (
    "all the grades it uses are the same, so agreement expected by chance is already complete "
    "and the statistic is undefined (0/0)"
)


def coincidences(counts: IntArray) -> tuple[np.ndarray, int]:
    """Krippendorff's coincidence matrix of the pairable items (two ratings or more) and
    how many items that is: o[c, k] = sum over items of n_c * (n_k - [c == k]) / (m - 1),
    m the item's number of ratings."""
    table = np.asarray(counts, dtype=np.float64)
    ratings = table.sum(axis=1)
    pairable = ratings >= 2
    table, ratings = table[pairable], ratings[pairable]
    weighted = table / (ratings - 1)[:, None]
    matrix = table.T @ weighted - np.diag(weighted.sum(axis=0))
    return matrix, int(pairable.sum())


def squared_distances(marginals: np.ndarray, level: Level) -> np.ndarray:
    """delta^2 between every two grades. Nominal: 0 if equal, else 1. Ordinal: the
    number of pairable values from grade c to grade k, less half of c's and k's own,
    squared, so the distance depends on how the data use the grades in between."""
    size = len(marginals)
    if level == "nominal":
        return 1.0 - np.eye(size)
    cumulative = np.cumsum(marginals)
    low = np.minimum.outer(np.arange(size), np.arange(size))
    high = np.maximum.outer(np.arange(size), np.arange(size))
    between = cumulative[high] - cumulative[low] + marginals[low]
    distance = between - (marginals[:, None] + marginals[None, :]) / 2.0
    return distance * distance


def krippendorff_alpha(counts: IntArray, level: Level) -> Statistic:
    """Krippendorff's alpha = 1 - observed / expected disagreement, over every item with
    at least two ratings (any number of raters per item, missing ratings allowed)."""
    name = f"Krippendorff's alpha ({level})"
    matrix, items = coincidences(counts)
    pairable = float(matrix.sum())
    if items == 0:
        return Statistic(name, None, 0, "no result has two grades yet")
    marginals = matrix.sum(axis=0)
    distances = squared_distances(marginals, level)
    observed = float((matrix * distances).sum())
    expected = float((np.outer(marginals, marginals) * distances).sum()) / (pairable - 1.0)
    if expected == 0.0:
        return Statistic(name, None, items, ONE_VALUE_REASON)
    return Statistic(name, 1.0 - observed / expected, items)


def observed_agreement(counts: IntArray) -> Statistic:
    """The share of agreeing pairs among all pairs of grades given to the same item,
    not corrected for chance (the plain "percent agreement")."""
    table = np.asarray(counts, dtype=np.float64)
    ratings = table.sum(axis=1)
    pairs = float((ratings * (ratings - 1)).sum())
    items = int((ratings >= 2).sum())
    if pairs == 0:
        return Statistic("Observed agreement", None, 0, "no result has two grades yet")
    agreeing = float((table * (table - 1)).sum())
    return Statistic("Observed agreement", agreeing / pairs, items)
