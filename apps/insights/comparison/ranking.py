"""How alike two result lists of one keyword are (pure: numpy, no Django).

Each list is the keyword's snapshot doc ids in position order. A document listed twice
in one list keeps its first (best) position; the repeat is dropped and the documents
after it move up.

- **Kendall's tau-b** over the documents both lists share: +1 when the shared documents
  come in the same order, -1 when reversed. Every document has one position in each
  list, so there are no ties and tau-b equals tau-a: (concordant - discordant) pairs /
  all pairs. With fewer than two shared documents there is no pair to order; tau is
  undefined (NaN here, shown as a dash and left out of means), as scipy.stats.kendalltau
  also answers.
- **Rank-biased overlap**, the extrapolated form RBO_ext of Webber, Moffat and Zobel
  (2010, "A similarity measure for indefinite rankings", equation 32, which also covers
  lists of different lengths) with persistence p = 0.9: top-weighted agreement of the
  two lists in [0, 1], where the first 10 ranks carry about 86% of the weight. It counts
  every document, shared or not, so it complements tau. Identical lists give 1, lists
  with nothing in common 0; a list that is a prefix of the other also gives 1 (the
  extrapolation assumes the agreement seen so far continues). Two empty lists are
  undefined (NaN); one empty list against a non-empty one gives 0.

Both run over all keywords at once: the Python part only maps each document to its
position in the other list; overlaps, sums and pair counts are numpy over a keywords x
depth matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

PERSISTENCE = 0.9
ABSENT = np.iinfo(np.int64).max // 4  # a position in the other list no depth reaches
# Kendall's pair counts use keywords x shared x shared booleans; this many per block.
PAIR_BLOCK = 4_000_000


def first_positions(documents: Sequence[str]) -> dict[str, int]:
    """Each document's position (0-based) in the list without its repeats."""
    positions: dict[str, int] = {}
    for document in documents:
        if document not in positions:
            positions[document] = len(positions)
    return positions


@dataclass(frozen=True)
class _Positions:
    """Per keyword, each item of A (deduplicated, in order) with its position in B, and
    each item of B with its position in A (ABSENT if missing); rows padded with ABSENT."""

    a_in_b: np.ndarray
    b_in_a: np.ndarray
    length_a: np.ndarray
    length_b: np.ndarray


def _positions_in_other(
    lists_a: Sequence[Sequence[str]], lists_b: Sequence[Sequence[str]]
) -> _Positions:
    count = len(lists_a)
    if len(lists_b) != count:
        raise ValueError("one list of B per list of A")
    firsts_a = [first_positions(documents) for documents in lists_a]
    firsts_b = [first_positions(documents) for documents in lists_b]
    length_a = np.array([len(first) for first in firsts_a], dtype=np.int64)
    length_b = np.array([len(first) for first in firsts_b], dtype=np.int64)
    depth = int(max(length_a.max(initial=0), length_b.max(initial=0)))
    a_in_b = np.full((count, depth), ABSENT, dtype=np.int64)
    b_in_a = np.full((count, depth), ABSENT, dtype=np.int64)
    for row, (first_a, first_b) in enumerate(zip(firsts_a, firsts_b, strict=True)):
        if first_a:
            a_in_b[row, : len(first_a)] = [first_b.get(doc, ABSENT) for doc in first_a]
        if first_b:
            b_in_a[row, : len(first_b)] = [first_a.get(doc, ABSENT) for doc in first_b]
    return _Positions(a_in_b, b_in_a, length_a, length_b)


def rank_agreement(
    lists_a: Sequence[Sequence[str]],
    lists_b: Sequence[Sequence[str]],
    persistence: float = PERSISTENCE,
) -> tuple[FloatArray, FloatArray]:
    """(Kendall's tau, RBO_ext) of each pair of lists: row i is lists_a[i] vs lists_b[i]."""
    positions = _positions_in_other(lists_a, lists_b)
    return _kendall_tau(positions), _rank_biased_overlap(positions, persistence)


def kendall_tau(lists_a: Sequence[Sequence[str]], lists_b: Sequence[Sequence[str]]) -> FloatArray:
    """Kendall's tau-b over the shared documents of each pair of lists (NaN if < 2)."""
    return _kendall_tau(_positions_in_other(lists_a, lists_b))


def rank_biased_overlap(
    lists_a: Sequence[Sequence[str]],
    lists_b: Sequence[Sequence[str]],
    persistence: float = PERSISTENCE,
) -> FloatArray:
    """RBO_ext of each pair of lists (NaN for two empty lists)."""
    return _rank_biased_overlap(_positions_in_other(lists_a, lists_b), persistence)


def _rank_biased_overlap(positions: _Positions, persistence: float) -> FloatArray:
    if not 0.0 < persistence < 1.0:
        raise ValueError("persistence must be between 0 and 1")
    a_in_b, b_in_a = positions.a_in_b, positions.b_in_a
    count, depth = a_in_b.shape
    result = np.full(count, np.nan)
    if depth == 0:
        return result
    index = np.arange(depth)  # depth d = index + 1
    # X_d, the overlap of the first d items of each list, grows at depth d by A's d-th
    # item if B has it within d, and by B's d-th item if A has it before d (at d itself
    # it was just counted from A's side).
    found = (a_in_b <= index).astype(np.int64) + (b_in_a < index)
    overlap = np.cumsum(found, axis=1).astype(np.float64)
    short = np.minimum(positions.length_a, positions.length_b)
    long = np.maximum(positions.length_a, positions.length_b)
    p = persistence
    d = index + 1.0
    weight = p**d
    rows = np.arange(count)
    within_long = index < long[:, None]
    beyond_short = within_long & (index >= short[:, None])
    defined = short > 0
    s = np.where(defined, short, 1).astype(np.float64)
    seen_short = np.where(defined, overlap[rows, np.maximum(short, 1) - 1], 0.0)
    seen_long = np.where(long > 0, overlap[rows, np.maximum(long, 1) - 1], 0.0)
    # Equation 32: (1-p)/p * (sum over d <= l of X_d/d p^d
    #                         + sum over s < d <= l of X_s (d-s)/(s d) p^d)
    #              + ((X_l - X_s)/l + X_s/s) p^l
    agreement = np.where(within_long, overlap / d, 0.0) @ weight
    tail = np.where(beyond_short, seen_short[:, None] * (d - s[:, None]) / (s[:, None] * d), 0.0)
    extrapolated = (seen_long - seen_short) / np.maximum(long, 1) + seen_short / s
    value = (1 - p) / p * (agreement + tail @ weight) + extrapolated * p ** long.astype(float)
    result[defined] = value[defined]
    result[~defined & (long > 0)] = 0.0
    return result


def _kendall_tau(positions: _Positions) -> FloatArray:
    a_in_b = positions.a_in_b
    count = len(a_in_b)
    result = np.full(count, np.nan)
    # Shared documents in A's order, with their positions in B, packed to the left.
    shared = a_in_b != ABSENT
    sizes = shared.sum(axis=1)
    width = int(sizes.max(initial=0))
    if width < 2:
        return result
    order = np.argsort(~shared, axis=1, kind="stable")[:, :width]
    packed = np.take_along_axis(a_in_b, order, axis=1)
    # Pair (i, j), i < j, both shared: i comes first in A; concordant if first in B too.
    # Packed to the left, j shared implies i shared.
    upper = np.triu(np.ones((width, width), dtype=bool), k=1)
    later = np.arange(width)
    rows = max(1, PAIR_BLOCK // (width * width))
    for start in range(0, count, rows):
        block = packed[start : start + rows]
        size = sizes[start : start + rows]
        counted = upper & (later < size[:, None])[:, None, :]
        concordant = (counted & (block[:, None, :] > block[:, :, None])).sum(axis=(1, 2))
        pairs = size * (size - 1) // 2
        with np.errstate(invalid="ignore", divide="ignore"):
            result[start : start + rows] = np.where(
                pairs > 0, (2.0 * concordant - pairs) / pairs, np.nan
            )
    return result
