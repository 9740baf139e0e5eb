"""Click estimates as grades (apps/engine/click_grades.py): a lead's thresholds map
values to grades; thresholds fitted to people's grades reproduce a mapping planted in
them, and are refused when too few pairs have both."""

import math

import numpy as np
import pytest

from apps.engine import EngineError
from apps.engine.click_grades import (
    MIN_COMMON_PAIRS,
    agreement,
    fitted_thresholds,
    grades_by_thresholds,
)
from apps.engine.clicks import Estimate


def values(*numbers: float) -> dict[tuple[str, str], Estimate]:
    return {("q", f"d{index}"): Estimate(number, 50) for index, number in enumerate(numbers)}


def test_a_value_at_or_above_a_threshold_takes_the_grade_above_it():
    grades = grades_by_thresholds(values(0.0, 0.19, 0.2, 0.5, 0.79, 0.8, 1.7), (0.2, 0.5, 0.8))

    assert list(grades.values()) == [0, 0, 1, 2, 2, 3, 3]


def test_equal_thresholds_leave_the_grade_between_them_empty():
    grades = grades_by_thresholds(values(0.1, 0.6, 0.9), (0.5, 0.5, 0.8))

    assert list(grades.values()) == [0, 2, 3]


def test_thresholds_out_of_order_are_refused():
    with pytest.raises(EngineError, match="ascending"):
        grades_by_thresholds(values(0.1), (0.5, 0.2))


def planted(count: int, seed: int = 3) -> tuple[dict, dict, tuple[float, ...]]:
    """COEC-like values (some above 1) and the grades a lead's thresholds give them."""
    rng = np.random.default_rng(seed)
    estimates = values(*rng.uniform(0.0, 2.0, count).tolist())
    thresholds = (0.4, 0.9, 1.5)
    return estimates, grades_by_thresholds(estimates, thresholds), thresholds


def test_fitted_thresholds_reproduce_a_planted_mapping():
    estimates, people, planted_thresholds = planted(200)

    fitted = fitted_thresholds(estimates, people, levels=4)

    assert grades_by_thresholds(estimates, fitted) == people
    assert agreement(grades_by_thresholds(estimates, fitted), people) == 1.0
    # Each fitted threshold lies in the gap around the planted one: halfway between the
    # values on either side of it.
    observed = sorted(estimate.value for estimate in estimates.values())
    for fitted_one, planted_one in zip(fitted, planted_thresholds, strict=True):
        below = max(value for value in observed if value < planted_one)
        above = min(value for value in observed if value >= planted_one)
        assert fitted_one == pytest.approx((below + above) / 2)


def test_fitting_uses_only_the_pairs_both_have_and_is_deterministic():
    estimates, people, _ = planted(120)
    # Pairs without a click estimate, or without a person's grade, play no part.
    people_with_extra = {**people, ("other", "x"): 3}
    estimates_with_extra = {**estimates, ("other", "y"): Estimate(0.0, 99)}

    first = fitted_thresholds(estimates_with_extra, people_with_extra, levels=4)

    assert first == fitted_thresholds(estimates, people, levels=4)
    assert first == fitted_thresholds(dict(reversed(estimates.items())), people, levels=4)


def test_noisy_grades_get_the_thresholds_that_agree_most():
    # Values 0, 0.025, ..., 0.975, graded 0 below 0.5 and 1 from 0.5 on, except 0.475
    # (given 1) and 0.525 (given 0). Cutting below 0.475 misses only 0.525: 39 of 40;
    # below 0.5 misses both; below 0.55 misses 0.475 and 0.5. So the cut is halfway
    # between 0.45 and 0.475.
    estimates = values(*[index / 40 for index in range(40)])
    people = {pair: int(estimate.value >= 0.5) for pair, estimate in estimates.items()}
    people[("q", "d19")] = 1  # value 0.475
    people[("q", "d21")] = 0  # value 0.525

    (threshold,) = fitted_thresholds(estimates, people, levels=2)

    assert threshold == pytest.approx(0.4625)
    assert agreement(grades_by_thresholds(estimates, (threshold,)), people) == 39 / 40


def test_a_grade_people_never_gave_gets_an_infinite_threshold():
    estimates = values(*[index / 30 for index in range(30)])
    people = {pair: int(estimate.value >= 0.5) for pair, estimate in estimates.items()}

    thresholds = fitted_thresholds(estimates, people, levels=3)

    assert thresholds[1] == math.inf
    assert set(grades_by_thresholds(estimates, thresholds).values()) == {0, 1}


def test_fitting_with_too_few_common_pairs_is_refused():
    estimates, people, _ = planted(200)
    few = dict(list(people.items())[: MIN_COMMON_PAIRS - 1])

    with pytest.raises(ValueError, match=f"only {MIN_COMMON_PAIRS - 1} pairs have both"):
        fitted_thresholds(estimates, few, levels=4)


def test_people_grades_off_the_scale_are_refused():
    estimates, people, _ = planted(50)

    with pytest.raises(EngineError, match="between 0 and 2"):
        fitted_thresholds(estimates, people, levels=3)
