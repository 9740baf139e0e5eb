"""Each grader against the consensus of the others, the disagreement rule and the
conventional readings, on plain lists."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import SCALES, snapshot_value
from apps.insights.agreement.consensus import grader_agreement
from apps.insights.agreement.disagreement import (
    SPREAD,
    TIE,
    disagreeing_items,
    disagreement_kind,
)
from apps.insights.agreement.readings import krippendorff_reading, landis_koch_band
from apps.insights.agreement.report import Ratings, agreement_report


def by_name(report_graders, names):
    return {names[entry.grader]: entry for entry in report_graders}


def test_a_grader_is_compared_with_the_others_majority_never_with_their_own_grade():
    triples = [
        ("a", "ann", 1), ("a", "bob", 1), ("a", "cy", 0),
        ("b", "ann", 0), ("b", "bob", 1), ("b", "cy", 1),
        ("c", "ann", 1), ("c", "bob", 0),  # ann and bob each face one other grade
    ]  # fmt: skip

    graders = agreement_report(Ratings.of(triples), scale="binary", ratings_per_item=3).per_grader
    ann, bob, cy = graders

    # ann: a (bob 1, cy 0: tie, not compared), b (1, 1 -> 1: disagrees), c (bob 0: disagrees)
    assert (ann.graded, ann.compared, ann.agreeing, ann.agreement) == (3, 2, 0, 0.0)
    # bob: a (ann 1, cy 0: tie), b (ann 0, cy 1: tie), c (ann 1: disagrees)
    assert (bob.graded, bob.compared, bob.agreeing) == (3, 1, 0)
    # cy: a (1, 1 -> 1: disagrees), b (0, 1: tie)
    assert (cy.graded, cy.compared, cy.agreeing) == (2, 1, 0)
    assert ann.mean_distance == 1.0


def test_on_the_graded_scale_a_grade_agrees_when_it_is_nearest_to_the_others_mean():
    triples = [
        ("a", "ann", 2), ("a", "bob", 1), ("a", "cy", 2),  # ann vs 1.5 -> agrees (halfway)
        ("b", "ann", 3), ("b", "bob", 1), ("b", "cy", 2),  # ann vs 1.5 -> disagrees
        ("c", "ann", 1), ("c", "bob", 1), ("c", "cy", 2),  # ann vs 1.5 -> agrees
    ]  # fmt: skip

    ann = agreement_report(Ratings.of(triples), scale="graded", ratings_per_item=3).per_grader[0]

    assert (ann.compared, ann.agreeing) == (3, 2)
    assert ann.agreement == pytest.approx(2 / 3)
    assert ann.mean_distance == pytest.approx((0.5 + 1.5 + 0.5) / 3)


def test_a_grader_alone_on_every_result_has_no_agreement_to_report():
    [solo] = grader_agreement([0, 1], [0, 0], [1, 2], binary=False)

    assert (solo.graded, solo.compared, solo.agreement, solo.mean_distance) == (2, 0, None, None)


def test_no_ratings_give_no_graders():
    assert grader_agreement([], [], [], binary=True) == []


@st.composite
def evaluations(draw):
    scale = draw(st.sampled_from(list(SCALES)))
    grade = st.sampled_from(SCALES[scale].grades)
    graders = ["ann", "bob", "cy", "dee"]
    items = draw(
        st.lists(
            st.lists(
                st.tuples(st.sampled_from(graders), grade), max_size=4, unique_by=lambda r: r[0]
            ),
            min_size=1,
            max_size=12,
        )
    )
    return scale, [(index, name, g) for index, item in enumerate(items) for name, g in item]


@settings(max_examples=300)
@given(case=evaluations())
def test_the_vectorised_consensus_follows_the_written_definition(case):
    scale, triples = case
    ratings = Ratings.of(triples)
    names = {}
    for _item, name, _grade in triples:
        names.setdefault(name, len(names))

    result = {
        entry.grader: entry
        for entry in grader_agreement(
            ratings.items, ratings.graders, ratings.grades, binary=scale == "binary"
        )
    }

    for name, code in names.items():
        compared = agreeing = 0
        distances = []
        for item, who, grade in triples:
            if who != name:
                continue
            others = [g for i, w, g in triples if i == item and w != name]
            consensus = snapshot_value(others, scale)  # stage 1 of the others' grades
            if consensus is None:
                continue
            compared += 1
            distances.append(abs(grade - consensus))
            agreeing += abs(grade - consensus) <= 0.5
        entry = result[code]
        assert (entry.compared, entry.agreeing) == (compared, agreeing)
        if distances:
            assert entry.mean_distance == pytest.approx(sum(distances) / len(distances))


@pytest.mark.parametrize(
    ("grades", "scale", "kind"),
    [
        ([1, 0, None], "binary", TIE),  # strategy 3, two graded: a tie for now
        ([1, 0], "binary", TIE),
        ([1, 1, 0], "binary", None),  # a majority
        ([1, None, None], "binary", None),
        ([None, None, None], "binary", None),
        ([0, 2, None], "graded", SPREAD),
        ([0, 1, 1], "graded", None),  # neighbours only
        ([3, 1, 2], "graded", SPREAD),
        ([3], "graded", None),
        ([4, 5, 6], "detail", SPREAD),
        ([4, 5, 5], "detail", None),
        ([10, 1, None], "detail", SPREAD),
    ],
)
def test_which_snapshots_are_disagreements(grades, scale, kind):
    assert disagreement_kind(grades, scale) == kind


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (None, None),
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.21, "fair"),
        (0.4, "fair"),
        (0.55, "moderate"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_landis_and_koch_bands(value, band):
    assert landis_koch_band(value) == band


def test_krippendorffs_own_guideline():
    assert krippendorff_reading(None) is None
    assert krippendorff_reading(0.8) == "reliable enough to draw conclusions"
    assert krippendorff_reading(0.7) == "good enough for tentative conclusions only"
    assert krippendorff_reading(0.5) == "not reliable enough to draw conclusions"


@settings(max_examples=300)
@given(case=evaluations())
def test_the_vectorised_queue_rule_names_the_same_snapshots_as_the_written_one(case):
    scale, triples = case
    ratings = Ratings.of(triples)
    grades_of: dict[int, list[int]] = {}
    for item, _who, grade in triples:
        grades_of.setdefault(item, []).append(grade)

    flagged = disagreeing_items(ratings.items, ratings.grades, binary=scale == "binary")

    # Ratings.of numbers items in order of first appearance, as grades_of's keys are.
    expected = [disagreement_kind(grades, scale) is not None for grades in grades_of.values()]
    assert flagged.tolist() == expected
