"""Paired comparison of two evaluations' per-keyword values (pure: numpy, no Django).

Per metric, over the keywords both evaluations have a value for: the mean difference
(candidate minus baseline) with a percentile bootstrap interval, a two-sided sign-flip
test, Holm's adjustment across the metrics compared in one call, and wins, ties and
losses. The method and why: docs/comparison.md, "The numbers". Every draw is seeded
(seed, purpose, n); metrics with the same number of kept keywords share their draws, and
work runs in blocks of about `BLOCK` random numbers to bound memory.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

SAMPLES = 10_000
PERMUTATIONS = 10_000
CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
TIE_TOLERANCE = 1e-9
SEED = 20_101
BLOCK = 2_000_000
# Null sums within this share of sum(|d|) of the observed sum count as equal to it: they
# differ by rounding (a matrix product adds in another order), not in substance.
EQUAL_SHARE = 1e-10
# Bootstrap picks are turned into counts per keyword about this many at a time.
COUNTS_BLOCK = 65_536
# Enumerate every sign assignment (an exact p) up to this many keywords, when there are
# no more assignments than permutations asked for.
EXACT_UP_TO = 16

_BOOTSTRAP = 0
_SIGN_FLIP = 1


def generator(seed: int, purpose: int, size: int) -> np.random.Generator:
    """The random stream for one purpose (bootstrap or sign flips) and sample size."""
    return np.random.default_rng([seed, purpose, size])


@dataclass(frozen=True)
class PairedResult:
    """One metric, candidate against baseline, over the keywords where both have a value."""

    compared: int
    baseline_mean: float | None
    candidate_mean: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    exact: bool  # p from every sign assignment, not from random draws
    wins: int
    ties: int
    losses: int
    p_adjusted: float | None = None  # Holm, over the metrics compared together

    @property
    def significant(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < SIGNIFICANCE


def holm_adjusted(p_values: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of the p-values given (None: no test, left out)."""
    tested = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        adjusted[index] = running
    return adjusted


def bootstrap_means(
    differences: FloatArray, *, samples: int, rng: np.random.Generator
) -> FloatArray:
    """Means of `samples` resamples (with replacement) of each column: samples x columns.

    Row r resamples every column with the same keyword picks, the picks scipy's bootstrap
    would draw from the same generator (integers(0, n, (samples, n)); drawn a few rows at
    a time, which yields the same stream). Each row's picks become counts per keyword,
    and one matrix product gives every column's mean.
    """
    size, columns = differences.shape
    means = np.empty((samples, columns))
    # Few rows at a time keep the counts in the processor's cache while they are added up.
    rows = max(1, COUNTS_BLOCK // size)
    offsets = np.arange(rows)[:, None] * size
    for start in range(0, samples, rows):
        block = min(rows, samples - start)
        picks = rng.integers(0, size, size=(block, size))
        picks += offsets[:block]
        counts = np.bincount(picks.ravel(), minlength=block * size).reshape(block, size)
        means[start : start + block] = (counts.astype(np.float64) @ differences) / size
    return means


def percentile_interval(means: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return low, high


# Bit k of byte value v, for v in 0..255 and k in 0..7.
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)


def sign_flip_p_values(
    differences: FloatArray, *, permutations: int, rng: np.random.Generator
) -> tuple[FloatArray, bool]:
    """Two-sided p-value of each column's sum under random signs; True if exact."""
    size, columns = differences.shape
    observed = np.abs(differences.sum(axis=0))
    threshold = observed - EQUAL_SHARE * np.abs(differences).sum(axis=0)
    if size <= EXACT_UP_TO and 2**size <= permutations:
        every = (np.arange(2**size)[:, None] >> np.arange(size)) & 1
        null = (2.0 * every - 1.0) @ differences
        return np.asarray((np.abs(null) >= threshold).mean(axis=0), dtype=np.float64), True
    # One random byte gives the signs of 8 keywords (bit set: positive). For each group of
    # 8 keywords a table holds, for every byte value, the sum of the differences its set
    # bits pick; a pattern's sum of positive differences is then one look-up per 8
    # keywords. sum(s_i d_i) with s_i = +-1 is 2 * (sum of the positive ones) - sum(d_i).
    groups = -(-size // 8)
    padded = np.zeros((groups * 8, columns))
    padded[:size] = differences  # zeros change no sum, whatever their sign
    tables = np.einsum("vk,gkc->cgv", _BYTE_BITS, padded.reshape(groups, 8, columns))
    flat_tables = tables.reshape(columns, groups * 256)
    offsets = np.arange(groups) * 256
    total = differences.sum(axis=0)
    hits = np.zeros(columns, dtype=np.int64)
    rows = max(1, COUNTS_BLOCK // groups)
    for start in range(0, permutations, rows):
        block = min(rows, permutations - start)
        signs = np.frombuffer(rng.bytes(block * groups), dtype=np.uint8).reshape(block, groups)
        where = signs + offsets
        for column in range(columns):
            null = 2.0 * flat_tables[column][where].sum(axis=1) - total[column]
            hits[column] += int((np.abs(null) >= threshold[column]).sum())
    return np.asarray((hits + 1.0) / (permutations + 1.0), dtype=np.float64), False


def wins_ties_losses(
    differences: FloatArray, tolerance: float = TIE_TOLERANCE
) -> tuple[int, int, int]:
    wins = int((differences > tolerance).sum())
    losses = int((differences < -tolerance).sum())
    return wins, len(differences) - wins - losses, losses


def compare_paired(
    baseline: FloatArray,
    candidate: FloatArray,
    *,
    samples: int = SAMPLES,
    permutations: int = PERMUTATIONS,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> list[PairedResult]:
    """One result per column (metric) of two keywords x metrics matrices, NaN = no value.

    Row i of both matrices is the same keyword.
    """
    baseline = np.asarray(baseline, dtype=np.float64)
    candidate = np.asarray(candidate, dtype=np.float64)
    if baseline.shape != candidate.shape or baseline.ndim != 2:
        raise ValueError("baseline and candidate must be keywords x metrics, the same shape")
    kept = ~np.isnan(baseline) & ~np.isnan(candidate)
    columns_by_size: dict[int, list[int]] = defaultdict(list)
    for column, size in enumerate(kept.sum(axis=0)):
        columns_by_size[int(size)].append(column)

    results: dict[int, PairedResult] = {}
    for size, columns in columns_by_size.items():
        if size == 0:
            for column in columns:
                results[column] = PairedResult(
                    0, None, None, None, None, None, None, False, 0, 0, 0
                )
            continue
        differences = np.stack(
            [candidate[kept[:, c], c] - baseline[kept[:, c], c] for c in columns], axis=1
        )
        means = bootstrap_means(differences, samples=samples, rng=generator(seed, _BOOTSTRAP, size))
        lows, highs = percentile_interval(means, confidence)
        p_values, exact = sign_flip_p_values(
            differences, permutations=permutations, rng=generator(seed, _SIGN_FLIP, size)
        )
        for position, column in enumerate(columns):
            results[column] = PairedResult(
                size,
                float(baseline[kept[:, column], column].mean()),
                float(candidate[kept[:, column], column].mean()),
                float(differences[:, position].mean()),
                float(lows[position]),
                float(highs[position]),
                float(p_values[position]),
                exact,
                *wins_ties_losses(differences[:, position]),
            )
    ordered = [results[column] for column in range(baseline.shape[1])]
    adjusted = holm_adjusted([result.p_value for result in ordered])
    return [replace(result, p_adjusted=p) for result, p in zip(ordered, adjusted, strict=True)]
