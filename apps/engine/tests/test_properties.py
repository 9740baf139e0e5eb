"""Properties that must hold for any input (hypothesis)."""

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.engine import COVERAGE, METRICS, PROFILES, SCALES, metric_value
from apps.engine.metrics import RelevanceSteps

NORMALISED = [
    "precision",
    "ap",
    "rr",
    "recall",
    "f1",
    "ndcg",
    "ndcg_exp",
    "err",
    "err_018",
    "ndcg_d",
]


def possible_stage_one_values(scale: str) -> list[float]:
    """Every value stage 1 can produce from 1 to 3 slots on ``scale`` (a coverage measure's
    native scale: the graded one)."""
    scale = "graded" if scale == "native" else scale
    if scale == "binary":
        return [0.0, 1.0]
    grades = SCALES[scale].grades
    return sorted(
        {
            sum(combination) / count
            for count in (1, 2, 3)
            for combination in itertools.combinations_with_replacement(grades, count)
        }
    )


def stage_one_value(scale: str) -> st.SearchStrategy[float | None]:
    return st.one_of(st.none(), st.sampled_from(possible_stage_one_values(scale)))


def values_for(metric: str) -> st.SearchStrategy[list[float | None]]:
    return st.lists(stage_one_value(METRICS[metric].scale), max_size=25)


cutoffs = st.integers(min_value=1, max_value=30)
profiles = st.sampled_from(PROFILES)


@given(data=st.data(), metric=st.sampled_from(NORMALISED), k=cutoffs, profile=profiles)
def test_normalised_metrics_stay_between_0_and_1(data, metric, k, profile):
    value = metric_value(metric, k, data.draw(values_for(metric)), profile)
    assert value is None or 0.0 <= value <= 1.0


@pytest.mark.parametrize("metric", ["ndcg", "ndcg_exp", "ndcg_d"])
@given(data=st.data(), k=cutoffs, profile=profiles)
def test_an_ideally_ordered_list_scores_ndcg_1(metric, data, k, profile):
    scale = METRICS[metric].scale
    values = data.draw(
        st.lists(st.sampled_from(possible_stage_one_values(scale)), min_size=1, max_size=25)
    )
    values.sort(reverse=True)
    if values[0] > 0:
        assert metric_value(metric, k, values, profile) == 1.0


@pytest.mark.parametrize("metric", ["cg", "cg_d"])
@given(data=st.data(), profile=profiles)
def test_cumulative_gain_ignores_order(metric, data, profile):
    values = data.draw(values_for(metric))
    shuffled = data.draw(st.permutations(values))
    k = max(len(values), 1)
    original = metric_value(metric, k, values, profile)
    reordered = metric_value(metric, k, shuffled, profile)
    # Adding in another order may change the last bit, nothing more.
    assert original == reordered or math.isclose(original, reordered, rel_tol=1e-12)


@given(
    metric=st.sampled_from(list(METRICS)),
    values=st.lists(
        st.one_of(st.none(), st.floats(min_value=0, max_value=10), st.integers(0, 10)),
        max_size=25,
    ),
    k=cutoffs,
    profile=profiles,
)
def test_nulls_never_raise_in_any_metric_or_profile(metric, values, k, profile):
    value = metric_value(metric, k, values, profile)
    assert value is None or isinstance(value, float)
    # Nothing judged: no value, but for coverage, which counts the nulls (judged@k 0).
    if all(v is None for v in values) and metric not in COVERAGE:
        assert value is None


@given(data=st.data(), metric=st.sampled_from(list(METRICS)), k=cutoffs)
def test_searchtweak_and_trec_agree_when_everything_up_to_k_is_judged_and_nothing_follows(
    data, metric, k
):
    # Only the treatment of nulls, short lists and the rest of the pool differ.
    values = data.draw(
        st.lists(
            st.sampled_from(possible_stage_one_values(METRICS[metric].scale)),
            min_size=k,
            max_size=k,
        )
    )
    searchtweak = metric_value(metric, k, values, "searchtweak")
    trec = metric_value(metric, k, values, "trec")
    # The measures that divide by R: undefined under searchtweak, 0 under trec, when
    # nothing is relevant.
    steps = METRICS[metric].steps
    divides_by_r = isinstance(steps, RelevanceSteps) and steps.undefined_without_relevant
    if divides_by_r and 1.0 not in values:
        assert searchtweak is None and trec == 0.0
    else:
        assert searchtweak == trec
