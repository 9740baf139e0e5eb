"""Every worked example of metrics.md section 5, to 4 decimals."""

import pytest

from apps.engine import mean_of, metric_value, progress, score_keyword

PROFILES = ("searchtweak", "trec")
BINARY_EXAMPLE = [1, 0, 1, 0, 1]
GRADED_EXAMPLE = [3, 2, 3, 0, 1]


def approx(expected):
    return pytest.approx(expected, abs=5e-5)


def values_at_cutoffs(metric, values, profile="searchtweak"):
    return [metric_value(metric, k, values, profile) for k in range(1, len(values) + 1)]


@pytest.mark.parametrize("profile", PROFILES)
def test_precision_at_each_cutoff_matches_the_worked_example(profile):
    assert values_at_cutoffs("precision", BINARY_EXAMPLE, profile) == approx(
        [1, 0.5, 0.6667, 0.5, 0.6]
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_recall_at_each_cutoff_matches_the_worked_example(profile):
    assert values_at_cutoffs("recall", BINARY_EXAMPLE, profile) == approx(
        [0.3333, 0.3333, 0.6667, 0.6667, 1]
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_f1_at_each_cutoff_matches_the_worked_example(profile):
    assert values_at_cutoffs("f1", BINARY_EXAMPLE, profile) == approx(
        [0.5, 0.4, 0.6667, 0.5714, 0.75]
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_average_precision_and_reciprocal_rank_at_5_match_the_worked_example(profile):
    assert metric_value("ap", 5, BINARY_EXAMPLE, profile) == approx(0.7556)
    assert metric_value("rr", 5, BINARY_EXAMPLE, profile) == approx(1)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_first_relevant_at_rank_3_gives_ap_and_rr_of_one_third(profile):
    assert metric_value("ap", 3, [0, 0, 1], profile) == approx(0.3333)
    assert metric_value("rr", 3, [0, 0, 1], profile) == approx(0.3333)


def test_map_of_three_keywords_is_the_mean_of_their_average_precisions():
    keywords = [[1, 0, 1, 0, 1], [1, 1, 0, 0, 1], [0, 0, 1, 1, 1]]
    average_precisions = [metric_value("ap", 5, values) for values in keywords]
    assert average_precisions == approx([0.7556, 0.8667, 0.4778])
    assert mean_of(average_precisions) == approx(0.7)


def test_mrr_of_three_keywords_is_the_mean_of_their_reciprocal_ranks():
    reciprocal_ranks = [metric_value("rr", 3, values) for values in ([0, 1], [1], [0, 0, 1])]
    assert reciprocal_ranks == approx([0.5, 1, 0.3333])
    assert mean_of(reciprocal_ranks) == approx(0.6111)


@pytest.mark.parametrize("profile", PROFILES)
def test_cumulative_gain_at_each_cutoff_matches_the_worked_example(profile):
    assert values_at_cutoffs("cg", GRADED_EXAMPLE, profile) == approx([3, 5, 8, 8, 9])


@pytest.mark.parametrize("profile", PROFILES)
def test_dcg_at_each_cutoff_matches_the_worked_example(profile):
    assert values_at_cutoffs("dcg", GRADED_EXAMPLE, profile) == approx(
        [3, 4.2619, 5.7619, 5.7619, 6.1487]
    )


def test_trec_ndcg_measures_against_the_whole_pool_sorted():
    assert values_at_cutoffs("ndcg", GRADED_EXAMPLE, "trec") == approx(
        [1, 0.8710, 0.9778, 0.9112, 0.9724]
    )


def test_searchtweak_ndcg_measures_against_the_same_top_k_values_sorted():
    assert values_at_cutoffs("ndcg", GRADED_EXAMPLE, "searchtweak") == approx(
        [1, 1, 0.9778, 0.9778, 0.9724]
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_dcg_and_ndcg_formulas_accept_values_beyond_the_graded_scale(profile):
    # The 1..5 example: scale checks belong to grade input, not to the formulas.
    assert metric_value("dcg", 5, [4, 1, 5, 1, 3], profile) == approx(8.7222)
    assert metric_value("ndcg", 5, [4, 1, 5, 1, 3], profile) == approx(0.8863)


@pytest.mark.parametrize("profile", PROFILES)
def test_exponential_gain_rewards_the_top_grade_first(profile):
    assert metric_value("dcg_exp", 3, [3, 2, 1], profile) == approx(9.3928)
    assert metric_value("dcg_exp", 3, [2, 3, 1], profile) == approx(7.9165)
    assert metric_value("ndcg_exp", 3, [3, 2, 1], profile) == approx(1)
    assert metric_value("ndcg_exp", 3, [2, 3, 1], profile) == approx(0.8428)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("values", "expected"),
    [([3], 0.875), ([0, 3], 0.4375), ([3, 2, 1, 0], 0.9017), ([2, 3, 0], 0.6484)],
)
def test_err_matches_the_worked_examples(profile, values, expected):
    assert metric_value("err", len(values), values, profile) == approx(expected)


def test_three_slots_per_snapshot_vote_and_leave_ties_out_of_precision():
    score = score_keyword(
        [[1, 1, 0], [0, 0, 1], [1, 0, None]], scale="binary", metrics=[("precision", 3)]
    )
    assert score.snapshot_values == [1, 0, None]
    assert score.metrics[("precision", 3)] == approx(0.5)


def test_a_tie_at_position_1_then_a_relevant_result_gives_ap_at_2_of_one_half():
    score = score_keyword([[1, 0, None], [1, 1, 0]], scale="binary", metrics=[("ap", 2)])
    assert score.snapshot_values == [None, 1]
    assert score.metrics[("ap", 2)] == approx(0.5)


def test_a_tie_then_irrelevant_then_relevant_gives_rr_at_3_of_one_third():
    score = score_keyword(
        [[0, 1, None], [0, 0, 0], [1, 1, None]], scale="binary", metrics=[("rr", 3)]
    )
    assert score.snapshot_values == [None, 0, 1]
    assert score.metrics[("rr", 3)] == approx(0.3333)


def test_three_graded_slots_are_averaged_before_cg_and_dcg():
    score = score_keyword(
        [[0, 0, 0], [1, 1, 1], [2, 1, 3]], scale="graded", metrics=[("cg", 3), ("dcg", 3)]
    )
    assert score.snapshot_values == [0, 1, 2]
    assert score.metrics[("cg", 3)] == approx(3)
    assert score.metrics[("dcg", 3)] == approx(1.6309)


def test_progress_counts_slots_not_snapshots():
    assert progress(2, 3) == approx(0.6667)


def test_a_graded_evaluation_transforms_each_slot_to_binary_before_voting():
    score = score_keyword([[1, 0, 2]], scale="graded", metrics=[("precision", 1)])
    assert score.snapshot_values == [1]  # the native graded mean
    assert score.metrics[("precision", 1)] == 1
