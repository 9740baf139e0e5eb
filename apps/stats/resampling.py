"""Kendall's tau-b between two vectors, and a percentile bootstrap interval over units
(keywords): pure numpy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def kendall_tau_b(x: FloatArray, y: FloatArray) -> float | None:
    """tau-b of two equally long vectors: (concordant - discordant) pairs over the
    geometric mean of the pairs untied in x and untied in y, as scipy.stats.kendalltau
    computes it. None when it is undefined (fewer than two values, or one vector all
    tied). Quadratic in the length: meant for hundreds of keywords, not millions."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("x and y must be vectors of one length")
    if len(a) < 2:
        return None
    upper = np.triu_indices(len(a), k=1)
    sign_a = np.sign(np.subtract.outer(a, a)[upper])
    sign_b = np.sign(np.subtract.outer(b, b)[upper])
    untied_a = float(np.count_nonzero(sign_a))
    untied_b = float(np.count_nonzero(sign_b))
    if untied_a == 0 or untied_b == 0:
        return None
    return float((sign_a * sign_b).sum() / np.sqrt(untied_a * untied_b))


def bootstrap_interval(
    statistic: Callable[[IntArray], float | None],
    units: int,
    *,
    samples: int = 1_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """The percentile interval of `statistic` over `samples` resamples of the units
    (0 .. units - 1, drawn with replacement; the statistic gets the drawn indices).
    Resamples where the statistic is undefined (None) are left out; None, None when
    fewer than half of them give a value (the interval would not mean much)."""
    if units == 0 or samples <= 0:
        return None, None
    rng = np.random.default_rng([seed, units])
    draws = rng.integers(0, units, size=(samples, units))
    values = [value for row in draws if (value := statistic(row)) is not None]
    if len(values) < samples / 2:
        return None, None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(np.asarray(values), [tail, 1.0 - tail])
    return float(low), float(high)
