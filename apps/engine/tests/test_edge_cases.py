"""Edge cases and the differences between the `searchtweak` and `trec` profiles."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from apps import engine
from apps.engine import (
    METRICS,
    PROFILES,
    EngineError,
    MetricDef,
    mean_of,
    metric_label,
    metric_value,
    progress,
    score_keyword,
)

ALL_METRICS = list(METRICS)
# The metrics a null value is missing information to: not coverage (which counts the
# nulls) nor a condensed metric (which removes them first; test_more_measures.py).
RATING_FULL_LISTS = [
    metric
    for metric in METRICS
    if metric not in ("judged", "unjudged") and not metric.endswith("_cond")
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("metric", ALL_METRICS)
def test_a_keyword_without_snapshots_has_no_value(metric, profile):
    assert metric_value(metric, 5, [], profile) is None


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("metric", RATING_FULL_LISTS)
def test_a_keyword_with_nothing_judged_has_no_value(metric, profile):
    assert metric_value(metric, 5, [None, None, None], profile) is None


@pytest.mark.parametrize("metric", RATING_FULL_LISTS)
def test_searchtweak_has_no_value_when_only_results_below_k_are_judged(metric):
    assert metric_value(metric, 2, [None, None, 1], "searchtweak") is None


def test_trec_scores_a_keyword_whose_only_judgements_are_below_k():
    values = [None, None, 1]
    assert metric_value("precision", 2, values, "trec") == 0.0
    assert metric_value("ap", 2, values, "trec") == 0.0
    assert metric_value("rr", 2, values, "trec") == 0.0
    assert metric_value("recall", 2, values, "trec") == 0.0
    assert metric_value("f1", 2, values, "trec") == 0.0
    assert metric_value("ndcg", 2, values, "trec") == 0.0
    assert metric_value("err", 2, values, "trec") == 0.0


def test_trec_precision_divides_by_k_even_past_the_end_of_the_list():
    assert metric_value("precision", 10, [1, 0], "trec") == pytest.approx(0.1)
    assert metric_value("precision", 10, [1, 0], "searchtweak") == 0.5


def test_ungraded_results_count_as_irrelevant_in_trec_and_are_left_out_in_searchtweak():
    values = [None, 1, 0]
    assert metric_value("precision", 3, values, "trec") == pytest.approx(1 / 3)
    assert metric_value("precision", 3, values, "searchtweak") == 0.5


def test_ap_and_rr_count_an_ungraded_rank_as_not_relevant_in_both_profiles():
    for profile in PROFILES:
        assert metric_value("ap", 2, [None, 1], profile) == 0.5
        assert metric_value("rr", 2, [None, 1], profile) == 0.5


def test_trec_ap_divides_by_every_relevant_result_in_the_pool():
    values = [1, 0, 0, 1]
    assert metric_value("ap", 2, values, "trec") == 0.5
    assert metric_value("ap", 2, values, "searchtweak") == 1.0


def test_ap_and_rr_are_zero_when_nothing_in_the_top_k_is_relevant():
    for profile in PROFILES:
        assert metric_value("ap", 2, [0, 0, 1], profile) == 0.0
        assert metric_value("rr", 2, [0, 0, 1], profile) == 0.0


def test_recall_without_any_relevant_result_is_null_in_searchtweak_and_zero_in_trec():
    assert metric_value("recall", 3, [0, 0, 0], "searchtweak") is None
    assert metric_value("recall", 3, [0, 0, 0], "trec") == 0.0


def test_recall_counts_relevant_results_below_the_cutoff():
    for profile in PROFILES:
        assert metric_value("recall", 1, [1, 0, 1, 1], profile) == pytest.approx(1 / 3)


def test_f1_is_null_when_recall_is_null_and_zero_when_precision_and_recall_are_zero():
    assert metric_value("f1", 3, [0, 0, 0], "searchtweak") is None
    assert metric_value("f1", 3, [0, 0, 0], "trec") == 0.0
    for profile in PROFILES:
        assert metric_value("f1", 1, [0, 1], profile) == 0.0


def test_a_cutoff_larger_than_the_list_uses_the_whole_list():
    values = [3, 2, 3, 0, 1]
    for metric in ("cg", "dcg", "ndcg", "err", "ap", "rr"):
        for profile in PROFILES:
            assert metric_value(metric, 50, values, profile) == metric_value(
                metric, 5, values, profile
            )


def test_nulls_count_as_zero_gain_in_graded_metrics():
    for profile in PROFILES:
        assert metric_value("cg", 3, [3, None, 1], profile) == 4.0
        assert metric_value("dcg", 3, [3, None, 1], profile) == metric_value(
            "dcg", 3, [3, 0, 1], profile
        )
        assert metric_value("err", 3, [None, 3], profile) == metric_value("err", 3, [0, 3], profile)


def test_ndcg_is_zero_when_the_ideal_ranking_has_no_gain():
    for metric in ("ndcg", "ndcg_exp", "ndcg_d"):
        for profile in PROFILES:
            assert metric_value(metric, 3, [0, 0, None], profile) == 0.0


def test_trec_ndcg_ignores_ungraded_results_when_building_the_ideal_ranking():
    # The pool is 2 and 1; the ungraded result is not part of the ideal ranking.
    values = [None, 2, 1]
    assert metric_value("ndcg", 2, values, "trec") == pytest.approx(
        (2 / 1.584962500721156) / (2 + 1 / 1.584962500721156)
    )


def test_detail_metrics_apply_the_graded_formulas_to_detail_values():
    values = [10, 1, 7.5]
    for profile in PROFILES:
        assert metric_value("cg_d", 3, values, profile) == metric_value("cg", 3, values, profile)
        assert metric_value("dcg_d", 3, values, profile) == metric_value("dcg", 3, values, profile)
        assert metric_value("ndcg_d", 3, values, profile) == metric_value(
            "ndcg", 3, values, profile
        )


def test_detail_ndcg_takes_its_ideal_from_the_pool_in_the_trec_profile_as_ndcg_does():
    # metrics.md: under trec the ideal of ndcg, ndcg_exp and ndcg_d is the pool sorted, so
    # a better result below k lowers nDCG(d)@1; searchtweak sorts the top k only.
    values = [1, 10]
    assert metric_value("ndcg_d", 1, values, "trec") == pytest.approx(0.1)
    assert metric_value("ndcg", 1, values, "trec") == pytest.approx(0.1)
    assert metric_value("ndcg_d", 1, values, "searchtweak") == 1.0


def test_err_018_discounts_later_ranks_less_than_err():
    assert metric_value("err_018", 2, [0, 3]) == pytest.approx(0.875 / 2**0.18)
    assert metric_value("err_018", 2, [0, 3]) > metric_value("err", 2, [0, 3])


@pytest.mark.parametrize("k", [-1, 1.5, True, "3", None])
def test_a_cutoff_must_be_a_whole_number_of_at_least_1_or_0_for_the_whole_list(k):
    with pytest.raises(EngineError, match="cutoff"):
        metric_value("precision", k, [1])


def test_an_unknown_metric_or_profile_is_refused():
    with pytest.raises(EngineError, match="unknown metric 'map'"):
        metric_value("map", 3, [1])
    with pytest.raises(EngineError, match="unknown profile 'ir_measures'"):
        metric_value("ap", 3, [1], "ir_measures")


def test_score_keyword_refuses_bad_input_before_computing_anything():
    with pytest.raises(EngineError, match="is not a graded grade"):
        score_keyword([[4]], scale="graded", metrics=[("cg", 1)])
    with pytest.raises(EngineError, match="unknown scale"):
        score_keyword([[1]], scale="stars", metrics=[("cg", 1)])
    with pytest.raises(EngineError, match="unknown metric"):
        score_keyword([[1]], scale="graded", metrics=[("bogus", 1)])
    with pytest.raises(EngineError, match="cutoff"):
        score_keyword([[1]], scale="graded", metrics=[("cg", -1)])
    with pytest.raises(EngineError, match="unknown profile"):
        score_keyword([[1]], scale="graded", metrics=[("cg", 1)], profile="x")
    with pytest.raises(EngineError, match="transformers.binary.1: missing"):
        score_keyword([[1]], scale="graded", metrics=[("cg", 1)], rules={"binary": {0: 0}})


def test_score_keyword_returns_native_stage_one_values_and_every_requested_metric():
    score = score_keyword(
        [[3, 2, None], [None, None, None], [0, 1, 0]],
        scale="graded",
        metrics=[("precision", 3), ("ndcg", 3), ("ndcg", 2)],
    )
    assert score.snapshot_values == [2.5, None, pytest.approx(1 / 3)]
    assert set(score.metrics) == {("precision", 3), ("ndcg", 3), ("ndcg", 2)}
    # Binary: 3 and 2 vote relevant; 0, 1, 0 become 0, 1, 0 and vote irrelevant.
    assert score.metrics[("precision", 3)] == 0.5


def test_a_keyword_without_snapshots_scores_null_everywhere():
    score = score_keyword([], scale="binary", metrics=[("ap", 5), ("ndcg", 5)], profile="trec")
    assert score.snapshot_values == []
    assert score.metrics == {("ap", 5): None, ("ndcg", 5): None}


def test_keyword_scores_are_frozen():
    score = score_keyword([[1]], scale="binary", metrics=[("ap", 1)])
    with pytest.raises(AttributeError):
        score.metrics = {}  # type: ignore[misc]


def test_stage_one_runs_once_per_scale_not_once_per_metric(monkeypatch):
    from apps.engine import keyword

    calls = []
    original = keyword.snapshot_values_on

    def counting(*args, **kwargs):
        calls.append(kwargs["target"])
        return original(*args, **kwargs)

    monkeypatch.setattr(keyword, "snapshot_values_on", counting)
    metrics = [("precision", 5), ("ap", 5), ("rr", 3), ("ndcg", 5), ("cg", 2), ("cg_d", 5)]
    score_keyword([[1, 2, 3]] * 5, scale="graded", metrics=metrics)
    assert sorted(calls) == ["binary", "detail", "graded"]


def test_the_registry_names_every_metric_on_its_scale():
    def names(metric: MetricDef) -> tuple[str, str, str, str]:
        return metric.id, metric.name, metric.scale, metric.mean_name

    assert names(METRICS["ap"]) == ("ap", "AP", "binary", "AP")
    assert names(METRICS["ndcg"]) == ("ndcg", "nDCG", "graded", "nDCG")
    scales = {m.id: m.scale for m in METRICS.values() if not m.id.endswith("_cond")}
    assert scales == {
        **dict.fromkeys(["precision", "ap", "gm_ap", "rr", "recall", "f1"], "binary"),
        **dict.fromkeys(["success", "rprec"], "binary"),
        **dict.fromkeys(["bpref", "infap", "num_rel", "num_ret", "num_rel_ret"], "binary"),
        "iprec_avg": "binary",
        **{f"iprec_{level}": "binary" for level in range(0, 101, 10)},
        **dict.fromkeys(["rbp_50", "rbp_80", "rbp_95"], "binary"),
        **dict.fromkeys(["rbp_50_res", "rbp_80_res", "rbp_95_res"], "binary"),
        **dict.fromkeys(["judged", "unjudged"], "native"),
        **dict.fromkeys(["cg", "dcg", "ndcg", "dcg_exp", "ndcg_exp", "err", "err_018"], "graded"),
        **dict.fromkeys(["cg_d", "dcg_d", "ndcg_d"], "detail"),
    }
    assert PROFILES == ("searchtweak", "trec")


@pytest.mark.parametrize(
    ("metric", "one", "many"),
    [
        ("precision", "P@10", "P@10"),
        ("ap", "AP@10", "AP@10"),
        ("rr", "RR@10", "RR@10"),
        ("recall", "R@10", "R@10"),
        ("f1", "F1@10", "F1@10"),
        ("ndcg", "nDCG@10", "nDCG@10"),
        ("dcg_exp", "DCG-exp@10", "DCG-exp@10"),
        ("err_018", "ERR-0.18@10", "ERR-0.18@10"),
        ("ndcg_d", "nDCG(d)@10", "nDCG(d)@10"),
    ],
)
def test_binary_metrics_are_labelled_as_means_over_several_keywords(metric, one, many):
    assert metric_label(metric, 10, many_keywords=False) == one
    assert metric_label(metric, 10, many_keywords=True) == many


def test_the_evaluation_mean_leaves_null_keywords_out():
    assert mean_of([1.0, None, 0.0]) == 0.5
    assert mean_of([None, float("nan")]) is None
    assert mean_of([]) is None
    assert mean_of(iter([0.25])) == 0.25


def test_progress_is_zero_without_slots_and_refuses_impossible_counts():
    assert progress(0, 0) == 0.0
    assert progress(3, 3) == 1.0
    with pytest.raises(EngineError):
        progress(4, 3)
    with pytest.raises(EngineError):
        progress(-1, 3)


def test_the_engine_imports_nothing_from_django_or_the_rest_of_the_project():
    engine_dir = Path(engine.__file__).parent
    for module in engine_dir.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                # Relative imports may only reach sibling engine modules.
                assert node.level <= 1, f"{module.name}: from {'.' * node.level}{node.module}"
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                top_level = name.split(".")[0]
                assert top_level not in {"django", "rest_framework", "apps", "config"}, (
                    f"{module.name} imports {name}"
                )
    # And importing it for real pulls in no Django module.
    code = (
        "import sys; import apps.engine; "
        "sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    root = engine_dir.parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0
