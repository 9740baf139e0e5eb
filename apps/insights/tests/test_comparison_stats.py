"""Paired comparison statistics on plain arrays, against hand-worked values and SciPy."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from apps.insights.comparison.wording import p_text, verdict
from apps.stats import paired as stats
from apps.stats.paired import compare_paired

NAN = math.nan


def column(values) -> np.ndarray:
    return np.asarray(values, dtype=float)[:, None]


def one(baseline, candidate, **options) -> stats.PairedResult:
    [result] = compare_paired(column(baseline), column(candidate), **options)
    return result


# --- Hand-worked ----------------------------------------------------------------------


def test_means_difference_and_wins_ties_losses_of_a_small_example():
    result = one([0.2, 0.4, 0.6], [0.5, 0.4, 0.9])

    assert result.compared == 3
    assert result.baseline_mean == pytest.approx(0.4)
    assert result.candidate_mean == pytest.approx(0.6)
    assert result.difference == pytest.approx(0.2)
    assert (result.wins, result.ties, result.losses) == (2, 1, 0)


def test_exact_p_of_three_differences_counts_the_sign_patterns_as_extreme():
    # Sums of +-1 +-2 +-3: 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 in 2 of 8.
    result = one([0, 0, 0], [1, 2, 3])

    assert (result.p_value, result.exact) == (0.25, True)


def test_a_zero_difference_has_no_sign_so_half_the_patterns_match():
    # d = 0.3, 0, 0.3: sums 0.6 (x2), 0 (x4), -0.6 (x2); |sum| >= 0.6 in 4 of 8.
    assert one([0.2, 0.4, 0.6], [0.5, 0.4, 0.9]).p_value == 0.5


def test_identical_evaluations_have_p_one_and_a_zero_interval():
    result = one([0.1, 0.5, 0.9, 0.3], [0.1, 0.5, 0.9, 0.3])

    assert (result.difference, result.ci_low, result.ci_high, result.p_value) == (0, 0, 0, 1)
    assert (result.wins, result.ties, result.losses) == (0, 4, 0)
    assert not result.significant


def test_bootstrap_interval_of_two_keywords_spans_both_differences():
    # Resampled means are 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: the 2.5th percentile
    # is 0 and the 97.5th is 1.
    result = one([0.0, 0.0], [0.0, 1.0])

    assert (result.ci_low, result.ci_high) == (0.0, 1.0)


def test_one_keyword_gives_a_point_interval_and_p_one():
    result = one([0.25], [0.75])

    assert (result.ci_low, result.ci_high) == (0.5, 0.5)
    assert (result.p_value, result.exact) == (1.0, True)


def test_every_keyword_better_among_many_gives_the_smallest_random_p():
    # 2^20 patterns: too many to list, so 10,000 are drawn; only the all-positive
    # pattern (chance 2 in a million) is as extreme, so hits are 0 and p = 1/10,001.
    result = one(np.zeros(20), np.linspace(0.01, 0.2, 20))

    assert (result.p_value, result.exact) == (1 / 10_001, False)
    assert result.significant


def test_ties_allow_only_float_noise():
    result = one([0.3, 0.3, 0.3, 0.3], [0.3 + 1e-12, 0.3 - 1e-12, 0.3 + 1e-6, 0.2])

    assert (result.wins, result.ties, result.losses) == (1, 2, 1)


def test_missing_values_are_left_out_pair_by_pair():
    baseline = np.array([[1.0, 0.5], [NAN, 0.5], [3.0, NAN], [2.0, 0.5]])
    candidate = np.array([[2.0, 0.7], [5.0, 0.9], [NAN, 0.1], [2.0, NAN]])

    first, second = compare_paired(baseline, candidate)

    assert (first.compared, first.baseline_mean, first.candidate_mean) == (2, 1.5, 2.0)
    assert (first.wins, first.ties, first.losses) == (1, 1, 0)
    assert (second.compared, second.difference) == (2, pytest.approx(0.3))


def test_no_keyword_with_both_values_gives_no_numbers():
    [result] = compare_paired(column([NAN, 1.0]), column([2.0, NAN]))

    assert result.compared == 0
    assert result.difference is result.p_value is result.ci_low is None
    assert not result.significant


def test_shapes_must_match():
    with pytest.raises(ValueError, match="same shape"):
        compare_paired(np.zeros((3, 2)), np.zeros((3, 1)))


# --- Against SciPy ----------------------------------------------------------------------


def differences_of(size: int, seed: int, shift: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random((size, 1))
    return baseline, baseline + rng.normal(shift, 0.1, (size, 1))


@pytest.mark.parametrize("size", [5, 60, 500])
def test_the_interval_is_scipys_percentile_bootstrap_with_the_same_draws(size):
    baseline, candidate = differences_of(size, seed=size)
    [result] = compare_paired(baseline, candidate, samples=4000)

    reference = scipy_stats.bootstrap(
        ((candidate - baseline)[:, 0],),
        np.mean,
        n_resamples=4000,
        method="percentile",
        confidence_level=0.95,
        rng=stats.generator(stats.SEED, 0, size),
    ).confidence_interval
    assert result.ci_low == pytest.approx(reference.low, rel=1e-12, abs=1e-15)
    assert result.ci_high == pytest.approx(reference.high, rel=1e-12, abs=1e-15)


def test_metrics_sharing_a_draw_get_the_same_interval_as_alone():
    # Three metrics with all keywords take the matrix-product path; one alone gathers.
    rng = np.random.default_rng(3)
    baseline = rng.random((300, 3))
    candidate = baseline + rng.normal(0.01, 0.1, (300, 3))

    together = compare_paired(baseline, candidate, samples=2000, permutations=2000)
    alone = [
        compare_paired(baseline[:, [c]], candidate[:, [c]], samples=2000, permutations=2000)[0]
        for c in range(3)
    ]

    for shared, single in zip(together, alone, strict=True):
        assert shared.ci_low == pytest.approx(single.ci_low, rel=1e-12)
        assert shared.ci_high == pytest.approx(single.ci_high, rel=1e-12)
        assert shared.p_value == single.p_value


@pytest.mark.parametrize("size", [4, 9, 13])
def test_exact_p_equals_scipys_exact_sign_flip_test(size):
    baseline, candidate = differences_of(size, seed=size, shift=0.05)
    result = one(baseline[:, 0], candidate[:, 0])

    reference = scipy_stats.permutation_test(
        ((candidate - baseline)[:, 0],),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=10_000,
    )
    assert 2**size <= 10_000 and result.exact
    assert result.p_value == pytest.approx(reference.pvalue, abs=1e-12)


@pytest.mark.parametrize(("size", "shift"), [(40, 0.03), (150, 0.01), (300, 0.008)])
def test_random_p_agrees_with_scipys_permutation_test_within_its_sampling_error(size, shift):
    baseline, candidate = differences_of(size, seed=size, shift=shift)
    result = one(baseline[:, 0], candidate[:, 0])

    reference = scipy_stats.permutation_test(
        ((candidate - baseline)[:, 0],),
        np.mean,
        permutation_type="samples",
        n_resamples=30_000,
        rng=np.random.default_rng(1),
    ).pvalue
    assert not result.exact
    assert 0.005 < reference < 0.9  # a p-value where the check means something
    # Both are Monte Carlo estimates of the same p; 4.5 standard errors of the sum.
    error = math.sqrt(reference * (1 - reference) * (1 / 10_000 + 1 / 30_000))
    assert abs(result.p_value - reference) < 4.5 * error + 2e-4


# --- Properties -------------------------------------------------------------------------

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=1, max_size=40))
def test_interval_lies_within_the_differences_and_p_within_zero_and_one(pairs):
    baseline, candidate = zip(*pairs, strict=True)
    result = one(baseline, candidate, samples=500, permutations=500)
    differences = np.subtract(candidate, baseline)

    tolerance = 1e-9 * (1 + np.abs(differences).max())
    assert differences.min() - tolerance <= result.ci_low <= result.ci_high
    assert result.ci_high <= differences.max() + tolerance
    assert 0 < result.p_value <= 1
    assert result.wins + result.ties + result.losses == result.compared == len(pairs)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=2, max_size=40))
def test_swapping_the_evaluations_mirrors_the_interval_and_keeps_p(pairs):
    baseline, candidate = zip(*pairs, strict=True)
    forward = one(baseline, candidate, samples=500, permutations=500)
    backward = one(candidate, baseline, samples=500, permutations=500)

    scale = 1e-9 * (1 + max(abs(v) for pair in pairs for v in pair))
    assert backward.ci_low == pytest.approx(-forward.ci_high, abs=scale)
    assert backward.ci_high == pytest.approx(-forward.ci_low, abs=scale)
    assert backward.p_value == forward.p_value
    assert (backward.wins, backward.losses) == (forward.losses, forward.wins)


def test_same_input_same_numbers_and_another_seed_other_draws():
    baseline, candidate = differences_of(300, seed=7)

    first = compare_paired(baseline, candidate)
    again = compare_paired(baseline, candidate)
    other = compare_paired(baseline, candidate, seed=stats.SEED + 1)

    assert first == again
    assert (other[0].ci_low, other[0].p_value) != (first[0].ci_low, first[0].p_value)


def test_blocks_do_not_change_the_numbers(monkeypatch):
    baseline, candidate = differences_of(250, seed=11)
    whole = compare_paired(baseline, candidate, samples=3000, permutations=3000)

    monkeypatch.setattr(stats, "BLOCK", 1000)  # four rows of 250 at a time
    in_blocks = compare_paired(baseline, candidate, samples=3000, permutations=3000)

    assert whole == in_blocks


# --- Words ------------------------------------------------------------------------------


def test_p_values_read_with_three_decimals_or_as_below_one_in_a_thousand():
    assert (p_text(0.0031), p_text(0.05), p_text(0.000999), p_text(None)) == (
        "p = 0.003",
        "p = 0.050",
        "p < 0.001",
        "",
    )


def test_the_sentence_says_better_worse_or_no_significant_difference():
    better = one(np.zeros(20), np.full(20, 0.1))
    worse = one(np.full(20, 0.1), np.zeros(20))
    same = one([0.1, 0.2, 0.3], [0.2, 0.1, 0.3])

    def say(result):
        return verdict(baseline="A", candidate="B", label="nDCG@10", result=result)

    assert say(better) == "B is better than A on nDCG@10 (p < 0.001)"
    assert say(worse) == "B is worse than A on nDCG@10 (p < 0.001)"
    assert say(same) == (
        "No significant difference between B and A on nDCG@10 (p = 1.000, significance at p < 0.05)"
    )


def test_a_count_or_a_residual_is_higher_or_lower_never_better_or_worse():
    more = one([3, 4, 5, 6, 7, 8] * 4, [9, 10, 11, 12, 13, 14] * 4)

    said = verdict(baseline="A", candidate="B", label="num_ret", result=more, ranks=False)

    assert said == "B is higher than A on num_ret (p < 0.001)"


# --- Several metrics: Holm's adjustment -----------------------------------------------


@pytest.mark.parametrize(
    "p_values",
    [[0.01], [0.01, 0.04, 0.03], [0.2, 0.001, 0.04, 0.04, 0.9], [0.5, 0.6], [0.0001, 1.0]],
)
def test_holm_adjusted_p_values_equal_statsmodels(p_values):
    from statsmodels.stats.multitest import multipletests

    _reject, reference, _s, _b = multipletests(p_values, method="holm")

    assert stats.holm_adjusted(p_values) == pytest.approx(list(reference), abs=1e-15)


def test_a_metric_without_a_test_is_left_out_of_the_adjustment():
    assert stats.holm_adjusted([0.02, None, 0.04]) == [0.04, None, 0.04]


def test_with_several_metrics_significance_is_read_from_the_adjusted_p():
    # 10 keywords, every sign pattern enumerated: 8 better, 1 worse, 1 tied by the same
    # step gives p = P(|sum of 9 random signs| >= 7) = 20 / 512 on each of two metrics.
    base = np.zeros((10, 2))
    candidate = np.array([[0.1, 0.1]] * 8 + [[-0.1, 0.0], [0.0, -0.1]])

    first, second = compare_paired(base, candidate)

    assert first.exact and second.exact
    assert first.p_value == second.p_value == pytest.approx(20 / 512)
    assert first.p_adjusted == second.p_adjusted == pytest.approx(40 / 512)
    assert not first.significant and not second.significant
    said = verdict(baseline="A", candidate="B", label="P@5", result=first)
    assert said == (
        "No significant difference between B and A on P@5 (p = 0.039, Holm-adjusted "
        "p = 0.078, significance at p < 0.05)"
    )


def test_one_metric_alone_is_not_adjusted():
    result = one(np.zeros(20), np.full(20, 0.1))

    assert result.p_adjusted == result.p_value
