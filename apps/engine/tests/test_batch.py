"""The numpy batch path gives exactly the per-keyword path's numbers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    METRICS,
    PROFILES,
    SCALES,
    EngineError,
    score_keyword,
    score_keywords_batch,
)


def transformer_rules(native: str) -> st.SearchStrategy[dict]:
    """Valid rules for some of the other scales, with string keys as JSON has them."""
    targets = [name for name in SCALES if name != native]

    def mapping(target: str) -> st.SearchStrategy[dict]:
        return st.fixed_dictionaries(
            {str(grade): st.sampled_from(SCALES[target].grades) for grade in SCALES[native].grades}
        )

    return st.fixed_dictionaries({}, optional={target: mapping(target) for target in targets})


@st.composite
def batch_cases(draw):
    scale = draw(st.sampled_from(list(SCALES)))
    grade = st.one_of(st.none(), st.sampled_from(SCALES[scale].grades))
    slots = draw(st.sampled_from([(1, 1), (3, 3), (0, 3)]))
    snapshot = st.lists(grade, min_size=slots[0], max_size=slots[1])
    if draw(st.booleans()):  # same number of snapshots for every keyword
        positions = draw(st.integers(0, 12))
        keyword = st.lists(snapshot, min_size=positions, max_size=positions)
    else:
        keyword = st.lists(snapshot, max_size=12)
    keywords = draw(st.lists(keyword, max_size=6))
    metrics = draw(
        st.lists(
            st.tuples(st.sampled_from(list(METRICS)), st.integers(1, 15)),
            min_size=1,
            max_size=8,
            unique=True,
        )
    )
    profile = draw(st.sampled_from(PROFILES))
    rules = draw(st.one_of(st.none(), transformer_rules(scale)))
    return keywords, {"scale": scale, "metrics": metrics, "profile": profile, "rules": rules}


@settings(max_examples=300)
@given(case=batch_cases())
def test_the_batch_path_gives_exactly_the_per_keyword_numbers(case):
    keywords, options = case
    batch = score_keywords_batch(keywords, **options)
    assert len(batch) == len(keywords)
    for index, snapshot_grades in enumerate(keywords):
        # Exact equality, not approx: both paths add the same floats in the same order.
        assert batch.keyword_score(index) == score_keyword(snapshot_grades, **options)
    for request in options["metrics"]:
        assert batch.metric_values(*request) == [
            score_keyword(grades, **options).metrics[request] for grades in keywords
        ]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_batch_path_handles_keywords_of_different_lengths_and_slot_counts(profile):
    keywords = [[[3], [2, None, 1]], [], [[None]], [[0, 0, 3], [1], [2], [3]]]
    metrics = [("ndcg", 3), ("precision", 2), ("err", 4), ("recall", 1)]
    batch = score_keywords_batch(keywords, scale="graded", metrics=metrics, profile=profile)
    assert list(batch.snapshot_counts) == [2, 0, 1, 4]
    for index, grades in enumerate(keywords):
        expected = score_keyword(grades, scale="graded", metrics=metrics, profile=profile)
        assert batch.keyword_score(index) == expected


def test_an_empty_batch_scores_nothing():
    batch = score_keywords_batch([], scale="binary", metrics=[("ap", 5), ("ndcg", 5)])
    assert len(batch) == 0
    assert batch.metric_values("ap", 5) == []


def test_batch_nulls_are_nan_in_arrays_and_none_in_lists():
    batch = score_keywords_batch(
        [[[1]], [[None]]], scale="binary", metrics=[("precision", 1)], profile="trec"
    )
    values = batch.metrics[("precision", 1)]
    assert values[0] == 1.0 and np.isnan(values[1])
    assert batch.metric_values("precision", 1) == [1.0, None]


def test_the_batch_path_refuses_grades_off_the_scale_and_malformed_input():
    with pytest.raises(EngineError, match="4 is not a graded grade"):
        score_keywords_batch([[[1], [4]]], scale="graded", metrics=[("cg", 1)])
    with pytest.raises(EngineError, match="0 is not a detail grade"):
        score_keywords_batch([[[1]], [[0, None]]], scale="detail", metrics=[("cg_d", 1)])
    with pytest.raises(EngineError, match="whole numbers or None"):
        score_keywords_batch([[[1, [2]]]], scale="graded", metrics=[("cg", 1)])
    with pytest.raises(EngineError, match="unknown metric"):
        score_keywords_batch([[[1]]], scale="graded", metrics=[("x", 1)])
    with pytest.raises(EngineError, match="missing"):
        score_keywords_batch(
            [[[1]]], scale="graded", metrics=[("ap", 1)], rules={"binary": {"0": 0}}
        )
