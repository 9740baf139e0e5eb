"""Kendall's tau-b against SciPy, and the bootstrap interval's behaviour."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from apps.stats.resampling import bootstrap_interval, kendall_tau_b


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40))
def test_tau_b_equals_scipys_with_ties(pairs):
    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs], dtype=float)
    ours = kendall_tau_b(x, y)
    theirs = scipy_stats.kendalltau(x, y).statistic
    if np.isnan(theirs):
        assert ours is None
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_tau_b_of_the_same_order_is_one_and_of_the_reverse_minus_one():
    x = np.array([0.1, 0.5, 0.3, 0.9])
    assert kendall_tau_b(x, x * 2) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert kendall_tau_b(np.array([1.0]), np.array([2.0])) is None
    assert kendall_tau_b(np.array([1.0, 1.0]), np.array([2.0, 3.0])) is None


def test_the_bootstrap_interval_holds_the_mean_and_is_reproducible():
    values = np.arange(30, dtype=float)
    mean = lambda drawn: float(values[drawn].mean())  # noqa: E731
    low, high = bootstrap_interval(mean, 30, seed=7)
    assert low < values.mean() < high
    assert (low, high) == bootstrap_interval(mean, 30, seed=7)
    # Undefined on most resamples: no interval rather than one from a few.
    assert bootstrap_interval(lambda drawn: None, 30) == (None, None)
    assert bootstrap_interval(mean, 0) == (None, None)
