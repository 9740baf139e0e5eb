"""How many keywords a comparison needs, and how small a change it can detect.

Two rankings are compared keyword by keyword (a paired design): what matters is the
spread of the per-keyword differences of a metric, sd_d. With n keywords a two-sided
paired t-test at level alpha detects a true mean difference delta with probability

    power = P(|T| > t_crit),  T ~ noncentral t(df = n - 1, nc = delta / sd_d * sqrt(n)),

t_crit the t quantile 1 - alpha / 2 on n - 1 degrees of freedom: the textbook power of
the one-sample t-test on the differences (statsmodels' TTestPower, which the tests
compare against). Planning turns it around: the fewest keywords that reach a power, or
the smallest change n keywords detect with it.

Relevo's own significance test is a sign-flip randomisation test (paired.py), which for
these sample sizes has nearly the t-test's power; the t-test gives the closed form a
plan needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The fewest keywords a t-test can use (one degree of freedom), and the most a plan names:
# past that, the change asked for is too small to be worth planning for.
MIN_KEYWORDS = 2
MAX_KEYWORDS = 1_000_000


def paired_power(*, change: float, sd: float, keywords: int, alpha: float = 0.05) -> float:
    """The chance that `keywords` keywords show a true mean change `change` as significant
    at `alpha` (two-sided), with per-keyword differences spread by `sd`."""
    _check(alpha=alpha, sd=sd)
    if keywords < MIN_KEYWORDS:
        raise ValueError(f"at least {MIN_KEYWORDS} keywords, got {keywords}")
    if sd == 0:  # every keyword moves alike: any change shows, none is noise
        return 1.0 if change else alpha
    # Imported here, not with the module: scipy.stats costs every process that loads
    # Relevo's code about 60 MB, and only planning and Compare read it.
    from scipy import stats as scipy_stats

    df = keywords - 1
    shift = abs(change) / sd * math.sqrt(keywords)
    critical = scipy_stats.t.ppf(1 - alpha / 2, df)
    power = float(
        scipy_stats.nct.sf(critical, df, shift) + scipy_stats.nct.cdf(-critical, df, shift)
    )
    if math.isfinite(power):
        return power
    # scipy's noncentral t gives up (NaN) far in its tail, where T is as good as normal
    # about its shift and the power as good as 1.
    return float(scipy_stats.norm.sf(critical - shift) + scipy_stats.norm.cdf(-critical - shift))


def keywords_needed(
    *, change: float, sd: float, power: float = 0.8, alpha: float = 0.05
) -> int | None:
    """The fewest keywords that detect `change` with `power`; None beyond MAX_KEYWORDS."""
    _check(alpha=alpha, sd=sd, power=power)
    if change == 0:
        return None
    if paired_power(change=change, sd=sd, keywords=MIN_KEYWORDS, alpha=alpha) >= power:
        return MIN_KEYWORDS
    low, high = MIN_KEYWORDS, MIN_KEYWORDS * 2
    while paired_power(change=change, sd=sd, keywords=high, alpha=alpha) < power:
        low, high = high, high * 2
        if high > MAX_KEYWORDS:
            if paired_power(change=change, sd=sd, keywords=MAX_KEYWORDS, alpha=alpha) < power:
                return None
            high = MAX_KEYWORDS
            break
    # Power rises with n: the first n in (low, high] that reaches it.
    while high - low > 1:
        middle = (low + high) // 2
        if paired_power(change=change, sd=sd, keywords=middle, alpha=alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def detectable_change(
    *, sd: float, keywords: int, power: float = 0.8, alpha: float = 0.05
) -> float:
    """The smallest mean change `keywords` keywords detect with `power` (the minimum
    detectable effect), in the metric's units."""
    _check(alpha=alpha, sd=sd, power=power)
    if keywords < MIN_KEYWORDS:
        raise ValueError(f"at least {MIN_KEYWORDS} keywords, got {keywords}")
    if sd == 0:
        return 0.0
    low, high = 0.0, sd
    while paired_power(change=high, sd=sd, keywords=keywords, alpha=alpha) < power:
        low, high = high, high * 2
    for _ in range(100):  # bisection to the float's precision
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if paired_power(change=middle, sd=sd, keywords=keywords, alpha=alpha) >= power:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class Spread:
    """The spread of per-keyword differences estimated from earlier pairs of evaluations:
    the pooled standard deviation and how many differences it rests on."""

    sd: float
    differences: int
    pairs: int


def pooled_spread(groups: list[list[float]]) -> Spread | None:
    """Pool the variance of several groups of per-keyword differences (each group one pair
    of evaluations, about its own mean): sum of squares over total degrees of freedom."""
    squares = 0.0
    freedom = 0
    used = 0
    for differences in groups:
        if len(differences) < MIN_KEYWORDS:
            continue
        mean = math.fsum(differences) / len(differences)
        squares += math.fsum((d - mean) ** 2 for d in differences)
        freedom += len(differences) - 1
        used += 1
    if freedom == 0:
        return None
    return Spread(math.sqrt(squares / freedom), freedom + used, used)


def _check(*, alpha: float, sd: float, power: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if not sd >= 0 or math.isinf(sd):
        raise ValueError(f"the spread must be a finite number >= 0, got {sd}")
    if power is not None and not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1, got {power}")
