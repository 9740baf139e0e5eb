"""Profile `trec` equals trec_eval (pytrec_eval runs trec_eval's own code) on runs as
TREC builds them: deeper than 100, with relevant documents the run did not retrieve,
with queries judged but not run, and at "whole list" as well as at cutoffs."""

import random

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

from apps.engine import (  # noqa: E402
    WHOLE_LIST,
    EngineError,
    custom_scale,
    mean_of,
    metric_value,
    score_keyword,
    score_keywords_batch,
)

CUTOFFS = (1, 5, 10, 100, 1000)
DEPTHS = (0, 1, 7, 150, 1200)

# Relevo's (metric, k) -> trec_eval's measure name; the whole list has its own names.
TREC_EVAL_NAMES = {
    "precision": ("P_{k}", "set_P"),
    "ap": ("map_cut_{k}", "map"),
    "recall": ("recall_{k}", "set_recall"),
    "ndcg": ("ndcg_cut_{k}", "ndcg"),
    "ndcg_d": ("ndcg_cut_{k}", "ndcg"),
}
TREC_EVAL_MEASURES = {
    "P.1,5,10,100,1000",
    "map_cut.1,5,10,100,1000",
    "recall.1,5,10,100,1000",
    "ndcg_cut.1,5,10,100,1000",
    "set_P",
    "set_recall",
    "map",
    "ndcg",
    "recip_rank",
}
METRICS = [(metric, k) for metric in ("precision", "ap", "recall", "ndcg", "rr") for k in CUTOFFS]
METRICS += [(metric, WHOLE_LIST) for metric in ("precision", "ap", "recall", "ndcg", "rr")]


def trec_eval_name(metric: str, k: int) -> str:
    at_k, whole = TREC_EVAL_NAMES[metric]
    return whole if k == WHOLE_LIST else at_k.format(k=k)


def random_topics(seed: int, count: int):
    """Topics as TREC has them: a ranking (graded values, None = not judged) of some depth,
    and grades of judged documents the run did not retrieve."""
    rng = random.Random(seed)
    topics = []
    for _ in range(count):
        depth = rng.choice(DEPTHS)
        judged_share = rng.choice([0.0, 0.05, 0.3, 1.0])
        ranking = [
            rng.choice([0, 0, 0, 1, 2, 3]) if rng.random() < judged_share else None
            for _ in range(depth)
        ]
        unretrieved = [rng.choice([0, 0, 1, 2, 3]) for _ in range(rng.choice([0, 0, 3, 40]))]
        topics.append((ranking, unretrieved))
    return topics


def as_trec_files(topics):
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q, (ranking, unretrieved) in enumerate(topics):
        judged = {f"d{i}": grade for i, grade in enumerate(ranking) if grade is not None}
        judged.update({f"u{i}": grade for i, grade in enumerate(unretrieved)})
        if judged:
            qrels[f"q{q}"] = judged
        if ranking:
            # Strictly decreasing scores: trec_eval ranks in position order.
            run[f"q{q}"] = {f"d{i}": float(len(ranking) - i) for i in range(len(ranking))}
    return qrels, run


def score_all(topics, scale="graded", *, zero_without_results=False):
    grades = [[[value] for value in ranking] for ranking, _ in topics]
    unretrieved = [judged for _, judged in topics]
    per_keyword = [
        score_keyword(
            keyword,
            scale=scale,
            metrics=METRICS,
            profile="trec",
            unretrieved=judged,
            zero_without_results=zero_without_results,
        )
        for keyword, judged in zip(grades, unretrieved, strict=True)
    ]
    batch = score_keywords_batch(
        grades,
        scale=scale,
        metrics=METRICS,
        profile="trec",
        unretrieved=unretrieved,
        zero_without_results=zero_without_results,
    )
    for index, score in enumerate(per_keyword):
        assert batch.keyword_score(index) == score
    return per_keyword


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_every_trec_measure_equals_trec_eval_per_query_at_any_depth_and_the_whole_list(seed):
    topics = random_topics(seed, 120)
    qrels, run = as_trec_files(topics)
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_EVAL_MEASURES).evaluate(run)
    scores = score_all(topics)
    compared = 0
    for q, score in enumerate(scores):
        if f"q{q}" not in expected:
            # Not run or not judged: trec_eval skips the query and Relevo reports null.
            assert all(value is None for value in score.metrics.values()), q
            continue
        measures = expected[f"q{q}"]
        for metric, k in METRICS:
            if metric == "rr":
                continue  # below, against ir_measures' RR@k
            reference = measures[trec_eval_name(metric, k)]
            assert score.metrics[(metric, k)] == pytest.approx(reference, abs=1e-9), (
                q,
                metric,
                k,
            )
            compared += 1
        assert score.metrics[("rr", WHOLE_LIST)] == pytest.approx(measures["recip_rank"])
    assert compared > 1000


def test_reciprocal_rank_at_k_equals_ir_measures_rr_at_k():
    topics = random_topics(21, 80)
    qrels, run = as_trec_files(topics)
    qrel_rows = [
        ir_measures.Qrel(q, doc, grade) for q, docs in qrels.items() for doc, grade in docs.items()
    ]
    run_rows = [
        ir_measures.ScoredDoc(q, doc, score)
        for q, docs in run.items()
        for doc, score in docs.items()
    ]
    measures = [ir_measures.RR @ k for k in CUTOFFS]
    expected: dict[str, dict[str, float]] = {}
    for row in ir_measures.iter_calc(measures, qrel_rows, run_rows):
        expected.setdefault(row.query_id, {})[str(row.measure)] = row.value
    scores = score_all(topics)
    for q, values in expected.items():
        if q not in run:
            continue  # ir_measures scores a judged query without results 0, as trec_eval -c
        score = scores[int(q[1:])]
        for k in CUTOFFS:
            assert score.metrics[("rr", k)] == pytest.approx(values[f"RR@{k}"]), (q, k)


@pytest.mark.parametrize("seed", [31, 32])
def test_the_means_equal_trec_eval_and_with_c_count_judged_queries_without_results_as_zero(
    seed,
):
    topics = random_topics(seed, 150)
    qrels, run = as_trec_files(topics)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, TREC_EVAL_MEASURES).evaluate(run)
    judged_not_run = [q for q in qrels if q not in run]
    assert judged_not_run, "the data must have queries judged but not run"

    plain = score_all(topics)
    counted = score_all(topics, zero_without_results=True)
    for metric, k in METRICS:
        if metric == "rr":
            continue
        name = trec_eval_name(metric, k)
        values = [measures[name] for measures in per_query.values()]
        # trec_eval: the mean over queries both judged and run.
        assert mean_of(s.metrics[(metric, k)] for s in plain) == pytest.approx(
            sum(values) / len(values)
        )
        # trec_eval -c: every judged query, a query without results scoring 0.
        assert mean_of(s.metrics[(metric, k)] for s in counted) == pytest.approx(
            sum(values) / (len(values) + len(judged_not_run))
        )


def test_relevant_documents_the_run_did_not_retrieve_lower_ap_recall_and_ndcg():
    # One relevant document at rank 1, three more judged relevant but never retrieved.
    ranking = [1, 0, 0]
    unretrieved = [1.0, 1.0, 1.0]
    assert metric_value("ap", 3, ranking, "trec", unretrieved=unretrieved) == 0.25
    assert metric_value("recall", 3, ranking, "trec", unretrieved=unretrieved) == 0.25
    assert metric_value("ndcg", 3, ranking, "trec", unretrieved=unretrieved) == pytest.approx(
        1 / (1 + 1 / 1.5849625007211563 + 0.5)
    )
    # Precision and RR only look at the ranking.
    assert metric_value("precision", 3, ranking, "trec", unretrieved=unretrieved) == 1 / 3
    assert metric_value("rr", 3, ranking, "trec", unretrieved=unretrieved) == 1.0
    # searchtweak knows only the results.
    assert metric_value("ap", 3, ranking, "searchtweak", unretrieved=unretrieved) == 1.0
    assert metric_value("recall", 3, ranking, "searchtweak", unretrieved=unretrieved) == 1.0


def test_a_keyword_without_results_is_null_unless_asked_to_count_as_zero():
    assert metric_value("ap", 10, [], "trec", unretrieved=[1.0]) is None
    assert metric_value("ap", 10, [], "trec", unretrieved=[1.0], zero_without_results=True) == 0
    # Without any judgement there is nothing to count, even with -c.
    assert metric_value("ap", 10, [], "trec", zero_without_results=True) is None
    # searchtweak counts it as 0 too when asked.
    assert metric_value("precision", 10, [], unretrieved=[0.0], zero_without_results=True) == 0


def test_the_whole_list_looks_past_any_cutoff():
    ranking = [0] * 150 + [1]
    assert metric_value("ap", 100, ranking, "trec") == 0.0
    assert metric_value("ap", WHOLE_LIST, ranking, "trec") == pytest.approx(1 / 151)
    assert metric_value("rr", WHOLE_LIST, ranking, "searchtweak") == pytest.approx(1 / 151)
    assert metric_value("precision", WHOLE_LIST, ranking, "trec") == pytest.approx(1 / 151)
    assert metric_value("precision", 1000, ranking, "trec") == pytest.approx(1 / 1000)


def test_unretrieved_grades_are_mapped_to_each_metrics_scale_and_checked():
    # A graded evaluation: the unretrieved grade 2 is relevant for AP (graded -> binary)
    # and gains 2 in nDCG.
    score = score_keyword(
        [[3], [0]],
        scale="graded",
        metrics=[("ap", WHOLE_LIST), ("ndcg", 2)],
        profile="trec",
        unretrieved=[2],
    )
    assert score.metrics[("ap", WHOLE_LIST)] == 0.5
    assert score.metrics[("ndcg", 2)] == pytest.approx(3 / (3 + 2 / 1.5849625007211563))
    with pytest.raises(EngineError, match="is not a graded grade"):
        score_keyword([[3]], scale="graded", metrics=[("ap", 1)], unretrieved=[7])


# --- custom integer scales: TREC's grade levels ------------------------------------------


@pytest.mark.parametrize(
    ("lowest", "highest", "relevant_from"),
    [(-2, 4, 1), (-1, 4, 1), (0, 4, 1), (0, 4, 2), (-2, 4, 3)],
)
def test_custom_levels_equal_trec_eval_with_its_relevance_level(lowest, highest, relevant_from):
    """TREC Web (-2..4), trec_eval's rel_level (-1..4), learning-to-rank sets (0..4): the
    binary metrics count levels from the threshold up (trec_eval -l), nDCG's gain is the
    level, and trec_eval adds no gain below 0."""
    scale = custom_scale(lowest, highest, relevant_from=relevant_from)
    rng = random.Random(lowest * 100 + relevant_from)
    levels = list(range(lowest, highest + 1))
    topics = [
        (
            [rng.choice([*levels, None, None]) for _ in range(rng.choice([1, 9, 120]))],
            [rng.choice(levels) for _ in range(rng.choice([0, 5]))],
        )
        for _ in range(60)
    ]
    qrels, run = as_trec_files(topics)
    # pytrec_eval 0.5.11 crashes (a segmentation fault in trec_eval's C code) when a
    # query's highest level is below the relevance level: such queries (no relevant
    # document, so every binary measure is 0) are checked apart, below.
    reference = {q: judged for q, judged in qrels.items() if max(judged.values()) >= relevant_from}
    measures = pytrec_eval.RelevanceEvaluator(
        reference, TREC_EVAL_MEASURES, relevance_level=relevant_from
    ).evaluate(run)
    # nDCG does not depend on the relevance level: those queries' nDCG at level 1.
    graded_only = {
        q: judged for q, judged in qrels.items() if 1 <= max(judged.values()) < relevant_from
    }
    ndcg_only = pytrec_eval.RelevanceEvaluator(
        graded_only, {"ndcg", "ndcg_cut.1,5,10,100,1000"}, relevance_level=1
    ).evaluate(run)
    grades = [[[value] for value in ranking] for ranking, _ in topics]
    unretrieved = [judged for _, judged in topics]
    batch = score_keywords_batch(
        grades, scale=scale, metrics=METRICS, profile="trec", unretrieved=unretrieved
    )
    compared = 0
    for q, (keyword, judged) in enumerate(zip(grades, unretrieved, strict=True)):
        score = score_keyword(
            keyword, scale=scale, metrics=METRICS, profile="trec", unretrieved=judged
        )
        assert batch.keyword_score(q) == score
        if f"q{q}" not in run or f"q{q}" not in qrels:
            assert all(value is None for value in score.metrics.values())
            continue
        if f"q{q}" not in measures:  # judged, none relevant: every binary measure is 0
            for (metric, k), value in score.metrics.items():
                expected = 0.0
                if metric == "ndcg" and f"q{q}" in ndcg_only:
                    expected = ndcg_only[f"q{q}"][trec_eval_name(metric, k)]
                assert value == pytest.approx(expected, abs=1e-9), (q, metric, k)
            continue
        for metric, k in METRICS:
            if metric == "rr":
                continue
            expected = measures[f"q{q}"][trec_eval_name(metric, k)]
            assert score.metrics[(metric, k)] == pytest.approx(expected, abs=1e-9), (
                q,
                metric,
                k,
            )
            compared += 1
        assert score.metrics[("rr", WHOLE_LIST)] == pytest.approx(measures[f"q{q}"]["recip_rank"])
    assert compared > 500


def test_a_custom_scale_maps_to_binary_by_its_threshold_and_keeps_its_levels_as_gains():
    scale = custom_scale(-2, 4, relevant_from=2, labels=["spam", "junk", "no", "a", "b", "c", "d"])
    score = score_keyword(
        [[-2], [1], [4]],
        scale=scale,
        metrics=[("precision", 3), ("cg", 3), ("dcg", 2)],
        profile="searchtweak",
    )
    assert score.snapshot_values == [-2.0, 1.0, 4.0]
    assert score.metrics[("precision", 3)] == pytest.approx(1 / 3)  # only 4 reaches 2
    assert score.metrics[("cg", 3)] == 3.0  # searchtweak adds the levels as they are
    assert score.metrics[("dcg", 2)] == pytest.approx(-2 + 1 / 1.5849625007211563)
    assert scale.labels[0] == "spam" and scale.keys == ("", "", "0", "1", "2", "3", "4")


def test_a_custom_scale_is_checked_and_refuses_err():
    with pytest.raises(EngineError, match="relevant_from"):
        custom_scale(0, 4, relevant_from=0)
    with pytest.raises(EngineError, match="2 to 10 levels"):
        custom_scale(-5, 5)
    with pytest.raises(EngineError, match="keys: each level needs a key of its own"):
        custom_scale(0, 2, keys=["a", "a", "b"])
    with pytest.raises(EngineError, match="not offered on a custom scale"):
        score_keyword([[1]], scale=custom_scale(0, 4), metrics=[("err", 3)])
    with pytest.raises(EngineError, match="only binary rules apply"):
        score_keyword(
            [[1]], scale=custom_scale(0, 4), metrics=[("cg", 3)], rules={"graded": {0: 0}}
        )
