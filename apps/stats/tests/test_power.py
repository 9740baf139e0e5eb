"""Planning numbers: the paired t-test's power, the keywords a change needs and the
smallest change a number of keywords detects, equal to statsmodels' power functions."""

import math

import pytest
from statsmodels.stats.power import TTestPower

from apps.stats.power import (
    detectable_change,
    keywords_needed,
    paired_power,
    pooled_spread,
)

REFERENCE = TTestPower()


@pytest.mark.parametrize("keywords", [2, 5, 20, 100, 1000])
@pytest.mark.parametrize(("change", "sd"), [(0.01, 0.1), (0.05, 0.2), (0.2, 0.25), (-0.03, 0.08)])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_power_equals_statsmodels(keywords, change, sd, alpha):
    expected = REFERENCE.power(
        effect_size=abs(change) / sd, nobs=keywords, alpha=alpha, alternative="two-sided"
    )
    ours = paired_power(change=change, sd=sd, keywords=keywords, alpha=alpha)

    if math.isnan(expected):
        # Far in the noncentral t's tail scipy (and so statsmodels) gives NaN; the power
        # is then as good as 1, and Relevo says so.
        assert ours == pytest.approx(1.0, abs=1e-6)
    else:
        assert ours == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("change", "sd"), [(0.01, 0.1), (0.02, 0.15), (0.05, 0.2), (0.3, 0.25)])
@pytest.mark.parametrize("power", [0.8, 0.9])
def test_keywords_needed_is_statsmodels_solution_rounded_up(change, sd, power):
    solved = REFERENCE.solve_power(
        effect_size=change / sd, alpha=0.05, power=power, alternative="two-sided"
    )

    needed = keywords_needed(change=change, sd=sd, power=power)

    assert needed == max(2, math.ceil(solved - 1e-9))
    assert paired_power(change=change, sd=sd, keywords=needed) >= power
    if needed > 2:
        assert paired_power(change=change, sd=sd, keywords=needed - 1) < power


@pytest.mark.parametrize("keywords", [10, 40, 200, 5000])
def test_the_detectable_change_is_statsmodels_effect_size_times_the_spread(keywords):
    sd = 0.12
    effect = REFERENCE.solve_power(nobs=keywords, alpha=0.05, power=0.8, alternative="two-sided")

    detectable = detectable_change(sd=sd, keywords=keywords)

    # statsmodels' root finder stops at its tolerance; Relevo bisects to the float's
    # precision, where the power is 0.8 exactly.
    assert detectable == pytest.approx(effect * sd, rel=1e-4)
    assert paired_power(change=detectable, sd=sd, keywords=keywords) == pytest.approx(0.8, abs=1e-9)


def test_a_worked_plan_ndcg_differences_spread_0_1_a_change_of_0_02():
    # d = 0.2: statsmodels solves n = 198.15, so 199 keywords reach 80 % power.
    assert keywords_needed(change=0.02, sd=0.1) == 199
    assert keywords_needed(change=0.0, sd=0.1) is None
    assert keywords_needed(change=0.00001, sd=1.0) is None  # past a million keywords


def test_the_spread_pools_each_pairs_differences_about_its_own_mean():
    # Two pairs: [0.1, 0.3] (mean 0.2, squares 0.02) and [0, 0, 0.3] (mean 0.1, 0.06).
    spread = pooled_spread([[0.1, 0.3], [0.0, 0.0, 0.3], [0.5]])

    assert spread.sd == pytest.approx(math.sqrt((0.02 + 0.06) / 3))
    assert (spread.pairs, spread.differences) == (2, 5)
    assert pooled_spread([[0.4]]) is None


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"change": 0.1, "sd": -1.0, "keywords": 10}, "spread"),
        ({"change": 0.1, "sd": 0.1, "keywords": 1}, "at least 2"),
        ({"change": 0.1, "sd": 0.1, "keywords": 10, "alpha": 1.5}, "alpha"),
    ],
)
def test_bad_inputs_are_refused_by_name(arguments, problem):
    with pytest.raises(ValueError, match=problem):
        paired_power(**arguments)
