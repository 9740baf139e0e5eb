"""A calibration's verdict: each branch of the rule on made-up figures, and the gap it
rests on (the judge's alpha less people's, with its paired interval) on gold sets."""

import pytest

from apps import engine
from apps.judges.calibration_figures import (
    Figure,
    Pair,
    alpha_gap,
    judge_figures,
    people_ceiling,
)
from apps.judges.calibration_verdict import Verdict, calibration_verdict

GRADED = engine.get_scale("graded")
PEOPLE = Figure(0.80, 0.70, 0.88, n=40)


def test_a_judge_within_reach_of_people_agrees_as_well_as_they_agree_with_each_other():
    verdict = calibration_verdict(Figure(0.78, 0.66, 0.86), PEOPLE, Figure(-0.02, -0.09, 0.05))
    assert verdict.verdict == Verdict.AS_PEOPLE and not verdict.warns
    assert verdict.sentence == (
        "Agrees with people as well as people agree with each other: alpha 0.78 against "
        "people's 0.80 with each other (the difference, -0.02: 95% interval -0.09 to 0.05)."
    )


def test_a_judge_better_than_people_agree_is_told_as_good_as_them():
    verdict = calibration_verdict(Figure(0.95), PEOPLE, Figure(0.15, 0.05, 0.22))
    assert verdict.verdict == Verdict.AS_PEOPLE


def test_a_judge_whose_whole_interval_is_below_people_is_worse_by_how_much():
    verdict = calibration_verdict(Figure(0.52, 0.40, 0.63), PEOPLE, Figure(-0.28, -0.41, -0.12))
    assert verdict.verdict == Verdict.WORSE_THAN_PEOPLE and verdict.warns
    assert verdict.sentence == (
        "Worse than people: alpha 0.52 against people's 0.80 with each other, 0.28 lower "
        "(95% interval 0.12 to 0.41)."
    )


def test_without_an_interval_the_gap_s_sign_decides_and_the_sentence_says_so():
    worse = calibration_verdict(Figure(0.60), PEOPLE, Figure(-0.20))
    assert worse.verdict == Verdict.WORSE_THAN_PEOPLE
    assert worse.sentence.endswith("0.20 lower (too few keywords for an interval).")
    level = calibration_verdict(Figure(0.80), PEOPLE, Figure(0.0))
    assert level.verdict == Verdict.AS_PEOPLE
    assert "too few keywords for an interval" in level.sentence


@pytest.mark.parametrize("alpha", [0.0, -0.31])
def test_a_judge_at_or_below_chance_is_not_to_be_used_whatever_people_s_agreement(alpha):
    for ceiling in (PEOPLE, Figure(None, reason="no result has grades from two people")):
        verdict = calibration_verdict(Figure(alpha), ceiling, Figure(None))
        assert verdict.verdict == Verdict.CHANCE and verdict.warns
        assert verdict.sentence.startswith("Worse than chance")
        assert verdict.sentence.endswith("do not use this judge.")


def test_without_people_s_ceiling_only_the_judge_s_alpha_is_told():
    ceiling = Figure(None, reason="no result has grades from two people")
    verdict = calibration_verdict(Figure(0.70), ceiling, Figure(None, reason="undefined"))
    assert verdict.verdict == Verdict.NO_CEILING and not verdict.warns
    assert "alpha 0.70" in verdict.sentence
    assert "(no result has grades from two people)" in verdict.sentence


def test_a_judge_without_an_alpha_has_no_verdict_and_says_why():
    verdict = calibration_verdict(
        Figure(None, reason="every grade in it is the same"), PEOPLE, PEOPLE
    )
    assert verdict.verdict == Verdict.UNDECIDED and not verdict.warns
    assert verdict.sentence == "No verdict yet: every grade in it is the same."


# --- The gap, on gold sets ------------------------------------------------------------


def _gold(judge_of) -> list[Pair]:
    """Ten keywords of four results; two people agree on each but the last (3 vs 2); the
    judge grades by `judge_of(keyword, people's first grade)`."""
    pairs = []
    for keyword in range(10):
        for number in range(4):
            first = (number + keyword) % 4
            people = (first, first) if number < 3 else (first, (first + 1) % 4)
            pairs.append(Pair(keyword, people, judge_of(keyword, first)))
    return pairs


def test_the_gap_is_the_judge_s_alpha_less_people_s_on_the_same_results():
    pairs = _gold(lambda keyword, first: first if keyword % 3 else (first + 2) % 4)
    gap = alpha_gap(pairs, GRADED, samples=300)
    judge = judge_figures(pairs, GRADED, samples=0).alpha.value
    people = people_ceiling(pairs, GRADED, samples=0).alpha.value
    assert gap.value == pytest.approx(judge - people)
    assert gap.low is not None and gap.high is not None and gap.low <= gap.value <= gap.high
    assert gap.n == 10
    assert alpha_gap(pairs, GRADED, samples=300) == gap  # seeded: the same every time


def test_a_judge_that_grades_at_random_is_worse_than_people_and_one_that_copies_them_is_not():
    scrambled = _gold(lambda keyword, first: (first * 3 + keyword) % 4)
    worse = alpha_gap(scrambled, GRADED, samples=300)
    assert worse.high is not None and worse.high < 0
    copying = _gold(lambda keyword, first: first)
    level = alpha_gap(copying, GRADED, samples=300)
    assert level.value is not None and level.value > 0
    assert level.high is not None and level.high >= 0


def test_without_two_people_on_any_result_the_gap_is_undefined():
    pairs = [Pair(keyword, (1,), 1) for keyword in range(3)]
    gap = alpha_gap(pairs, GRADED, samples=100)
    assert gap.value is None and gap.reason
