"""A metric is defined once: its definition in apps/engine/metrics.py has every part
(label, family, both formulas, the explainer's steps, additivity, trec_eval's names),
the other tables of metrics are read from it, and a metric it does not have is an error
wherever one is asked for."""

import dataclasses

import pytest

from apps.engine import (
    COVERAGE,
    METRICS,
    WHOLE_LIST,
    EngineError,
    get_metric,
    metric_label,
    metric_value,
    score_keyword,
    score_keywords_batch,
)
from apps.engine.conventions import NATIVE, split_condensed
from apps.engine.decisive import ADDITIVE, additive_metrics, side_of
from apps.engine.evaluation import mean_from_sum
from apps.engine.explain import explain_keyword
from apps.engine.formulas import ReadsUnjudgedPool
from apps.engine.metrics import (
    NO_TREC_EVAL,
    NOT_ON_CUSTOM_SCALES,
    GainSteps,
    RelevanceSteps,
    StopSteps,
    TrecEvalNames,
    trec_eval_metrics,
)
from apps.engine.shares import Additive

FAMILIES = {"binary", "graded", "detail", NATIVE}


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_metric_has_every_part(metric):
    definition = METRICS[metric]
    assert definition.id == metric
    assert definition.name and definition.mean_name and definition.description
    assert definition.scale in FAMILIES
    formula = definition.formula
    assert callable(formula.formula if isinstance(formula, ReadsUnjudgedPool) else formula)
    assert callable(definition.batch_formula)
    assert isinstance(definition.steps, RelevanceSteps | GainSteps | StopSteps)
    assert definition.additive is None or isinstance(definition.additive, Additive)
    assert isinstance(definition.trec_eval, TrecEvalNames)
    if definition.trec_eval.at_cutoff is not None:
        assert definition.trec_eval.at_cutoff.endswith("_{k}")


def test_the_explainer_reads_gains_for_graded_metrics_and_relevance_for_binary_ones():
    """A graded or detail metric is never explained as relevant-or-not, nor a binary one
    with gains: the steps follow the family."""
    for definition in METRICS.values():
        if definition.scale in ("graded", "detail"):
            assert isinstance(definition.steps, GainSteps | StopSteps), definition.id
        else:
            assert isinstance(definition.steps, RelevanceSteps), definition.id


def test_the_other_tables_are_read_from_the_registry():
    assert set(ADDITIVE) == {m.id for m in METRICS.values() if m.additive is not None}
    assert [m.id for m in additive_metrics()] == list(ADDITIVE)
    assert COVERAGE == ("judged", "unjudged")
    assert NOT_ON_CUSTOM_SCALES == ("err", "err_018")
    assert {m.id for m in trec_eval_metrics()} == {
        m.id for m in METRICS.values() if m.trec_eval != NO_TREC_EVAL
    }
    # A condensed twin has its base metric's formulas and steps, and is no trec_eval
    # measure, nor a sum of per-result shares.
    for definition in METRICS.values():
        base, condensed = split_condensed(definition.id)
        if condensed:
            assert definition.formula is METRICS[base].formula
            assert definition.batch_formula is METRICS[base].batch_formula
            assert definition.steps is METRICS[base].steps
            assert definition.trec_eval == NO_TREC_EVAL and definition.additive is None


UNKNOWN = "ndcg_gain"  # graded-sounding, and no metric of the registry


@pytest.mark.parametrize(
    "ask",
    [
        lambda: get_metric(UNKNOWN),
        lambda: metric_label(UNKNOWN, 10),
        lambda: metric_value(UNKNOWN, 10, [1.0, 0.0]),
        lambda: score_keyword([[1], [0]], scale="graded", metrics=[(UNKNOWN, 10)]),
        lambda: score_keywords_batch([[[1], [0]]], scale="graded", metrics=[(UNKNOWN, 10)]),
        lambda: mean_from_sum(UNKNOWN, 1.0, 2),
        lambda: side_of(metric=UNKNOWN, k=10, scale="graded", profile="trec"),
        lambda: explain_keyword(
            [[1], [0]], scale="graded", metric=UNKNOWN, k=10, profile="searchtweak"
        ),
        lambda: explain_keyword(
            [[1], [0]], scale="graded", metric=UNKNOWN, k=WHOLE_LIST, profile="trec"
        ),
    ],
    ids=[
        "get_metric",
        "label",
        "metric_value",
        "score_keyword",
        "batch",
        "mean",
        "decisive",
        "explain",
        "explain_trec",
    ],
)
def test_an_unknown_metric_is_an_error_naming_it(ask):
    with pytest.raises(EngineError, match=UNKNOWN):
        ask()


def test_a_metric_whose_steps_the_explainer_does_not_know_is_an_error_not_binary_steps(
    monkeypatch,
):
    odd = dataclasses.replace(METRICS["ndcg"], id="odd", steps=object())
    monkeypatch.setitem(METRICS, "odd", odd)
    with pytest.raises(EngineError, match="odd"):
        explain_keyword([[3], [0]], scale="graded", metric="odd", k=2, profile="searchtweak")
