"""The calibration figures on hand-worked gold sets: agreement with people's consensus,
people's own agreement as the ceiling, rankings, and a decision the judge would change."""

import pytest

from apps import engine
from apps.judges.calibration_figures import (
    BETTER,
    SAME,
    WORSE,
    Pair,
    judge_figures,
    nearest_grade,
    people_ceiling,
)

BINARY = engine.get_scale("binary")
GRADED = engine.get_scale("graded")


def test_a_judge_that_grades_as_people_do_agrees_fully_and_ranks_keywords_alike():
    pairs = [
        Pair(keyword, (grade,), grade, baseline_position=position)
        for keyword in range(4)
        for position, grade in enumerate([3, keyword % 4, 0, 1], start=1)
    ]
    figures = judge_figures(pairs, GRADED, samples=200)
    assert figures.compared == 16
    assert figures.alpha.value == pytest.approx(1.0)
    assert (figures.exact.value, figures.within_one.value) == (1.0, 1.0)
    assert figures.ranking_tau.value == pytest.approx(1.0)
    assert figures.confusion == [[5, 0, 0, 0], [0, 5, 0, 0], [0, 0, 1, 0], [0, 0, 0, 5]]


def test_alpha_and_exact_agreement_as_worked_by_hand():
    # Two coders (consensus, judge) on four results: (0,0) (1,1) (0,1) (1,1).
    # Coincidences o00=2, o11=4, o01=o10=1; n0=3, n1=5, n=8.
    # Do = 2/8 = 0.25; De = 2*3*5/(8*7) = 30/56; alpha = 1 - 0.25/(30/56) = 8/15.
    pairs = [Pair(0, (0,), 0), Pair(0, (1,), 1), Pair(1, (0,), 1), Pair(1, (1,), 1)]
    figures = judge_figures(pairs, BINARY, samples=200)
    assert figures.alpha.value == pytest.approx(8 / 15)
    assert figures.exact.value == 0.75
    assert figures.within_one.value is None and "two grades" in figures.within_one.reason
    assert figures.confusion == [[1, 1], [0, 2]]  # rows: people, columns: the judge


def test_the_consensus_is_people_s_mean_taken_to_the_nearest_grade_a_half_rounding_up():
    assert nearest_grade(1.5, GRADED) == 2 and nearest_grade(1.49, GRADED) == 1
    pairs = [Pair(0, (1, 2), 2), Pair(0, (0, 3), 3), Pair(1, (3, 3), 3), Pair(1, (0, 1), 0)]
    figures = judge_figures(pairs, GRADED, samples=200)
    # Consensus values 1.5, 1.5, 3, 0.5 -> nearest 2, 2, 3, 1; the judge 2, 3, 3, 0.
    assert figures.exact.value == 0.5
    # Within one of the consensus value: |2-1.5|, |3-1.5| = 1.5 (no), 0, |0-0.5|.
    assert figures.within_one.value == 0.75


def test_a_result_without_people_s_consensus_or_the_judge_s_grade_is_left_out():
    pairs = [Pair(0, (0, 1), 1), Pair(0, (), 1), Pair(0, (1,), None), Pair(0, (1,), 1)]
    figures = judge_figures(pairs, BINARY, samples=200)
    assert figures.compared == 1  # the binary tie has no consensus
    assert figures.alpha.value is None and "undefined" in figures.alpha.reason


def test_every_figure_has_an_interval_around_it_the_same_on_every_run():
    pairs = [
        Pair(keyword, (grade,), judge)
        for keyword in range(12)
        for grade, judge in [(3, 3), (2, 1), (0, 0), (1, 1 if keyword % 3 else 2)]
    ]
    first = judge_figures(pairs, GRADED, samples=300)
    again = judge_figures(pairs, GRADED, samples=300)
    for figure in (first.alpha, first.exact, first.within_one):
        assert figure.low <= figure.value <= figure.high
    assert (first.alpha.low, first.alpha.high) == (again.alpha.low, again.alpha.high)


def test_a_judge_that_prefers_the_other_list_changes_the_decision():
    # Six keywords; each list shows one result. People: the candidate's result is
    # relevant and the baseline's not, on every keyword (p = 2/64 with an exact
    # sign-flip test): better. The judge grades the other way round: worse.
    pairs = []
    for keyword in range(6):
        pairs.append(Pair(keyword, (0,), 1, baseline_position=1))
        pairs.append(Pair(keyword, (1,), 0, candidate_position=1))
    figures = judge_figures(pairs, BINARY, metrics=[("precision", 1)], samples=200)
    [decision] = figures.decisions
    assert (decision.metric, decision.people, decision.judge) == ("precision@1", BETTER, WORSE)
    assert figures.changes_a_decision
    agreeing = [
        Pair(p.keyword, p.people, p.people[0], p.baseline_position, p.candidate_position)
        for p in pairs
    ]
    same = judge_figures(agreeing, BINARY, metrics=[("precision", 1)], samples=200)
    assert same.decisions[0].judge == BETTER and not same.changes_a_decision


def test_too_few_keywords_decide_nothing_either_way():
    pairs = [Pair(0, (0,), 0, baseline_position=1), Pair(0, (1,), 1, candidate_position=1)]
    [decision] = judge_figures(pairs, BINARY, metrics=[("precision", 1)], samples=50).decisions
    assert decision.people == decision.judge == SAME


def test_people_s_ceiling_is_their_agreement_with_each_other():
    pairs = [
        Pair(0, (1, 1), None),
        Pair(0, (0, 0), None),
        Pair(1, (1, 0), None),
        Pair(1, (1, 1), None),
        Pair(1, (1,), None),  # one person only: not a pair
    ]
    ceiling = people_ceiling(pairs, BINARY, samples=200)
    # The same four items as the hand-worked alpha: (1,1) (0,0) (1,0) (1,1).
    assert ceiling.alpha.value == pytest.approx(8 / 15)
    assert ceiling.agreement.value == pytest.approx(0.75)
    assert ceiling.alpha.n == 4
    nobody = people_ceiling([Pair(0, (1,), 1)], BINARY)
    assert nobody.alpha.value is None and "two people" in nobody.alpha.reason
