"""Profile `trec` reproduces trec_eval (through pytrec_eval) on the same judgements."""

import random

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from apps.engine import score_keyword, score_keywords_batch  # noqa: E402

CUTOFFS = (1, 3, 5, 10)
METRICS = [(metric, k) for metric in ("precision", "ap", "rr", "ndcg") for k in CUTOFFS]
TREC_NAMES = {"precision": "P_{k}", "ap": "map_cut_{k}", "ndcg": "ndcg_cut_{k}"}


def random_keywords(seed: int, count: int) -> list[list[int | None]]:
    """Graded single-slot keywords of 1..15 results, about a fifth left ungraded."""
    rng = random.Random(seed)
    return [
        [rng.choice([0, 0, 1, 2, 3, None]) for _ in range(rng.randint(1, 15))] for _ in range(count)
    ]


def trec_eval_results(keywords):
    # Ungraded results are simply absent from the qrels: trec_eval treats them as
    # not relevant, exactly what profile `trec` does with nulls.
    qrels = {
        f"q{q}": {f"d{i}": grade for i, grade in enumerate(grades) if grade is not None}
        for q, grades in enumerate(keywords)
    }
    qrels = {q: judged for q, judged in qrels.items() if judged}
    # Strictly decreasing scores make trec_eval rank in position order.
    run = {
        f"q{q}": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}
        for q, grades in enumerate(keywords)
    }
    cutoffs = ",".join(map(str, CUTOFFS))
    measures = {f"P.{cutoffs}", f"map_cut.{cutoffs}", f"ndcg_cut.{cutoffs}", "recip_rank"}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_trec_profile_agrees_with_trec_eval_on_random_keywords(seed):
    keywords = random_keywords(seed, 200)
    expected = trec_eval_results(keywords)
    batch = score_keywords_batch(
        [[[grade] for grade in grades] for grades in keywords],
        scale="graded",
        metrics=METRICS,
        profile="trec",
    )
    compared = 0
    for q, grades in enumerate(keywords):
        score = score_keyword(
            [[grade] for grade in grades], scale="graded", metrics=METRICS, profile="trec"
        )
        assert batch.keyword_score(q) == score
        if f"q{q}" not in expected:
            # No judged result: trec_eval skips the query and Relevo reports null.
            assert all(value is None for value in score.metrics.values())
            continue
        measures = expected[f"q{q}"]
        for metric, k in METRICS:
            if metric == "rr":
                # trec_eval's recip_rank has no cutoff: compare only when the first
                # relevant result is within k, where both are 1/rank.
                relevant_ranks = [i for i, grade in enumerate(grades) if grade]
                if not relevant_ranks or relevant_ranks[0] >= k:
                    continue
                reference = measures["recip_rank"]
            else:
                reference = measures[TREC_NAMES[metric].format(k=k)]
            assert score.metrics[(metric, k)] == pytest.approx(reference, abs=1e-9), (
                q,
                metric,
                k,
                grades,
            )
            compared += 1
    assert compared > 1500
