"""Agreement statistics on plain lists: hand-worked examples, the reference packages
(statsmodels for Fleiss' kappa, krippendorff for alpha) and every edge case."""

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from apps.engine import SCALES
from apps.insights.agreement.report import Ratings, agreement_report, level_of
from apps.stats.agreement import (
    ONE_VALUE_REASON,
    category_counts,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
)

BINARY = SCALES["binary"].grades
GRADED = SCALES["graded"].grades


def counts_of(items: list[list[int]], scale_grades) -> np.ndarray:
    """The count table of items given as lists of their grades."""
    codes = [index for index, grades in enumerate(items) for _ in grades]
    grades = [grade for item in items for grade in item]
    return category_counts(codes, grades, scale_grades)


# --- Hand-worked examples ---------------------------------------------------------------
# Four results, three graders each, binary: two unanimous, two split 2 to 1.
#   Fleiss: P_i = 1, 1, 1/3, 1/3 -> P = 2/3; both grades half of all -> Pe = 1/2;
#   kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
#   Krippendorff (nominal): coincidences o00 = 4, o01 = o10 = 2, o11 = 4, n = 12;
#   alpha = 1 - (n - 1) * (o01 + o10) / (2 * n0 * n1) = 1 - 11 * 4 / 72 = 7/18.
#   Observed: agreeing pairs 6 + 6 + 2 + 2 of 4 * 6 -> 2/3.
SPLIT_BINARY = [[1, 1, 1], [0, 0, 0], [0, 1, 1], [0, 0, 1]]


def test_fleiss_kappa_of_a_hand_worked_binary_example_is_one_third():
    kappa = fleiss_kappa(counts_of(SPLIT_BINARY, BINARY), 3)

    assert kappa.value == pytest.approx(1 / 3)
    assert (kappa.items, kappa.reason) == (4, "")


def test_krippendorff_alpha_of_the_same_example_is_seven_eighteenths():
    alpha = krippendorff_alpha(counts_of(SPLIT_BINARY, BINARY), "nominal")

    assert alpha.value == pytest.approx(7 / 18)
    assert alpha.name == "Krippendorff's alpha (nominal)"


def test_observed_agreement_of_the_same_example_is_two_thirds():
    assert observed_agreement(counts_of(SPLIT_BINARY, BINARY)).value == pytest.approx(2 / 3)


def test_ordinal_alpha_of_a_hand_worked_graded_example():
    # Results graded [0, 1], [1, 3], [3, 3]. Values 0, 1, 1, 3, 3, 3: n0 = 1, n1 = 2,
    # n3 = 3 (n2 = 0). Ordinal distances: d(0,1) = 3 - 1.5 = 1.5, d(1,3) = 5 - 2.5 = 2.5,
    # d(0,3) = 6 - 2 = 4. Observed: 2 * 1.5^2 + 2 * 2.5^2 = 17. Expected:
    # 2 * (1*2*2.25 + 1*3*16 + 2*3*6.25) = 180. alpha = 1 - 5 * 17 / 180 = 19/36.
    alpha = krippendorff_alpha(counts_of([[0, 1], [1, 3], [3, 3]], GRADED), "ordinal")

    assert alpha.value == pytest.approx(19 / 36)


def test_ordinal_alpha_weighs_a_far_disagreement_more_than_nominal_does():
    near = counts_of([[0, 1], [2, 3], [0, 0], [3, 3]], GRADED)
    far = counts_of([[0, 3], [3, 0], [0, 0], [3, 3]], GRADED)

    assert krippendorff_alpha(near, "ordinal").value > krippendorff_alpha(far, "ordinal").value


# --- Reference packages -----------------------------------------------------------------


@st.composite
def rated_items(draw, *, same_count: bool):
    scale = draw(st.sampled_from(list(SCALES)))
    grade = st.sampled_from(SCALES[scale].grades)
    if same_count:
        raters = draw(st.integers(2, 5))
        item = st.lists(grade, min_size=raters, max_size=raters)
    else:
        item = st.lists(grade, min_size=0, max_size=5)
    items = draw(st.lists(item, min_size=1, max_size=30))
    return scale, items


def distinct_values(items) -> int:
    return len({grade for item in items for grade in item if len(item) >= 2})


@settings(max_examples=300)
@given(case=rated_items(same_count=True))
def test_fleiss_kappa_matches_statsmodels(case):
    scale, items = case
    table = counts_of(items, SCALES[scale].grades)

    ours = fleiss_kappa(table, len(items[0]))

    if distinct_values(items) < 2:
        assert ours.value is None and ours.reason == ONE_VALUE_REASON
    else:
        assert ours.value == pytest.approx(statsmodels_fleiss_kappa(table, method="fleiss"))


def reliability_data(items) -> np.ndarray:
    """Krippendorff's layout: one row per rating slot, one column per item, NaN = none."""
    slots = max(len(item) for item in items)
    data = np.full((slots, len(items)), np.nan)
    for column, item in enumerate(items):
        data[: len(item), column] = item
    return data


@settings(max_examples=300)
@given(case=rated_items(same_count=False))
def test_krippendorff_alpha_matches_the_krippendorff_package_with_missing_ratings(case):
    scale, items = case
    level = level_of(scale)

    ours = krippendorff_alpha(counts_of(items, SCALES[scale].grades), level)

    if distinct_values(items) < 2:
        assert ours.value is None
        return
    reference = krippendorff.alpha(
        reliability_data=reliability_data(items),
        value_domain=list(SCALES[scale].grades),
        level_of_measurement=level,
    )
    assert ours.value == pytest.approx(reference, abs=1e-9)
    assert ours.items == sum(len(item) >= 2 for item in items)


def test_alpha_matches_the_package_on_a_detail_example_with_three_graders_and_gaps():
    items = [[7, 8, 10], [1, 2], [5], [9, 9, 3], [4, 6, 6], [10, 10]]

    ours = krippendorff_alpha(counts_of(items, SCALES["detail"].grades), "ordinal")

    reference = krippendorff.alpha(
        reliability_data=reliability_data(items),
        value_domain=list(range(1, 11)),
        level_of_measurement="ordinal",
    )
    assert ours.value == pytest.approx(reference)
    assert ours.items == 5  # [5] has no one to pair with


# --- Edge cases -------------------------------------------------------------------------


def test_with_no_grades_every_statistic_is_none_with_a_reason():
    report = agreement_report(Ratings.of([]), scale="graded", ratings_per_item=3)

    assert (report.items, report.graders, report.grades) == (0, 0, 0)
    assert report.kappa.value is None and report.kappa.reason == "no result has all 3 grades yet"
    assert report.alpha.value is None and report.alpha.reason == "no result has two grades yet"
    assert report.observed.value is None
    assert report.per_grader == []


def test_one_grade_per_result_cannot_give_kappa():
    report = agreement_report(
        Ratings.of([("a", "ann", 1), ("b", "bob", 2)]), scale="graded", ratings_per_item=1
    )

    assert report.kappa.value is None
    assert report.kappa.reason == "it needs at least two grades per result"
    assert report.alpha.reason == "no result has two grades yet"


def test_a_single_grader_gives_no_agreement_even_with_many_grades():
    # Imported judgements may hold one external grader on every slot of a result.
    triples = [(item, "vendor", grade) for item, grade in [("a", 1), ("a", 0), ("b", 1), ("b", 1)]]

    report = agreement_report(Ratings.of(triples), scale="binary", ratings_per_item=2)

    assert report.graders == 1
    assert report.kappa.value is None and report.alpha.value is None
    assert "only one grader" in report.kappa.reason


def test_when_everyone_gives_the_same_grade_the_statistics_are_undefined_not_one():
    triples = [(item, grader, 2) for item in "abc" for grader in ("ann", "bob", "cy")]

    report = agreement_report(Ratings.of(triples), scale="graded", ratings_per_item=3)

    assert report.kappa.value is None and report.kappa.reason == ONE_VALUE_REASON
    assert report.alpha.value is None and report.alpha.reason == ONE_VALUE_REASON
    assert report.observed.value == 1.0  # the plain agreement says what happened
    assert all(grader.agreement == 1.0 for grader in report.per_grader)


def test_perfect_agreement_over_different_grades_is_one():
    triples = [
        (item, grader, grade)
        for item, grade in [("a", 0), ("b", 3), ("c", 2)]
        for grader in ("ann", "bob")
    ]

    report = agreement_report(Ratings.of(triples), scale="graded", ratings_per_item=2)

    assert report.kappa.value == pytest.approx(1.0)
    assert report.alpha.value == pytest.approx(1.0)


def test_kappa_leaves_out_results_with_fewer_grades_than_slots_and_says_how_many():
    triples = [
        ("a", "ann", 1), ("a", "bob", 1), ("a", "cy", 0),
        ("b", "ann", 0), ("b", "bob", 0), ("b", "cy", 0),
        ("c", "ann", 1), ("c", "bob", 0),  # two of three
        ("d", "ann", 1),  # one of three
    ]  # fmt: skip

    report = agreement_report(Ratings.of(triples), scale="binary", ratings_per_item=3)

    assert report.items == 4
    assert report.kappa.items == 2 and report.kappa_left_out == 2
    assert report.alpha.items == 3  # every result with two grades or more
    reference = krippendorff.alpha(
        reliability_data=[[1, 0, 1, 1], [1, 0, 0, np.nan], [0, 0, np.nan, np.nan]],
        level_of_measurement="nominal",
    )
    assert report.alpha.value == pytest.approx(reference)
    assert not math.isnan(report.kappa.value)
