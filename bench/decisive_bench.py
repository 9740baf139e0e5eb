"""How many judgements "judge what decides" saves.

Run: .venv/bin/python bench/decisive_bench.py [--seeds N]

Pure Python, no database: the queue's two orders are simulated on the lists of
apps/engine/tests/decisive_simulation.py. A rival evaluation is fully graded; the candidate's
documents the rival has are graded by reuse, its other results wait in the queue. Each
order gives the true grades one at a time until no remaining grade can change the
verdict on the metric (apps/engine/decisive.py), and the script prints how many
judgements each needed, and the share the decision order saved against keyword order
(keywords in order, results in rank order). Two sets of lists:

1. random: 50 keywords, two lists of 10 with 5 documents in common, random true grades
   (the simulation test's data), over `seeds` seeds;
2. comparison bench: 1,000 keywords of 20 results, the candidate's list the rival's with
   four swaps and three new, slightly better documents (bench/comparison_bench.py's
   lists), over `seeds` seeds.

Every run checks that the verdict decided is the verdict with every grade known.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import benchkit  # noqa: F401  (puts the repository on the path)

from apps.engine.decisive import side_of
from apps.engine.tests.decisive_simulation import (
    decision_order,
    judge_until_decided,
    keyword_order,
    moved_pair,
    random_pair,
)

METRICS = (("dcg", 10, "searchtweak"), ("precision", 10, "trec"), ("rbp_80", 0, "searchtweak"))


def compare(name: str, make_pair, seeds: int) -> None:
    print(f"\n{name}")
    print(f"{'metric':<14}{'open':>7}{'keyword order':>15}{'decision order':>16}{'saved':>8}")
    for metric, k, profile in METRICS:
        side = side_of(metric=metric, k=k, scale="graded", profile=profile)
        by_keyword, by_decision, open_results = [], [], []
        for seed in range(seeds):
            pair = make_pair(random.Random(seed))
            in_keyword_order = judge_until_decided(pair, keyword_order(pair), side)
            decided = judge_until_decided(pair, decision_order(pair, side), side)
            for run in (in_keyword_order, decided):
                assert run.verdict == run.final, (metric, seed, run)
            by_keyword.append(in_keyword_order.judgements)
            by_decision.append(decided.judgements)
            open_results.append(len(keyword_order(pair)))
        keyword_mean, decision_mean = statistics.mean(by_keyword), statistics.mean(by_decision)
        label = f"{metric}@{k}" if k else metric
        print(
            f"{label:<14}{statistics.mean(open_results):>7.0f}{keyword_mean:>15.1f}"
            f"{decision_mean:>16.1f}{1 - decision_mean / keyword_mean:>8.0%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    seeds = parser.parse_args().seeds
    started = time.perf_counter()
    compare("Random lists: 50 keywords x 10 results, 5 shared", random_pair, seeds)
    compare(
        "Comparison bench lists: 1,000 keywords x 20 results, 3 new per keyword",
        moved_pair,
        seeds,
    )
    print(f"\n{seeds} seeds each, {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
