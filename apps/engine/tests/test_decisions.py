"""A lead's decision stands in for a snapshot's grades in stage 1, on every scale."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    SCALES,
    EngineError,
    score_keyword,
    score_keywords_batch,
    with_decisions,
)


def test_a_decision_replaces_a_binary_tie_and_the_metric_follows():
    grades = [[1, 0, None], [1, 1, 0]]  # a tie, then relevant

    undecided = score_keyword(grades, scale="binary", metrics=[("precision", 2)])
    decided = score_keyword(grades, scale="binary", metrics=[("precision", 2)], decisions=[1, None])

    assert undecided.snapshot_values == [None, 1.0]
    assert undecided.metrics[("precision", 2)] == 1.0  # one non-null value, relevant
    assert decided.snapshot_values == [1.0, 1.0]
    assert decided.metrics[("precision", 2)] == 1.0
    overruled = score_keyword(grades, scale="binary", metrics=[("precision", 2)], decisions=[0, 0])
    assert overruled.snapshot_values == [0.0, 0.0]  # a majority is overruled too
    assert overruled.metrics[("precision", 2)] == 0.0


def test_a_decision_on_the_graded_scale_is_the_value_instead_of_the_mean():
    scored = score_keyword(
        [[0, 3, 1], [2, None, None]], scale="graded", metrics=[("cg", 2)], decisions=[2, None]
    )

    assert scored.snapshot_values == [2.0, 2.0]
    assert scored.metrics[("cg", 2)] == 4.0


def test_a_decision_is_transformed_like_a_grade_for_a_metric_on_another_scale():
    # Graded evaluation, binary metric: slots [1, 0, 0] vote 0 after the transform; the
    # lead's 2 maps to 1 (default graded -> binary), so P@1 becomes 1.
    grades = [[1, 0, 0]]

    assert score_keyword(grades, scale="graded", metrics=[("precision", 1)]).metrics == {
        ("precision", 1): 0.0
    }
    decided = score_keyword(grades, scale="graded", metrics=[("precision", 1)], decisions=[2])
    assert decided.metrics == {("precision", 1): 1.0}
    assert decided.snapshot_values == [2.0]  # native scale
    custom = score_keyword(
        grades,
        scale="graded",
        metrics=[("precision", 1), ("cg_d", 1)],
        rules={"binary": {0: 0, 1: 0, 2: 0, 3: 1}},
        decisions=[2],
    )
    assert custom.metrics == {("precision", 1): 0.0, ("cg_d", 1): 7.0}  # 2 -> 7 on detail


def test_a_decided_snapshot_without_any_grade_still_has_the_decision_as_its_value():
    scored = score_keyword(
        [[None, None, None]], scale="detail", metrics=[("cg_d", 1)], decisions=[9]
    )

    assert scored.snapshot_values == [9.0]


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ([4], "4 is not a graded grade"),
        ([True], "True is not a graded grade"),
        ([1, 2], "expected one per snapshot (1), got 2"),
    ],
)
def test_a_decision_off_the_scale_or_of_the_wrong_length_is_refused(decisions, message):
    with pytest.raises(EngineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        score_keyword([[1]], scale="graded", metrics=[("cg", 1)], decisions=decisions)
    with pytest.raises(EngineError):
        score_keywords_batch([[[1]]], scale="graded", metrics=[("cg", 1)], decisions=[decisions])


def test_the_batch_path_refuses_decisions_for_a_different_number_of_keywords():
    with pytest.raises(EngineError, match="one entry per keyword"):
        score_keywords_batch([[[1]], [[2]]], scale="graded", metrics=[("cg", 1)], decisions=[None])


def test_with_decisions_keeps_the_number_of_slots_of_each_snapshot():
    native = SCALES["graded"]

    assert with_decisions([[1, 2, 3], [0], []], [None, 3, 2], native) == [[1, 2, 3], [3], [2]]
    assert with_decisions([[1, 2, 3]], [0], native) == [[0, None, None]]
    undecided = [[1]]
    assert with_decisions(undecided, None, native) is undecided


@st.composite
def decided_keywords(draw):
    scale = draw(st.sampled_from(list(SCALES)))
    grade = st.sampled_from(SCALES[scale].grades)
    slots = st.lists(st.one_of(st.none(), grade), min_size=3, max_size=3)
    keywords = draw(st.lists(st.lists(slots, max_size=8), max_size=5))
    decisions = [
        draw(
            st.one_of(
                st.none(), st.lists(st.one_of(st.none(), grade), min_size=len(kw), max_size=len(kw))
            )
        )
        for kw in keywords
    ]
    return scale, keywords, decisions


@settings(max_examples=200)
@given(case=decided_keywords())
def test_the_batch_path_applies_decisions_exactly_like_the_per_keyword_path(case):
    scale, keywords, decisions = case
    metrics = [("ndcg", 5), ("precision", 3), ("err", 4), ("cg_d", 5)]

    batch = score_keywords_batch(keywords, scale=scale, metrics=metrics, decisions=decisions)

    for index, (grades, decided) in enumerate(zip(keywords, decisions, strict=True)):
        alone = score_keyword(grades, scale=scale, metrics=metrics, decisions=decided)
        assert batch.keyword_score(index) == alone
