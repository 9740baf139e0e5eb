"""Success@k and R-precision: worked examples, and equal to ir_measures and
trec_eval (through pytrec_eval) under the `trec` profile on random judgements, the
per-keyword and batch paths alike."""

import random

import pytest

from apps.engine import score_keyword, score_keywords_batch
from apps.engine.conventions import WHOLE_LIST
from apps.engine.keyword import metric_value
from apps.engine.metrics import METRICS as REGISTRY
from apps.engine.metrics import metric_label

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

# Binary stage-1 values in position order (None: unjudged, or a tie).
NONE_RELEVANT = [0, 0, None, 0]
ALL_RELEVANT = [1, 1, 1]
MIXED = [0, 1, None, 1, 0]  # relevant at 2 and 4


@pytest.mark.parametrize(
    ("values", "k", "expected"),
    [
        (MIXED, 1, 0.0),
        (MIXED, 2, 1.0),
        (MIXED, WHOLE_LIST, 1.0),
        (NONE_RELEVANT, 10, 0.0),
        (ALL_RELEVANT, 1, 1.0),
        (ALL_RELEVANT, 10, 1.0),  # fewer results than k
    ],
)
@pytest.mark.parametrize("profile", ["searchtweak", "trec"])
def test_success_is_one_when_a_relevant_result_is_in_the_top_k(values, k, expected, profile):
    assert metric_value("success", k, values, profile) == expected


@pytest.mark.parametrize(
    ("values", "k", "unretrieved", "searchtweak", "trec"),
    [
        # R = 2: the top 2 hold one relevant result.
        (MIXED, WHOLE_LIST, (), 0.5, 0.5),
        # Cut at 1, the top min(R, 1) holds none.
        (MIXED, 1, (), 0.0, 0.0),
        # Cut at 4: the top 2 still decide.
        (MIXED, 4, (), 0.5, 0.5),
        # Every result relevant: 1.
        (ALL_RELEVANT, WHOLE_LIST, (), 1.0, 1.0),
        # A list shorter than R (two relevant documents the search missed): trec counts
        # them in R, searchtweak knows only the results.
        (ALL_RELEVANT, WHOLE_LIST, (1, 1), 1.0, 0.6),
        # Nothing relevant anywhere: undefined under searchtweak, 0 as trec_eval says.
        (NONE_RELEVANT, WHOLE_LIST, (), None, 0.0),
    ],
)
def test_r_precision_reads_the_top_r_results(values, k, unretrieved, searchtweak, trec):
    assert metric_value("rprec", k, values, "searchtweak", unretrieved=unretrieved) == (
        pytest.approx(searchtweak) if searchtweak is not None else None
    )
    assert metric_value("rprec", k, values, "trec", unretrieved=unretrieved) == pytest.approx(trec)


def test_the_labels_name_them_as_trec_eval_does():
    assert metric_label("success", 10) == "Success@10"
    assert metric_label("rprec", WHOLE_LIST, many_keywords=True) == "Rprec"
    assert metric_label("rprec", 5) == "Rprec@5"


CUTOFFS = (1, 2, 3, 5, 10, WHOLE_LIST)
METRICS = [(metric, k) for metric in ("success", "rprec") for k in CUTOFFS]


def random_keywords(seed: int, count: int) -> list[list[int | None]]:
    """Graded single-slot keywords of 0..15 results, some unjudged; ties in score come
    from the positions, which set the order."""
    rng = random.Random(seed)
    return [
        [rng.choice([0, 0, 0, 1, 2, 3, None]) for _ in range(rng.randint(0, 15))]
        for _ in range(count)
    ]


def pytrec_qrels(keywords, unretrieved=None) -> dict[str, dict[str, int]]:
    """pytrec_eval's qrels: each keyword's judged results (d0, d1, ... by position) and
    its judged documents the search missed; queries with no judgement left out."""
    unretrieved = unretrieved or [[] for _ in keywords]
    qrels = {
        f"q{q}": {
            **{f"d{i}": grade for i, grade in enumerate(grades) if grade is not None},
            **{f"missing{i}": grade for i, grade in enumerate(unretrieved[q])},
        }
        for q, grades in enumerate(keywords)
    }
    return {q: judged for q, judged in qrels.items() if judged}


def pytrec_run(keywords, depth: int | None = None) -> dict[str, dict[str, float]]:
    """pytrec_eval's run: each keyword's results, scores falling with the position (so
    trec_eval ranks them in order), cut at ``depth``; keywords without results left out."""
    return {
        f"q{q}": {f"d{i}": float(len(grades) - i) for i in range(len(grades))[:depth]}
        for q, grades in enumerate(keywords)
        if grades
    }


def scored_both_ways(keywords, metrics, unretrieved, **options):
    """Each keyword's (index, grades, score) under `trec`, after checking that the batch
    path gives exactly what the per-keyword path gives."""
    batch = score_keywords_batch(
        [[[grade] for grade in grades] for grades in keywords],
        scale="graded",
        metrics=metrics,
        profile="trec",
        unretrieved=unretrieved,
        **options,
    )
    for q, grades in enumerate(keywords):
        score = score_keyword(
            [[grade] for grade in grades],
            scale="graded",
            metrics=metrics,
            profile="trec",
            unretrieved=unretrieved[q],
            **options,
        )
        assert batch.keyword_score(q) == score
        yield q, grades, score


def reference(keywords, unretrieved) -> dict[tuple[str, str, int], float]:
    """ir_measures' Success@k and Rprec per query; Rprec@k is Rprec of the run cut at k."""
    qrels = [
        ir_measures.Qrel(f"q{q}", f"d{i}", grade)
        for q, grades in enumerate(keywords)
        for i, grade in enumerate(grades)
        if grade is not None
    ] + [
        ir_measures.Qrel(f"q{q}", f"missing{i}", grade)
        for q, grades in enumerate(unretrieved)
        for i, grade in enumerate(grades)
    ]
    values: dict[tuple[str, str, int], float] = {}
    for k in CUTOFFS:
        depth = None if k == WHOLE_LIST else k
        run = [
            ir_measures.ScoredDoc(f"q{q}", f"d{i}", float(len(grades) - i))
            for q, grades in enumerate(keywords)
            for i in range(len(grades))[:depth]
        ]
        measures = [ir_measures.Rprec] + ([ir_measures.Success @ k] if depth else [])
        for row in ir_measures.iter_calc(measures, qrels, run):
            name = "rprec" if row.measure == ir_measures.Rprec else "success"
            values[(row.query_id, name, k)] = row.value
    return values


@pytest.mark.parametrize(("seed", "size"), [(1, 300), (2, 300), (3, 1000)])
def test_the_trec_profile_equals_ir_measures_on_random_judgements(seed, size):
    rng = random.Random(seed)
    keywords = random_keywords(seed, size)
    # Judged documents the search did not return, relevant or not, for some keywords.
    unretrieved = [
        [rng.choice([0, 1, 2]) for _ in range(rng.choice([0, 0, 1, 3]))] for _ in keywords
    ]
    expected = reference(keywords, unretrieved)
    compared = 0
    # ir_measures scores a judged query the run misses as 0, as trec_eval -c does.
    scores = scored_both_ways(keywords, METRICS, unretrieved, zero_without_results=True)
    for q, grades, score in scores:
        for metric, k in METRICS:
            key = (f"q{q}", metric, k)
            if key not in expected:
                # ir_measures skips a query without results or without judgements, and
                # Relevo reports null; Success over the whole list is P's cousin, not
                # offered by ir_measures without a cutoff.
                if metric == "success" and k == WHOLE_LIST:
                    continue
                assert score.metrics[(metric, k)] in (None, 0.0), (q, metric, k, grades)
                continue
            assert score.metrics[(metric, k)] == pytest.approx(expected[key], abs=1e-12), (
                q,
                metric,
                k,
                grades,
                unretrieved[q],
            )
            compared += 1
    assert compared > 2500


def test_success_at_1_5_10_and_rprec_equal_trec_eval():
    keywords = random_keywords(7, 200)
    qrels, run = pytrec_qrels(keywords), pytrec_run(keywords)
    measures = {"success.1,5,10", "Rprec"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    metrics = [("success", 1), ("success", 5), ("success", 10), ("rprec", WHOLE_LIST)]
    names = {("success", 1): "success_1", ("success", 5): "success_5"}
    names |= {("success", 10): "success_10", ("rprec", WHOLE_LIST): "Rprec"}
    for q, grades in enumerate(keywords):
        if f"q{q}" not in expected:
            continue
        score = score_keyword(
            [[grade] for grade in grades], scale="graded", metrics=metrics, profile="trec"
        )
        for metric in metrics:
            assert score.metrics[metric] == pytest.approx(expected[f"q{q}"][names[metric]])


# --- bpref, counts, interpolated precision, RBP ------------------------------------------

# R = 2 relevant results (ranks 2 and 4), N = 2 judged non-relevant (ranks 1 and 5), one
# unjudged (rank 3).


def test_bpref_charges_each_relevant_result_for_the_judged_non_relevant_above_it():
    # Rank 2: one non-relevant above it, 1 - 1/min(2, 2) = 0.5; rank 4: still one (the
    # unjudged rank 3 costs nothing), 0.5. (0.5 + 0.5) / 2.
    assert metric_value("bpref", WHOLE_LIST, MIXED, "trec") == pytest.approx(0.5)
    # A relevant document the search missed adds to R (3) but scores nothing:
    # min(R, N) = 2 still, (0.5 + 0.5) / 3.
    assert metric_value("bpref", WHOLE_LIST, MIXED, "trec", unretrieved=(1,)) == pytest.approx(
        1 / 3
    )
    # Without judged non-relevant documents, every relevant result scores 1.
    assert metric_value("bpref", WHOLE_LIST, ALL_RELEVANT, "trec") == 1.0
    assert metric_value("bpref", WHOLE_LIST, NONE_RELEVANT, "trec") == 0.0
    assert metric_value("bpref", WHOLE_LIST, NONE_RELEVANT, "searchtweak") is None


def test_the_counts_read_r_the_results_and_the_relevant_results():
    assert metric_value("num_rel", WHOLE_LIST, MIXED, "trec", unretrieved=(1, 0)) == 3.0
    assert metric_value("num_rel", 1, MIXED, "trec") == 2.0  # R whatever the cutoff
    assert metric_value("num_ret", WHOLE_LIST, MIXED, "trec") == 5.0
    assert metric_value("num_ret", 3, MIXED, "trec") == 3.0
    assert metric_value("num_ret", 10, MIXED, "trec") == 5.0  # fewer results than k
    assert metric_value("num_rel_ret", 3, MIXED, "trec") == 1.0
    assert metric_value("num_rel_ret", WHOLE_LIST, MIXED, "searchtweak") == 2.0


def test_interpolated_precision_takes_the_best_precision_at_or_beyond_each_recall():
    # R = 3; relevant at ranks 1 and 3 (precision 1 and 2/3), the third never found.
    values = [1, 0, 1, None]
    unretrieved = (1,)
    at = {
        level: metric_value(f"iprec_{level}", WHOLE_LIST, values, "trec", unretrieved=unretrieved)
        for level in range(0, 101, 10)
    }
    # Levels up to 0.3 need one relevant result (0.3 x 3 + 0.9 = 1.8, cut to 1), up to
    # 0.7 two (0.7 x 3 + 0.9 is a hair under 3: trec_eval reads it at 2), from 0.8 three.
    assert [at[level] for level in range(0, 101, 10)] == pytest.approx(
        [1, 1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 0, 0, 0]
    )
    average = metric_value("iprec_avg", WHOLE_LIST, values, "trec", unretrieved=unretrieved)
    assert average == pytest.approx((4 + 4 * 2 / 3) / 11)


def test_interpolated_precision_is_zero_with_nothing_relevant_found():
    assert metric_value("iprec_0", WHOLE_LIST, NONE_RELEVANT, "trec", unretrieved=(1,)) == 0.0
    assert metric_value("iprec_avg", WHOLE_LIST, NONE_RELEVANT, "trec") == 0.0
    assert metric_value("iprec_avg", WHOLE_LIST, NONE_RELEVANT, "searchtweak") is None


def test_rank_biased_precision_and_its_residual_bound_the_value():
    # p = 0.5: weights 0.5, 0.25, 0.125, 0.0625, 0.03125. Relevant at 2 and 4.
    assert metric_value("rbp_50", WHOLE_LIST, MIXED, "trec") == pytest.approx(0.25 + 0.0625)
    # Unjudged rank 3 (0.125) and everything below rank 5 (0.5^5).
    assert metric_value("rbp_50_res", WHOLE_LIST, MIXED, "trec") == pytest.approx(0.125 + 0.5**5)
    # Cut at 2: relevant at 2 only, nothing unjudged in the top 2, 0.5^2 below it.
    assert metric_value("rbp_50", 2, MIXED, "trec") == pytest.approx(0.25)
    assert metric_value("rbp_50_res", 2, MIXED, "trec") == pytest.approx(0.25)
    # Every result relevant and judged: value + residual = 1 exactly as far as it goes.
    value = metric_value("rbp_80", WHOLE_LIST, ALL_RELEVANT, "searchtweak")
    residual = metric_value("rbp_80_res", WHOLE_LIST, ALL_RELEVANT, "searchtweak")
    assert value == pytest.approx(1 - 0.8**3)
    assert value + residual == pytest.approx(1.0)


def rbp_by_definition(grades, p, depth):
    """RBP and its residual written out from Moffat and Zobel's definition, apart from
    the engine's code: sum over ranks of (1 - p) p^(i - 1) for relevant (grade >= 1)
    results; the residual adds the unjudged ones and p^n beyond the n results read."""
    shown = grades[:depth]
    value = sum((1 - p) * p**i for i, grade in enumerate(shown) if grade is not None and grade >= 1)
    unknown = sum((1 - p) * p**i for i, grade in enumerate(shown) if grade is None)
    return value, unknown + p ** len(shown)


@pytest.mark.parametrize("seed", [11, 12])
def test_rbp_equals_its_definition_on_random_judgements(seed):
    keywords = random_keywords(seed, 300)
    metrics = [(m, k) for m in ("rbp_50", "rbp_50_res", "rbp_95", "rbp_95_res") for k in CUTOFFS]
    batch = score_keywords_batch(
        [[[grade] for grade in grades] for grades in keywords],
        scale="graded",
        metrics=metrics,
        profile="trec",
    )
    for q, grades in enumerate(keywords):
        if not any(grade is not None for grade in grades):
            continue
        score = batch.keyword_score(q)
        for k in CUTOFFS:
            depth = len(grades) if k == WHOLE_LIST else k
            for p, metric in ((0.5, "rbp_50"), (0.95, "rbp_95")):
                value, residual = rbp_by_definition(grades, p, depth)
                assert score.metrics[(metric, k)] == pytest.approx(value, abs=1e-12)
                assert score.metrics[(f"{metric}_res", k)] == pytest.approx(residual, abs=1e-12)


TREC_EVAL_NAMED = {
    "gm_ap": "gm_map",
    "bpref": "bpref",
    "num_rel": "num_rel",
    "num_ret": "num_ret",
    "num_rel_ret": "num_rel_ret",
    "iprec_avg": "11pt_avg",
    **{f"iprec_{level}": f"iprec_at_recall_{level / 100:.2f}" for level in range(0, 101, 10)},
}


@pytest.mark.parametrize(("seed", "size"), [(21, 400), (22, 1000)])
@pytest.mark.parametrize("depth", [None, 3, 10])
def test_bpref_counts_and_interpolated_precision_equal_trec_eval(seed, size, depth):
    """Against trec_eval's own code (pytrec_eval) on random judgements with judged
    documents the search missed; at a cutoff k, trec_eval reads the run cut at k."""
    rng = random.Random(seed)
    keywords = random_keywords(seed, size)
    unretrieved = [
        [rng.choice([0, 1, 2]) for _ in range(rng.choice([0, 0, 1, 3]))] for _ in keywords
    ]
    qrels, run = pytrec_qrels(keywords, unretrieved), pytrec_run(keywords, depth)
    expected = pytrec_eval.RelevanceEvaluator(
        qrels,
        {"bpref", "num_rel", "num_ret", "num_rel_ret", "11pt_avg", "iprec_at_recall", "gm_map"},
    ).evaluate(run)
    k = WHOLE_LIST if depth is None else depth
    metrics = [(metric, k) for metric in TREC_EVAL_NAMED]
    compared = 0
    for q, grades, score in scored_both_ways(keywords, metrics, unretrieved):
        if f"q{q}" not in expected:
            assert all(value is None for value in score.metrics.values()), (q, grades)
            continue
        for metric, name in TREC_EVAL_NAMED.items():
            assert score.metrics[(metric, k)] == pytest.approx(
                expected[f"q{q}"][name], abs=1e-12
            ), (q, metric, grades, unretrieved[q])
            compared += 1
    assert compared > 5000


def test_bpref_equals_ir_measures():
    keywords = random_keywords(31, 300)
    qrels = [
        ir_measures.Qrel(f"q{q}", f"d{i}", grade)
        for q, grades in enumerate(keywords)
        for i, grade in enumerate(grades)
        if grade is not None
    ]
    run = [
        ir_measures.ScoredDoc(f"q{q}", f"d{i}", float(len(grades) - i))
        for q, grades in enumerate(keywords)
        for i in range(len(grades))
    ]
    expected = {
        row.query_id: row.value for row in ir_measures.iter_calc([ir_measures.Bpref], qrels, run)
    }
    for q, grades in enumerate(keywords):
        if f"q{q}" in expected:
            score = score_keyword(
                [[g] for g in grades], scale="graded", metrics=[("bpref", 0)], profile="trec"
            )
            assert score.metrics[("bpref", 0)] == pytest.approx(expected[f"q{q}"], abs=1e-12)


# --- Coverage and condensed lists ---------------------------------------------------------


def test_judged_at_k_is_the_share_of_the_top_k_with_a_value_and_unjudged_counts_the_rest():
    # MIXED = [0, 1, None, 1, 0]: one unjudged result, at rank 3.
    assert metric_value("judged", 2, MIXED, "searchtweak") == 1.0
    assert metric_value("judged", 3, MIXED, "trec") == pytest.approx(2 / 3)
    assert metric_value("judged", 10, MIXED, "trec") == pytest.approx(4 / 5)  # of 5 shown
    assert metric_value("unjudged", WHOLE_LIST, MIXED, "trec") == 1.0
    # Nothing judged is a coverage of 0, not a missing value; no results is missing.
    assert metric_value("judged", 5, [None, None], "searchtweak") == 0.0
    assert metric_value("unjudged", 5, [None, None], "searchtweak") == 2.0
    assert metric_value("judged", 5, [], "trec") is None


def test_a_condensed_metric_drops_the_unjudged_results_before_computing():
    # [1, None, 1]: P@2 counts the unjudged rank 2 as not relevant (trec: 1/2); on the
    # condensed list [1, 1] it is 1.
    assert metric_value("precision", 2, [1, None, 1], "trec") == 0.5
    assert metric_value("precision_cond", 2, [1, None, 1], "trec") == 1.0
    assert metric_value("ap_cond", WHOLE_LIST, [None, 0, None, 1], "trec") == 0.5
    # Every result unjudged: 0 under trec when the keyword has judgements elsewhere, as
    # trec_eval -J scores it; null otherwise.
    assert metric_value("ap_cond", WHOLE_LIST, [None], "trec", unretrieved=(1,)) == 0.0
    assert metric_value("ap_cond", WHOLE_LIST, [None], "trec") is None
    assert metric_value("ap_cond", WHOLE_LIST, [None], "searchtweak", unretrieved=(1,)) is None


def test_every_rating_metric_has_a_condensed_twin_named_with_a_prime():
    assert metric_label("ndcg_cond", 10) == "nDCG′@10"
    assert metric_label("ap_cond", WHOLE_LIST, many_keywords=True) == "AP′"
    assert "judged_cond" not in REGISTRY and "num_ret_cond" not in REGISTRY


CONDENSED_NAMES = {
    ("ap_cond", WHOLE_LIST): "map",
    ("ap_cond", 10): "map_cut_10",
    ("ndcg_cond", WHOLE_LIST): "ndcg",
    ("ndcg_cond", 10): "ndcg_cut_10",
    ("precision_cond", 3): "P_3",
    ("bpref_cond", WHOLE_LIST): "bpref",
    ("rprec_cond", WHOLE_LIST): "Rprec",
    ("rr_cond", WHOLE_LIST): "recip_rank",
}


@pytest.mark.parametrize("seed", [41, 42])
def test_condensed_metrics_equal_trec_eval_reading_judged_documents_only(seed):
    """trec_eval -J (pytrec_eval's judged_docs_only_flag) drops unjudged results first."""
    rng = random.Random(seed)
    keywords = [
        [rng.choice([0, 0, 1, 2, 3, None, None]) for _ in range(rng.randint(0, 15))]
        for _ in range(400)
    ]
    unretrieved = [[rng.choice([0, 1, 2]) for _ in range(rng.choice([0, 1, 3]))] for _ in keywords]
    qrels, run = pytrec_qrels(keywords, unretrieved), pytrec_run(keywords)
    measures = {"map", "map_cut.10", "ndcg", "ndcg_cut.10", "P.3", "bpref", "Rprec", "recip_rank"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(
        run
    )
    compared = 0
    for q, grades, score in scored_both_ways(keywords, list(CONDENSED_NAMES), unretrieved):
        if f"q{q}" not in expected:
            continue
        for request, name in CONDENSED_NAMES.items():
            assert score.metrics[request] == pytest.approx(expected[f"q{q}"][name], abs=1e-12), (
                q,
                request,
                grades,
                unretrieved[q],
            )
            compared += 1
    assert compared > 2500


def test_condensing_follows_the_native_scale_and_coverage_equals_ir_measures_judged():
    """Three slots a result: a result is judged when its native stage-1 value exists,
    and the binary metrics of a graded evaluation read the condensed list too."""
    rng = random.Random(51)
    keywords = [
        [[rng.choice([0, 1, 2, 3, None]) for _ in range(3)] for _ in range(rng.randint(1, 12))]
        for _ in range(300)
    ]
    metrics = [("judged", 5), ("judged", WHOLE_LIST), ("unjudged", 5), ("ap_cond", 5)]
    metrics += [("ndcg_cond", WHOLE_LIST), ("precision_cond", 5)]
    for profile in ("searchtweak", "trec"):
        batch = score_keywords_batch(keywords, scale="graded", metrics=metrics, profile=profile)
        for q, snapshots in enumerate(keywords):
            assert batch.keyword_score(q) == score_keyword(
                snapshots, scale="graded", metrics=metrics, profile=profile
            )
    judged = [[any(g is not None for g in slots) for slots in snapshots] for snapshots in keywords]
    qrels = [
        ir_measures.Qrel(f"q{q}", f"d{i}", 1)
        for q, marks in enumerate(judged)
        for i, mark in enumerate(marks)
        if mark
    ]
    run = [
        ir_measures.ScoredDoc(f"q{q}", f"d{i}", float(len(marks) - i))
        for q, marks in enumerate(judged)
        for i in range(len(marks))
    ]
    reference = {
        row.query_id: row.value
        for row in ir_measures.iter_calc([ir_measures.Judged @ 5], qrels, run)
    }
    batch = score_keywords_batch(keywords, scale="graded", metrics=metrics, profile="trec")
    for q in range(len(keywords)):
        ours = batch.keyword_score(q).metrics[("judged", 5)]
        assert ours == pytest.approx(reference.get(f"q{q}", 0.0), abs=1e-12)


IR_MEASURES_NAMED = {
    ("bpref", WHOLE_LIST): "Bpref",
    ("rprec", WHOLE_LIST): "Rprec",
    ("num_rel", WHOLE_LIST): "NumRel",
    ("num_ret", WHOLE_LIST): "NumRet",
    ("num_rel_ret", WHOLE_LIST): "NumRet(rel=1)",
    ("iprec_0", WHOLE_LIST): "IPrec@0.0",
    ("iprec_30", WHOLE_LIST): "IPrec@0.3",
    ("iprec_70", WHOLE_LIST): "IPrec@0.7",
    ("iprec_100", WHOLE_LIST): "IPrec@1.0",
    ("success", 5): "Success@5",
    ("judged", 5): "Judged@5",
}


@pytest.mark.parametrize(("seed", "size"), [(61, 50), (62, 1000)])
def test_the_new_measures_equal_ir_measures_on_small_and_1000_keyword_data(seed, size):
    """ir_measures, with unretrieved judged documents; it skips a query without
    judgements, and scores a judged query without results 0 (trec_eval -c)."""
    rng = random.Random(seed)
    keywords = random_keywords(seed, size)
    unretrieved = [[rng.choice([0, 1, 2]) for _ in range(rng.choice([0, 1, 3]))] for _ in keywords]
    qrels = [
        ir_measures.Qrel(q, doc, grade)
        for q, judged in pytrec_qrels(keywords, unretrieved).items()
        for doc, grade in judged.items()
    ]
    run = [
        ir_measures.ScoredDoc(q, doc, score)
        for q, scored in pytrec_run(keywords).items()
        for doc, score in scored.items()
    ]
    parsed = {
        request: ir_measures.parse_measure(name) for request, name in IR_MEASURES_NAMED.items()
    }
    expected = {
        (row.query_id, str(row.measure)): row.value
        for row in ir_measures.iter_calc(list(parsed.values()), qrels, run)
    }
    compared = 0
    metrics = list(IR_MEASURES_NAMED)
    scores = scored_both_ways(keywords, metrics, unretrieved, zero_without_results=True)
    for q, grades, score in scores:
        for request, measure in parsed.items():
            key = (f"q{q}", str(measure))
            if key not in expected:
                continue
            ours = score.metrics[request]
            if request[0] == "num_rel" and not grades:
                # No results: ir_measures fills every measure with 0, where trec_eval -c
                # keeps num_rel's R (test_trec_eval_edges.py).
                continue
            assert ours == pytest.approx(expected[key], abs=1e-12), (q, request, grades)
            compared += 1
    assert compared > size * 5
