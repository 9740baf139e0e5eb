"""Judge what decides (apps/engine/decisive.py): the bounds of a comparison's mean
difference, its verdict and the priority of each unjudged result, on hand-worked lists;
and on random lists, that the additive formulas are the engine's and the bounds hold
every value the open grades could give."""

import math
import random

import pytest

from apps.engine import EngineError, score_keyword
from apps.engine.decisive import (
    ADDITIVE,
    Result,
    Verdict,
    priorities,
    side_of,
    standing,
    verdict_of,
)

LOG3 = math.log2(3)


def known(*grades: int) -> list[Result]:
    return [Result((grade,)) for grade in grades]


OPEN = Result((None,))
DCG3 = side_of(metric="dcg", k=3, scale="graded", profile="searchtweak")


def test_an_open_result_widens_the_keyword_by_its_weight_times_the_grade_range():
    # this: 3, ?, 0 -> DCG@3 between 3 and 3 + 3/log2(3); the rival's 2, 2, 1 is
    # 2 + 2/log2(3) + 1/2.
    ours = [known(3)[0], OPEN, known(0)[0]]
    theirs = known(2, 2, 1)

    now = standing([(ours, theirs)], this=DCG3, rival=DCG3)

    rival = 2 + 2 / LOG3 + 0.5
    assert now.low == pytest.approx(3 - rival)  # -0.762
    assert now.high == pytest.approx(3 + 3 / LOG3 - rival)  # +1.131
    assert now.verdict is None
    assert now.open_results == 1
    assert priorities([(ours, theirs)], this=DCG3) == [[0, pytest.approx(3 / LOG3), 0]]


@pytest.mark.parametrize(("grade", "verdict"), [(1, Verdict.RIVAL_AHEAD), (2, Verdict.THIS_AHEAD)])
def test_the_last_grade_decides_which_side_is_ahead(grade, verdict):
    ours = known(3, grade, 0)

    now = standing([(ours, known(2, 2, 1))], this=DCG3, rival=DCG3)

    assert now.low == now.high
    assert now.verdict == verdict
    assert now.open_results == 0


def test_the_verdict_is_decided_before_the_last_grade_when_no_grade_can_turn_it():
    # Two keywords: on the first this is ahead by 3 whatever; on the second its open
    # result can lose at most 3/log2(3) / ... : the mean stays above 0.
    first = (known(3, 3, 0), known(0, 0, 0))  # +3 + 3/log2(3)
    second = ([known(0)[0], OPEN, known(0)[0]], known(0, 2, 0))  # from -2/log2(3) to +1/log2(3)

    now = standing([first, second], this=DCG3, rival=DCG3)

    assert now.low == pytest.approx((3 + 3 / LOG3 - 2 / LOG3) / 2)
    assert now.high == pytest.approx((3 + 3 / LOG3 + 1 / LOG3) / 2)
    assert now.verdict == Verdict.THIS_AHEAD
    assert now.open_results == 1


def test_a_difference_that_cannot_leave_the_smallest_change_that_matters_is_no_difference():
    # Relevant results in the top 2: this 1, ? against the rival's 1, 1 -> a difference
    # between -1 and 0, over 4 keywords of which 3 are equal: between -0.25 and 0.
    cg = side_of(metric="num_rel_ret", k=2, scale="binary", profile="searchtweak")
    equal = (known(1, 0), known(1, 0))
    keywords = [([known(1)[0], OPEN], known(1, 1)), equal, equal, equal]

    assert standing(keywords, this=cg, rival=cg).verdict is None
    assert standing(keywords, this=cg, rival=cg, min_change=0.25).verdict == Verdict.NO_DIFFERENCE
    assert standing(keywords, this=cg, rival=cg, min_change=0.2).verdict is None


def test_the_verdict_regions_are_split_at_the_smallest_change_that_matters():
    assert verdict_of(0.3, 0.2) == Verdict.THIS_AHEAD
    assert verdict_of(-0.3, 0.2) == Verdict.RIVAL_AHEAD
    assert verdict_of(0.2, 0.2) == Verdict.NO_DIFFERENCE
    assert verdict_of(0.0, 0.0) == Verdict.NO_DIFFERENCE
    assert verdict_of(1e-9, 0.0) == Verdict.THIS_AHEAD


def test_a_result_below_the_cutoff_or_settled_by_its_votes_has_no_priority():
    # Binary, three grades per result: two "relevant" votes settle the majority.
    precision = side_of(metric="precision", k=2, scale="binary", profile="trec")
    ours = [Result((1, 1, None)), Result((1, None, None)), Result((None, None, None))]

    assert priorities([(ours, known(0, 0, 0))], this=precision) == [[0, 0.5, 0]]


def test_a_leads_decision_settles_a_result_whatever_its_open_slots():
    ours = [Result((None, None, None), decision=3)]
    cg = side_of(metric="cg", k=1, scale="graded", profile="searchtweak")

    now = standing([(ours, known(1))], this=cg, rival=cg)

    assert (now.low, now.high, now.verdict) == (2, 2, Verdict.THIS_AHEAD)


def test_transformer_rules_set_which_grades_an_open_result_can_reach():
    # Graded grades on the binary scale: by default 0 is not relevant and 1 to 3 are;
    # under rules that make every grade relevant, a result one grader has
    # graded is relevant whatever the other two say.
    default = side_of(metric="rbp_50", k=1, scale="graded", profile="searchtweak")
    lenient = side_of(
        metric="rbp_50",
        k=1,
        scale="graded",
        profile="searchtweak",
        rules={"binary": {0: 1, 1: 1, 2: 1, 3: 1}},
    )

    started = Result((0, None, None))

    assert default.widths([started]) == [0.5]
    assert lenient.widths([started]) == [0]


@pytest.mark.parametrize(
    ("metric", "profile", "named"),
    [
        ("ndcg", "searchtweak", "nDCG"),
        ("ap", "trec", "AP"),
        ("err", "searchtweak", "ERR"),
        ("dcg_cond", "searchtweak", "DCG′"),
        ("precision", "searchtweak", "P under the searchtweak profile"),
    ],
)
def test_a_metric_that_is_not_a_sum_of_per_result_shares_is_refused_by_name(metric, profile, named):
    with pytest.raises(EngineError, match=named):
        side_of(metric=metric, k=10, scale="graded", profile=profile)


SCALE_OF = {"cg_d": "detail", "dcg_d": "detail"}


@pytest.mark.parametrize("metric", sorted(ADDITIVE))
@pytest.mark.parametrize("k", [3, 0])
def test_every_completion_of_the_open_grades_lies_within_the_bounds(metric, k):
    """On random lists with random open slots (strategy 3): the bounds of a keyword's
    value hold score_keyword's value for random completions, and equal it when every
    grade is known, so the additive formulas are the engine's."""
    rng = random.Random(f"{metric}{k}")
    scale = SCALE_OF.get(metric, "graded")
    grades = (1, 2, 5, 10) if scale == "detail" else (0, 1, 2, 3)
    side = side_of(metric=metric, k=k, scale=scale, profile="trec")
    for _ in range(200):
        truth = [tuple(rng.choice(grades) for _ in range(3)) for _ in range(rng.randint(1, 6))]
        shown = [
            Result(tuple(grade if rng.random() < 0.6 else None for grade in slots))
            for slots in truth
        ]
        low, high = side.value_range(shown)
        value = score_keyword(truth, scale=scale, metrics=[(metric, k)], profile="trec")
        exact = value.metrics[(metric, k)]
        assert side.value_range([Result(slots) for slots in truth]) == pytest.approx((exact,) * 2)
        assert low - 1e-12 <= exact <= high + 1e-12
