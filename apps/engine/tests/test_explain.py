"""The metric explainer's steps add up to the engine's value, and say why the other
profile differs."""

import random

import pytest

from apps.engine import WHOLE_LIST
from apps.engine.explain import explain_keyword


def one_slot(values):
    return [[value] for value in values]


def test_ndcg_shows_gains_discounts_and_the_pools_ideal_list_under_trec():
    # Graded [3, 0, unjudged, 2] cut at 3; a 3 the search did not return.
    explained = explain_keyword(
        one_slot([3, 0, None, 2]),
        scale="graded",
        metric="ndcg",
        k=3,
        profile="trec",
        unretrieved=[3],
    )

    assert [step.gain for step in explained.steps] == [3.0, 0.0, 0.0]
    assert [step.discount for step in explained.steps] == pytest.approx([1.0, 1.585, 2.0], abs=1e-3)
    assert [step.gain for step in explained.ideal] == [3.0, 3.0, 2.0]  # the pool sorted
    ideal_dcg = explained.ideal[-1].running
    assert explained.value == pytest.approx(3.0 / ideal_dcg)
    assert explained.arithmetic[-1] == f"nDCG = 3.0000 / {ideal_dcg:.4f}"
    # searchtweak sorts the top 3 itself: [3, 0, 0] is already ideal.
    assert (explained.other_profile, explained.other_value) == ("searchtweak", 1.0)
    assert any("did not return (graded 3)" in reason for reason in explained.differences)
    assert any("ideal list" in reason for reason in explained.differences)


def test_ap_lists_the_precision_at_each_relevant_result():
    explained = explain_keyword(
        one_slot([1, 0, 1, 0, 1]), scale="binary", metric="ap", k=5, profile="searchtweak"
    )

    assert [step.relevant for step in explained.steps] == [True, False, True, False, True]
    assert [step.term for step in explained.steps] == pytest.approx([1, None, 2 / 3, None, 0.6])
    assert explained.value == pytest.approx((1 + 2 / 3 + 0.6) / 3)  # 0.7556, the worked example
    assert explained.binary


def test_a_condensed_metric_reads_the_list_without_its_unjudged_results():
    explained = explain_keyword(
        one_slot([None, 1, None, 0]), scale="binary", metric="precision_cond", k=2, profile="trec"
    )

    assert [step.position for step in explained.steps] == [2, 4]
    assert explained.removed == 2
    assert explained.value == 0.5


@pytest.mark.parametrize(
    "metric", ["cg", "dcg", "dcg_exp", "err", "err_018", "rbp_80", "ndcg", "ndcg_exp"]
)
@pytest.mark.parametrize("profile", ["searchtweak", "trec"])
def test_the_steps_add_up_to_the_engines_value_on_random_lists(metric, profile):
    rng = random.Random(metric + profile)
    for _ in range(150):
        grades = one_slot([rng.choice([0, 1, 2, 3, None]) for _ in range(rng.randint(1, 12))])
        unretrieved = [rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([0, 0, 2]))]
        k = rng.choice([WHOLE_LIST, 1, 3, 10])
        explained = explain_keyword(
            grades, scale="graded", metric=metric, k=k, profile=profile, unretrieved=unretrieved
        )
        if explained.value is None:
            continue
        total = explained.steps[-1].running if explained.steps else 0.0
        if explained.ideal:
            ideal = explained.ideal[-1].running
            assert explained.value == pytest.approx(total / ideal if ideal else 0.0, abs=1e-12)
        elif metric not in ("ndcg", "ndcg_exp"):
            assert explained.value == pytest.approx(total, abs=1e-12)
