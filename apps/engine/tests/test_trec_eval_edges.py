"""The edges where trec_eval's rules are easy to miss: a judged query the run did not
answer under -c, and a negative qrels level, which trec_eval reads as a document in the
pool that nobody judged. Each case is a small run first, then random runs against
pytrec_eval (which runs trec_eval's own code)."""

import math
import random

import pytest

from apps.engine import WHOLE_LIST, mean_of, score_keyword, score_keywords_batch

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
