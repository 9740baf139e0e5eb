"""The edges where trec_eval's rules are easy to miss: a judged query the run did not
answer under -c, and a negative qrels level, which trec_eval reads as a document in the
pool that nobody judged. Each case is a small run first, then random runs against
pytrec_eval (which runs trec_eval's own code)."""

import math
import random

import pytest

from apps.engine import WHOLE_LIST, custom_scale, mean_of, score_keyword, score_keywords_batch

pytrec_eval = pytest.importorskip("pytrec_eval")

GMAP = ("gm_ap", WHOLE_LIST)
NUM_REL = ("num_rel", WHOLE_LIST)
FLOOR = 0.00001


def scored_both_ways(keywords, metrics, unretrieved, *, scale="binary", **options):
    """Each keyword scored alone and all in one batch; the two must agree exactly."""
    alone = [
        score_keyword(
            grades, scale=scale, metrics=metrics, profile="trec", unretrieved=judged, **options
        )
        for grades, judged in zip(keywords, unretrieved, strict=True)
    ]
    batch = score_keywords_batch(
        keywords, scale=scale, metrics=metrics, profile="trec", unretrieved=unretrieved, **options
    )
    for index, score in enumerate(alone):
        assert batch.keyword_score(index) == score, index
    return alone


def test_with_c_a_judged_query_without_results_enters_gm_map_at_the_floor_not_as_ap_1():
    # q1 answered with AP 0.5; q2 judged (one relevant document) but not in the run.
    keywords = [[[0], [1]], []]
    scores = scored_both_ways(keywords, [GMAP], [[], [1]], zero_without_results=True)
    assert scores[1].metrics[GMAP] == pytest.approx(math.log(FLOOR))
    gmap = math.exp(mean_of(score.metrics[GMAP] for score in scores))
    assert gmap == pytest.approx(math.sqrt(0.5 * FLOOR))


def test_with_c_a_judged_query_without_results_keeps_its_relevant_documents_in_num_rel():
    keywords = [[[1], [0]], []]
    scores = scored_both_ways(keywords, [NUM_REL], [[1], [1, 1, 0]], zero_without_results=True)
    assert [score.metrics[NUM_REL] for score in scores] == [2.0, 2.0]


def test_with_c_a_query_without_results_has_no_unjudged_result_in_its_top_k():
    metrics = [("unjudged", 10), ("judged", 10)]
    scores = scored_both_ways([[]], metrics, [[1]], zero_without_results=True)
    assert scores[0].metrics == {("unjudged", 10): 0.0, ("judged", 10): 0.0}
    # Without -c the query is not evaluated at all.
    assert scored_both_ways([[]], metrics, [[1]])[0].metrics == {
        ("unjudged", 10): None,
        ("judged", 10): None,
    }


def test_a_condensed_list_that_lost_every_result_scores_as_a_query_without_results():
    # Every result unjudged: the -J list is empty, the query is still judged.
    metrics = [("gm_ap_cond", WHOLE_LIST), ("ap_cond", WHOLE_LIST)]
    scores = scored_both_ways([[[None], [None]]], metrics, [[1]])
    assert scores[0].metrics[("gm_ap_cond", WHOLE_LIST)] == pytest.approx(math.log(FLOOR))
    assert scores[0].metrics[("ap_cond", WHOLE_LIST)] == 0.0


@pytest.mark.parametrize("seed", [41, 42])
def test_with_c_gm_map_and_num_rel_equal_trec_eval_over_every_judged_query(seed):
    rng = random.Random(seed)
    keywords, unretrieved, qrels, run = [], [], {}, {}
    for q in range(60):
        depth = rng.choice([0, 0, 3, 12])
        ranking = [rng.choice([None, 0, 1]) for _ in range(depth)]
        elsewhere = [rng.choice([0, 1]) for _ in range(rng.choice([1, 4]))]
        keywords.append([[grade] for grade in ranking])
        unretrieved.append(elsewhere)
        judged = {f"d{i}": grade for i, grade in enumerate(ranking) if grade is not None}
        qrels[f"q{q}"] = judged | {f"u{i}": grade for i, grade in enumerate(elsewhere)}
        if depth:
            run[f"q{q}"] = {f"d{i}": float(depth - i) for i in range(depth)}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"map", "num_rel"}).evaluate(run)
    scores = scored_both_ways(keywords, [GMAP, NUM_REL], unretrieved, zero_without_results=True)

    # trec_eval -c: a query judged but not run has AP 0 (floored in gm_map) and its R.
    def ap_of(q):
        return per_query[q]["map"] if q in per_query else 0.0

    expected_gmap = math.exp(sum(math.log(max(ap_of(q), FLOOR)) for q in qrels) / len(qrels))
    expected_num_rel = sum(
        sum(1 for grade in docs.values() if grade > 0) for docs in qrels.values()
    )
    assert math.exp(mean_of(s.metrics[GMAP] for s in scores)) == pytest.approx(expected_gmap)
    assert sum(s.metrics[NUM_REL] for s in scores) == expected_num_rel


# --- negative levels: in the pool, not judged -------------------------------------------

TREC_LEVELS = custom_scale(-1, 2)  # trec_eval's qrels.rel_level: -1 to 2


def test_a_negative_level_counts_as_unjudged_for_bpref_unjudged_at_k_and_the_rbp_residual():
    # Ranks: relevant, pooled but unjudged (-1), judged non-relevant, relevant.
    ranking = [[1], [-1], [0], [1]]
    metrics = [("bpref", WHOLE_LIST), ("unjudged", 4), ("rbp_50_res", 4), ("precision", 4)]
    score = scored_both_ways([ranking], metrics, [[]], scale=TREC_LEVELS)[0]
    # bpref: one judged non-relevant above the second relevant, out of min(R=2, N=1).
    assert score.metrics[("bpref", WHOLE_LIST)] == pytest.approx((1 + 0) / 2)
    assert score.metrics[("unjudged", 4)] == 1.0
    assert score.metrics[("rbp_50_res", 4)] == pytest.approx(0.25 + 0.5**4)
    # For precision it is simply not relevant.
    assert score.metrics[("precision", 4)] == 0.5


def test_a_negative_level_is_left_out_of_the_condensed_list():
    ranking = [[-1], [1], [0]]
    metrics = [("precision_cond", 1), ("ap_cond", WHOLE_LIST)]
    score = scored_both_ways([ranking], metrics, [[]], scale=TREC_LEVELS)[0]
    assert score.metrics == {("precision_cond", 1): 1.0, ("ap_cond", WHOLE_LIST): 1.0}


def test_a_query_whose_qrels_hold_only_negative_levels_is_evaluated_as_trec_eval_does():
    metrics = [("ap", WHOLE_LIST), ("infap", WHOLE_LIST)]
    retrieved = scored_both_ways([[[-1], [None]]], metrics, [[]], scale=TREC_LEVELS)[0]
    assert retrieved.metrics == {("ap", WHOLE_LIST): 0.0, ("infap", WHOLE_LIST): 0.0}
    elsewhere = scored_both_ways([[[None]]], metrics, [[-1]], scale=TREC_LEVELS)[0]
    assert elsewhere.metrics == {("ap", WHOLE_LIST): 0.0, ("infap", WHOLE_LIST): 0.0}
    # Nothing in the qrels at all: not evaluated.
    nothing = scored_both_ways([[[None]]], metrics, [[]], scale=TREC_LEVELS)[0]
    assert nothing.metrics == {("ap", WHOLE_LIST): None, ("infap", WHOLE_LIST): None}


def test_infap_infers_the_precision_above_a_relevant_result_from_the_judged_sample():
    # A pooled unjudged document, then a relevant one: 1/2 + (1 pooled / 2) x 1/2.
    score = scored_both_ways([[[-1], [1]]], [("infap", WHOLE_LIST)], [[]], scale=TREC_LEVELS)[0]
    assert score.metrics[("infap", WHOLE_LIST)] == pytest.approx(0.75)
    # Outside the pool (no qrels line) the document above counts as not relevant.
    outside = scored_both_ways([[[None], [1]]], [("infap", WHOLE_LIST)], [[]], scale=TREC_LEVELS)
    assert outside[0].metrics[("infap", WHOLE_LIST)] == pytest.approx(0.5)


def test_every_level_below_zero_means_the_same_as_minus_one():
    web_levels = custom_scale(-2, 2)  # the Web tracks' -2 (spam) is below 0 too
    metrics = [("bpref", WHOLE_LIST), ("infap", WHOLE_LIST), ("unjudged", 3)]
    minus_two = scored_both_ways([[[1], [-2], [0]]], metrics, [[-2]], scale=web_levels)[0]
    minus_one = scored_both_ways([[[1], [-1], [0]]], metrics, [[-1]], scale=web_levels)[0]
    assert minus_two.metrics == minus_one.metrics


def test_under_searchtweak_a_negative_level_is_a_judged_grade():
    ranking = [[1], [-1], [2]]
    score = score_keyword(
        ranking,
        scale=TREC_LEVELS,
        metrics=[("unjudged", 3), ("dcg", 3), ("precision", 3)],
        profile="searchtweak",
    )
    assert score.metrics[("unjudged", 3)] == 0.0
    assert score.metrics[("dcg", 3)] == pytest.approx(1 - 1 / math.log2(3) + 2 / 2)
    assert score.metrics[("precision", 3)] == pytest.approx(2 / 3)


NEGATIVE_LEVEL_MEASURES = {
    ("infap", WHOLE_LIST): "infAP",
    ("ap", WHOLE_LIST): "map",
    ("bpref", WHOLE_LIST): "bpref",
    ("precision", 10): "P_10",
    ("recall", 10): "recall_10",
    ("ndcg", WHOLE_LIST): "ndcg",
    ("ndcg", 10): "ndcg_cut_10",
    ("rprec", WHOLE_LIST): "Rprec",
    ("num_rel", WHOLE_LIST): "num_rel",
    ("rr", WHOLE_LIST): "recip_rank",
}
CONDENSED_MEASURES = {
    ("ap_cond", WHOLE_LIST): "map",
    ("bpref_cond", WHOLE_LIST): "bpref",
    ("ndcg_cond", WHOLE_LIST): "ndcg",
    ("precision_cond", 10): "P_10",
}


def random_pools(seed: int, count: int):
    """Rankings and unretrieved judgements on -1..2, -1 a document of the pool nobody
    judged, None a document outside the pool. (pytrec_eval crashes on levels below -1,
    so -2 is checked against -1 above.)"""
    rng = random.Random(seed)
    keywords, unretrieved, qrels, run = [], [], {}, {}
    for q in range(count):
        depth = rng.choice([1, 5, 20, 60])
        ranking = [rng.choice([None, None, -1, -1, 0, 0, 1, 2]) for _ in range(depth)]
        elsewhere = [rng.choice([-1, 0, 1, 2]) for _ in range(rng.choice([0, 2, 5]))]
        keywords.append([[grade] for grade in ranking])
        unretrieved.append(elsewhere)
        judged = {f"d{i}": grade for i, grade in enumerate(ranking) if grade is not None}
        judged |= {f"u{i}": grade for i, grade in enumerate(elsewhere)}
        if judged:
            qrels[f"q{q}"] = judged
        run[f"q{q}"] = {f"d{i}": float(depth - i) for i in range(depth)}
    return keywords, unretrieved, qrels, run


@pytest.mark.parametrize("seed", [51, 52])
def test_with_negative_levels_every_measure_and_its_condensed_twin_equals_trec_eval(seed):
    keywords, unretrieved, qrels, run = random_pools(seed, 250)
    names = set(NEGATIVE_LEVEL_MEASURES.values())
    expected = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    condensed = pytrec_eval.RelevanceEvaluator(
        qrels, set(CONDENSED_MEASURES.values()), judged_docs_only_flag=True
    ).evaluate(run)
    metrics = [*NEGATIVE_LEVEL_MEASURES, *CONDENSED_MEASURES]
    scores = scored_both_ways(keywords, metrics, unretrieved, scale=TREC_LEVELS)
    compared = 0
    for q, score in enumerate(scores):
        if f"q{q}" not in qrels:
            assert all(value is None for value in score.metrics.values())
            continue
        for request, name in NEGATIVE_LEVEL_MEASURES.items():
            reference = expected[f"q{q}"][name]
            assert score.metrics[request] == pytest.approx(reference, abs=1e-9), (q, request)
            compared += 1
        for request, name in CONDENSED_MEASURES.items():
            reference = condensed[f"q{q}"][name]
            assert score.metrics[request] == pytest.approx(reference, abs=1e-9), (q, request)
            compared += 1
    assert compared > 2500
