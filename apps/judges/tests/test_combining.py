"""One grade from several, checked against hand computations: the panel's rules, the
samples' rule, agreement, and weights fitted by least squares."""

import pytest

from apps.judges.answers import Judged
from apps.judges.combining import (
    FITTED,
    MAJORITY,
    MEDIAN,
    SAMPLES,
    agreement,
    combine,
    fit_weights,
    majority_grade,
    median_grade,
    sampled_grade,
    weighted_grade,
)

GRADED = (0, 1, 2, 3)


def test_the_median_of_an_odd_panel_is_its_middle_grade():
    assert median_grade([3, 0, 2]) == 2


def test_the_median_of_an_even_panel_is_the_lower_middle_grade():
    assert median_grade([3, 1]) == 1
    assert median_grade([0, 2, 3, 3]) == 2


def test_a_majority_is_the_grade_most_members_gave():
    assert majority_grade([2, 2, 3]) == 2


def test_a_tie_for_the_most_votes_is_no_majority():
    assert majority_grade([1, 2]) is None
    assert majority_grade([1, 1, 3, 3, 2]) is None


def test_samples_keep_the_grade_given_most_often_and_a_tie_goes_to_the_lower_median():
    assert sampled_grade([2, 3, 2, 2, 1]) == 2
    assert sampled_grade([1, 1, 3, 3]) == 1


def test_a_weighted_grade_is_the_scale_grade_nearest_the_weighted_mean():
    # 0.75 x 3 + 0.25 x 1 = 2.5: halfway between 2 and 3, the lower is taken.
    assert weighted_grade([3, 1], [0.75, 0.25], GRADED) == 2
    # 0.9 x 3 + 0.1 x 0 = 2.7: nearest 3.
    assert weighted_grade([3, 0], [0.9, 0.1], GRADED) == 3


def test_agreement_is_the_share_of_grades_equal_to_the_one_chosen():
    assert agreement([2, 2, 3], 2) == pytest.approx(2 / 3)
    assert agreement([1, 1], 1) == 1.0


def judged(grade, reason="", confidence=None):
    return Judged(grade, reason, confidence)


def test_a_panel_grades_a_result_only_when_every_member_graded_it():
    parts = [
        ("GPT", 1, {"r1": judged(3, "gpt says"), "r2": judged(1)}, {}),
        ("Claude", 2, {"r1": judged(1, "claude says")}, {"r2": "the answer did not judge it"}),
        ("Gemini", 3, {"r1": judged(2, "gemini says"), "r2": judged(1)}, {}),
    ]
    combined = combine(["r1", "r2"], parts, rule=MEDIAN, scale_grades=GRADED)
    one = combined.judged["r1"]
    assert (one.grade, one.reason) == (2, "gemini says")
    assert one.agreement == pytest.approx(1 / 3)
    assert one.votes == (
        {"by": "GPT", "grade": 3, "judge": 1},
        {"by": "Claude", "grade": 1, "judge": 2},
        {"by": "Gemini", "grade": 2, "judge": 3},
    )
    assert combined.failed == {"r2": "Claude: the answer did not judge it"}


def test_a_split_majority_leaves_the_result_for_people_naming_the_votes():
    parts = [("GPT", 1, {"r1": judged(3)}, {}), ("Claude", 2, {"r1": judged(1)}, {})]
    combined = combine(["r1"], parts, rule=MAJORITY, scale_grades=GRADED)
    assert combined.judged == {}
    assert combined.failed == {"r1": "the panel is split (GPT 3, Claude 1): left for people"}


def test_confidences_are_averaged_only_when_every_part_reported_one():
    both = [
        ("a", None, {"r1": judged(2, confidence=0.9)}, {}),
        ("b", None, {"r1": judged(2, confidence=0.5)}, {}),
    ]
    one = [("a", None, {"r1": judged(2, confidence=0.9)}, {}), ("b", None, {"r1": judged(2)}, {})]
    assert combine(["r1"], both, rule=SAMPLES, scale_grades=GRADED).judged[
        "r1"
    ].confidence == pytest.approx(0.7)
    assert combine(["r1"], one, rule=SAMPLES, scale_grades=GRADED).judged["r1"].confidence is None


def test_the_fitted_rule_weighs_the_members():
    parts = [("a", 1, {"r1": judged(3)}, {}), ("b", 2, {"r1": judged(0)}, {})]
    combined = combine(["r1"], parts, rule=FITTED, scale_grades=GRADED, weights=[0.9, 0.1])
    assert combined.judged["r1"].grade == 3


def test_weights_fit_a_member_that_is_always_right_alone():
    # Member 0 gives people's grade, member 1 always 0: all the weight goes to member 0.
    rows = [[g, 0] for g in (0, 1, 2, 3, 2, 1)]
    targets = [0, 1, 2, 3, 2, 1]
    fit = fit_weights(rows, targets)
    assert fit.weights == pytest.approx((1.0, 0.0))
    assert fit.squared_error == pytest.approx(0.0)


def test_weights_fit_by_least_squares_summing_to_one():
    # y = 0.25 x0 + 0.75 x1 exactly: the constrained least squares finds it.
    rows = [[0, 2], [2, 2], [3, 1], [1, 3], [2, 0]]
    targets = [0.25 * a + 0.75 * b for a, b in rows]
    fit = fit_weights(rows, targets)
    assert fit.weights == pytest.approx((0.25, 0.75))
    assert sum(fit.weights) == pytest.approx(1.0)


def test_a_weight_the_fit_would_make_negative_is_zero_instead():
    # Unconstrained, member 1 would get a negative weight (it is anti-correlated).
    rows = [[0, 3], [1, 2], [2, 1], [3, 0]]
    targets = [0.0, 1.0, 2.0, 3.0]
    fit = fit_weights(rows, targets)
    assert min(fit.weights) >= 0.0
    assert fit.weights == pytest.approx((1.0, 0.0))
