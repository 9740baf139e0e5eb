"""Benchmark Relevo's scoring engine against pytrec_eval (trec_eval's C code).

Run: .venv/bin/python bench/engine_bench.py [--keywords N] [--seed S]

Both tools score the same keywords (20 results each, one graded slot 0..3, all judged)
in one run. Relevo is timed from the in-memory grade lists to finished per-keyword
values as Python lists (the batch path, everything the engine does: validation,
transform to binary, stage 1, stage 2, conversion back to floats/None). pytrec_eval is
timed as RelevanceEvaluator construction + evaluate(); building its qrels/run dicts is
not timed. The bench then checks that both agree per keyword.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytrec_eval  # noqa: E402

from apps.engine import score_keyword, score_keywords_batch  # noqa: E402

POSITIONS = 20
CUTOFF = 10
TOLERANCE = 1e-9
# The measures trec_eval has over the whole list only, and RBP at 10 (which
# trec_eval lacks: Relevo's side computes it, and its residual, on top).
WHOLE_LIST_COMPARED = {
    "rprec": "Rprec",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "iprec_avg": "11pt_avg",
    **{f"iprec_{level}": f"iprec_at_recall_{level / 100:.2f}" for level in range(0, 101, 10)},
}
RELEVO_METRICS = [
    ("precision", 10),
    ("ap", 10),
    ("rr", 10),
    ("ndcg", 10),
    ("err", 10),
    ("success", 10),
    *((metric, 0) for metric in WHOLE_LIST_COMPARED),  # 0: the whole list
    ("rbp_80", 10),
    ("rbp_80_res", 10),
]
TREC_MEASURES = {"P_10", "map_cut_10", "recip_rank", "ndcg_cut_10", "success_10"}
TREC_MEASURES |= {"Rprec", "bpref", "num_ret", "num_rel", "num_rel_ret", "11pt_avg"}
TREC_MEASURES |= {"iprec_at_recall"}
# Relevo metric -> trec_eval measure it must equal in profile `trec`.
COMPARED = {
    ("precision", 10): "P_10",
    ("ap", 10): "map_cut_10",
    ("ndcg", 10): "ndcg_cut_10",
    ("success", 10): "success_10",
    **{(metric, 0): measure for metric, measure in WHOLE_LIST_COMPARED.items()},
}


def make_grades(keywords: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randint(0, 3) for _ in range(POSITIONS)] for _ in range(keywords)]


def time_relevo(grades: list[list[int]]) -> tuple[float, dict[tuple[str, int], list]]:
    # The engine's input shape: per keyword, per snapshot, the slot grades (one slot).
    snapshot_grades = [[[grade] for grade in row] for row in grades]
    start = time.perf_counter()
    scores = score_keywords_batch(
        snapshot_grades, scale="graded", metrics=RELEVO_METRICS, profile="trec"
    )
    values = {request: scores.metric_values(*request) for request in RELEVO_METRICS}
    return time.perf_counter() - start, values


def time_pytrec_eval(grades: list[list[int]]) -> tuple[float, dict[str, dict[str, float]]]:
    qrels = {
        f"q{q}": {f"d{position}": grade for position, grade in enumerate(row)}
        for q, row in enumerate(grades)
    }
    # Strictly decreasing scores, so trec_eval's ranking is the position order.
    run = {
        f"q{q}": {f"d{position}": float(POSITIONS - position) for position in range(POSITIONS)}
        for q in range(len(grades))
    }
    start = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES)
    results = evaluator.evaluate(run)
    return time.perf_counter() - start, results


def time_single_keyword_path(repeats: int = 2000) -> float:
    """Mean seconds of one score_keyword call: 20 snapshots x 3 slots x 10 metrics."""
    rng = random.Random(7)
    snapshots = [[rng.choice([0, 1, 2, 3, None]) for _ in range(3)] for _ in range(POSITIONS)]
    metrics = [
        (metric, CUTOFF)
        for metric in ("precision", "ap", "rr", "recall", "f1", "cg", "dcg", "ndcg", "err")
    ] + [("ndcg_d", CUTOFF)]
    start = time.perf_counter()
    for _ in range(repeats):
        score_keyword(snapshots, scale="graded", metrics=metrics, profile="trec")
    return (time.perf_counter() - start) / repeats


def batch_matches_single_keyword_path(grades: list[list[int]], relevo, sample: int) -> bool:
    """The batch path must give exactly (bit for bit) what score_keyword gives."""
    for q, row in enumerate(grades[:sample]):
        score = score_keyword(
            [[grade] for grade in row], scale="graded", metrics=RELEVO_METRICS, profile="trec"
        )
        if any(score.metrics[request] != relevo[request][q] for request in RELEVO_METRICS):
            return False
    return True


def disagreements(grades, relevo, trec) -> tuple[int, int, list[str]]:
    """(metric comparisons, RR comparisons, problems)."""
    problems: list[str] = []
    compared = rr_compared = 0
    for q, row in enumerate(grades):
        measures = trec[f"q{q}"]
        for request, measure in COMPARED.items():
            compared += 1
            ours = relevo[request][q]
            if ours is None or not math.isclose(
                ours, measures[measure], rel_tol=0, abs_tol=TOLERANCE
            ):
                problems.append(
                    f"q{q} {request[0]}@{request[1]}: relevo {ours} vs {measure} "
                    f"{measures[measure]}"
                )
        # trec_eval's recip_rank has no cutoff: compare only when the first relevant
        # result is within the top 10, where both must be 1/rank.
        if any(grade > 0 for grade in row[:CUTOFF]):
            rr_compared += 1
            ours = relevo[("rr", 10)][q]
            if ours is None or abs(ours - measures["recip_rank"]) > TOLERANCE:
                problems.append(f"q{q} rr@10: relevo {ours} vs recip_rank {measures['recip_rank']}")
    return compared, rr_compared, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keywords", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    grades = make_grades(args.keywords, args.seed)
    relevo_seconds, relevo = time_relevo(grades)
    trec_seconds, trec = time_pytrec_eval(grades)
    compared, rr_compared, problems = disagreements(grades, relevo, trec)
    single_seconds = time_single_keyword_path()
    sample = min(args.keywords, 2000)
    paths_match = batch_matches_single_keyword_path(grades, relevo, sample)

    print(f"keywords: {args.keywords} x {POSITIONS} graded results (0..3, one slot, all judged)")
    print(
        "relevo (batch, profile trec; P@10 AP@10 RR@10 nDCG@10 ERR@10 Success@10 Rprec bpref "
        "num_ret num_rel num_rel_ret IPrec at 11 recall levels 11pt-IPrec RBP(0.8)@10 and its "
        f"residual): {relevo_seconds:.3f} s"
        "  [grade lists -> per-keyword floats, everything included]"
    )
    print(
        "pytrec_eval (P_10 map_cut_10 recip_rank ndcg_cut_10 success_10 Rprec bpref num_ret "
        f"num_rel num_rel_ret iprec_at_recall 11pt_avg): {trec_seconds:.3f} s"
        "  [RelevanceEvaluator construction + evaluate; building the dicts not timed]"
    )
    print(f"ratio relevo / pytrec_eval: {relevo_seconds / trec_seconds:.2f}")
    print(
        f"agreement within {TOLERANCE:g}: "
        f"{'OK' if not problems else 'FAILED'} - {compared} values of the compared measures, "
        f"{rr_compared} RR values (trec_eval's recip_rank has no cutoff, so RR is compared "
        f"only where the first relevant result is in the top {CUTOFF}); "
        f"{len(problems)} disagreements"
    )
    for problem in problems[:10]:
        print("  " + problem)
    print(
        f"batch path == per-keyword path (exact) on the first {sample} keywords: "
        f"{'OK' if paths_match else 'FAILED'}"
    )
    print(
        f"single keyword (score_keyword, 20 snapshots x 3 slots x 10 metrics): "
        f"{single_seconds * 1e6:.0f} us per call"
    )
    return 1 if problems or not paths_match else 0


if __name__ == "__main__":
    sys.exit(main())
