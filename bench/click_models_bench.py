"""Click models at log scale: 10,000,000 simulated impressions folded into counts as they
stream, then the position-based model fitted to them.

Run: .venv/bin/python bench/click_models_bench.py [--events N] [--queries Q] [--seed S]

The log is simulated from a known position-based model (apps/engine/clicks.py): queries
drawn with Zipf-like frequencies, each with 30 candidate documents of random
attractiveness; every session shows 10 of them, the query's usual order shuffled a
little by noise so documents move between ranks, and clicks fall with examination
1 / rank^0.7. Events are made in batches of 100,000 with fresh strings, as a reader
parsing a file would hand them over; making them is not timed. Timed: the batches going
through ImpressionCounter.add_many ("accumulate"), turning the counter into arrays
("counts") and the PBM's EM ("fit"). Peak memory is the whole process's (VmHWM).

Target (the product's, for the whole import with reading the file on top): 10,000,000
events aggregated and fitted within 60 s, at most 500 MB.
"""

from __future__ import annotations

import argparse
import os
import time

import benchkit
import numpy as np

from apps.engine.clicks import MIN_IMPRESSIONS, ImpressionCounter, enough, pbm

CANDIDATES = 30
SHOWN = 10
BATCH_SESSIONS = 10_000
TARGET_SECONDS = 60.0
TARGET_BYTES = 500 * 2**20


def simulated_batches(events: int, queries: int, seed: int):
    """Batches of (query, doc, rank, clicked) events, and the model they come from."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, queries + 1)
    popularity /= popularity.sum()
    attractiveness = rng.uniform(0.02, 0.9, (queries, CANDIDATES))
    examination = 1.0 / np.arange(1, SHOWN + 1) ** 0.7
    ranks = list(range(1, SHOWN + 1))

    def batches():
        sessions_left = events // SHOWN
        while sessions_left:
            size = min(BATCH_SESSIONS, sessions_left)
            sessions_left -= size
            query = rng.choice(queries, size=size, p=popularity)
            noisy_order = np.arange(CANDIDATES) + rng.normal(0.0, 4.0, (size, CANDIDATES))
            shown = np.argsort(noisy_order, axis=1)[:, :SHOWN]
            chance = attractiveness[query[:, None], shown] * examination
            clicked = (rng.random(shown.shape) < chance).tolist()
            yield [
                (f"query {q}", f"doc-{q}-{d}", rank, click)
                for q, docs, clicks in zip(query.tolist(), shown.tolist(), clicked, strict=True)
                for d, rank, click in zip(docs, ranks, clicks, strict=True)
            ]

    return batches(), attractiveness, examination


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    print(benchkit.machine_speed())
    at_start = benchkit.high_water_mark(os.getpid())

    batches, attractiveness, examination = simulated_batches(
        options.events, options.queries, options.seed
    )
    counter = ImpressionCounter()
    accumulating = 0.0
    added = 0
    for batch in batches:
        started = time.perf_counter()
        counter.add_many(batch)
        accumulating += time.perf_counter() - started
        added += len(batch)
    benchkit.progress_note(f"{added:,} events folded; fitting")

    started = time.perf_counter()
    counts = counter.counts()
    counting = time.perf_counter() - started
    del counter  # as an import would, once the arrays hold everything
    started = time.perf_counter()
    fit = pbm(counts)
    fitting = time.perf_counter() - started
    peak = benchkit.high_water_mark(os.getpid())

    fitted_gamma = np.array([fit.examination[rank] for rank in range(1, SHOWN + 1)])
    solid = enough(fit.estimates, MIN_IMPRESSIONS)
    errors = [
        abs(estimate.value - attractiveness[int(query.split()[1]), int(doc.split("-")[2])])
        for (query, doc), estimate in solid.items()
    ]
    total = accumulating + counting + fitting
    print(
        f"{added:,} events, {options.queries:,} queries: {counts.rank.size:,} (query, doc, rank)"
        f" cells, {len(fit.estimates):,} pairs ({len(solid):,} with {MIN_IMPRESSIONS}+ impressions)"
    )
    print(f"accumulate (ImpressionCounter.add_many): {accumulating:6.2f} s")
    print(f"counts (counter to arrays):              {counting:6.2f} s")
    print(f"fit (PBM EM, {fit.iterations} iterations, converged {fit.converged}): {fitting:6.2f} s")
    verdict = benchkit.verdict(total <= TARGET_SECONDS)
    print(f"total {total:.2f} s (target {TARGET_SECONDS:.0f} s): {verdict}")
    print(
        f"peak memory {peak / 2**20:.0f} MB (target {TARGET_BYTES / 2**20:.0f} MB): "
        f"{benchkit.verdict(peak <= TARGET_BYTES)}; {at_start / 2**20:.0f} MB before any event"
    )
    print(
        f"recovery: examination within {np.abs(fitted_gamma - examination).max():.3f} of the "
        f"simulated; attractiveness of pairs with {MIN_IMPRESSIONS}+ impressions within "
        f"{np.median(errors):.3f} (median), {np.percentile(errors, 90):.3f} (90th percentile)"
    )


if __name__ == "__main__":
    main()
