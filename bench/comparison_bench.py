"""Benchmark the comparison page on PostgreSQL: two evaluations of 10,000 keywords.

Run: .venv/bin/python bench/comparison_bench.py [--keywords N] [--metrics ndcg@10,...]
                                                [--runs N]

It drops and recreates its own database (relevo_bench_comparison), migrates it and loads
two evaluations of the same keywords (20 results each; B's lists are A's with some
documents moved and three replaced) with stored per-keyword metric values for every
(metric, k) (B a little better on average; 2% of keywords ungraded, without values), as
the pipeline leaves them. Then, as a logged-in lead through Django's test client:

1. GET /evaluations/compare/?e=A&e=B, the whole page, cold (the cache of statistics
   cleared before each request): five queries, 10,000 bootstrap resamples and 10,000
   sign flips per metric, Kendall's tau and RBO for every keyword, the first page of the
   keyword table rendered. One warm-up, then `runs` timed requests. Target: at most 2 s.
   Also the CPU time of this process per request, and the page sorted and paged again
   (warm: the statistics come from the cache).
2. Where the time goes: the database reads, the statistics and the rank correlation,
   each alone (the page runs the statistics in a second thread meanwhile).
3. The CSV export of every keyword and the API answer (not targets).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from datetime import UTC, datetime

import benchkit
from benchkit import analyze, copy_rows, progress_note, setup_django, verdict

# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database("relevo_bench_comparison")

PAGE_TARGET_S = 2.0
RESULTS = 20
UNGRADED_SHARE = 0.02
DEFAULT_METRICS = "ndcg@10,precision@10,ap@10,err@10,dcg@10"


def load_evaluation(team, name: str, metrics, texts: list[str], lists, values):
    """An evaluation with these keywords, result lists and metric values, in bulk."""
    from django.db import transaction

    from apps.evaluations.models import Evaluation, Keyword, Snapshot
    from apps.evaluations.services import evaluation_create
    from apps.scoring.models import KeywordMetric

    evaluation = evaluation_create(team=team, name=name, metrics=metrics, scale="graded")
    now = datetime.now(UTC)
    with transaction.atomic():
        keywords = Keyword.objects.bulk_create(
            (
                Keyword(evaluation=evaluation, text=text, position=number + 1)
                for number, text in enumerate(texts)
            ),
            batch_size=5000,
        )
        copy_rows(
            Snapshot,
            ["keyword", "position", "doc_id"],
            (
                (keyword.id, position, doc_id)
                for keyword, documents in zip(keywords, lists, strict=True)
                for position, doc_id in enumerate(documents, start=1)
            ),
        )
        copy_rows(
            KeywordMetric,
            ["keyword", "evaluation", "metric", "k", "value", "computed_at"],
            (
                (keyword.id, evaluation.id, metric, k, row[column], now)
                for keyword, row in zip(keywords, values, strict=True)
                for column, (metric, k) in enumerate(metrics)
            ),
        )
        Evaluation.objects.filter(id=evaluation.id).update(status="finished")
    return evaluation


def build_data(keywords: int, metrics: list[tuple[str, int]]):
    from apps.accounts.services import team_create

    rng = random.Random(6)
    team = team_create(name="Bench team", owner_email="lead@bench.test")
    texts = [f"query number {number}" for number in range(keywords)]
    first_lists, second_lists = [], []
    for number in range(keywords):
        documents = [f"doc-{number}-{position}" for position in range(RESULTS)]
        moved = documents[:]
        for _ in range(4):
            i, j = rng.randrange(RESULTS), rng.randrange(RESULTS)
            moved[i], moved[j] = moved[j], moved[i]
        for position in rng.sample(range(RESULTS), 3):
            moved[position] = f"doc-{number}-new-{position}"
        first_lists.append(documents)
        second_lists.append(moved)
    first_values: list[list[float] | list[None]] = []
    second_values: list[list[float] | list[None]] = []
    for _ in range(keywords):
        if rng.random() < UNGRADED_SHARE:
            first_values.append([None] * len(metrics))
            second_values.append([None] * len(metrics))
            continue
        base = [rng.random() for _ in metrics]
        first_values.append(base)
        second_values.append([min(1.0, max(0.0, v + rng.gauss(0.01, 0.1))) for v in base])
    first = load_evaluation(team, "Ranking A", metrics, texts, first_lists, first_values)
    second = load_evaluation(team, "Ranking B", metrics, texts, second_lists, second_values)
    return team, first, second


def lead_client():
    from django.test import Client

    from apps.accounts.models import User

    client = Client(SERVER_NAME="localhost")
    client.force_login(User.objects.get(email="lead@bench.test"))
    return client


def timed_get(client, url: str, **headers) -> tuple[float, object]:
    start = time.perf_counter()
    response = client.get(url, **headers)
    seconds = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code)
    return seconds, response


def breakdown(team, first, second, repeats: int = 3) -> dict[str, float]:
    """Where one comparison's time goes: each piece alone, the median of `repeats`.

    The page overlaps the statistics (a second thread) with reading and comparing the
    result lists, so its time is less than the sum of the pieces.
    """
    timings = [_pieces(team, first, second) for _ in range(repeats)]
    return {name: statistics.median(t[name] for t in timings) for name in timings[0]}


def _pieces(team, first, second) -> dict[str, float]:
    from apps.insights.comparison import ranking, selectors
    from apps.insights.comparison.selectors import (
        _common_keywords,
        _keyword_values,
        _result_lists,
        reported_metrics,
    )
    from apps.stats import paired as stats

    ids = [first.id, second.id]
    start = time.perf_counter()
    selectors.team_evaluations_in_order(team_id=team.id, ids=ids)
    reported = reported_metrics(ids)
    keyword_ids, _texts, _counts = _common_keywords(ids)
    wanted = {(ids.index(e), key) for e in ids for key in reported[e]}
    values = _keyword_values(ids, keyword_ids, wanted)
    lists = _result_lists(ids, keyword_ids)
    loaded = time.perf_counter()
    keys = reported[first.id]
    import numpy as np

    baseline = np.column_stack([values[(0, key)] for key in keys])
    candidate = np.column_stack([values[(1, key)] for key in keys])
    before_stats = time.perf_counter()
    stats.compare_paired(baseline, candidate)
    after_stats = time.perf_counter()
    ranking.rank_agreement([lists[k] for k in keyword_ids[0]], [lists[k] for k in keyword_ids[1]])
    after_ranking = time.perf_counter()
    return {
        "database reads (5 queries) and matching": loaded - start,
        "statistics (bootstrap + sign flips, all metrics)": after_stats - before_stats,
        "Kendall's tau and RBO, every keyword": after_ranking - after_stats,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keywords", type=int, default=10_000)
    parser.add_argument("--metrics", default=DEFAULT_METRICS)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()

    setup_django()
    from apps.evaluations.metric_list import parse_metric_list
    from apps.stats import paired as stats

    metrics = parse_metric_list(options.metrics)
    progress_note(f"loading two evaluations of {options.keywords} keywords")
    team, first, second = build_data(options.keywords, metrics)
    analyze()

    client = lead_client()
    url = f"/evaluations/compare/?e={first.id}&e={second.id}"
    progress_note("warm-up request")
    timed_get(client, url)
    from django.core.cache import cache

    times, cpu = [], []
    for run in range(options.runs):
        cache.clear()  # cold: the statistics are computed, not taken from the cache
        started = time.process_time()
        seconds, _response = timed_get(client, url)
        cpu.append(time.process_time() - started)
        times.append(seconds)
        progress_note(f"page run {run + 1}: {seconds:.3f} s")
    warm = [timed_get(client, f"{url}&sort=-ndcg%4010&page={n}")[0] for n in (1, 2, 3)]
    from apps.insights.comparison.selectors import comparison_build

    [pair] = comparison_build(team_id=team.id, evaluation_ids=[first.id, second.id]).pairs

    pieces = breakdown(team, first, second)
    csv_seconds, _ = timed_get(client, url.replace("compare/", "compare/export/"))
    api_client = api_client_for(team)
    api_seconds, _ = timed_get(
        api_client, f"/api/v1/comparisons/?evaluations={first.id},{second.id}&keywords=true"
    )

    median = statistics.median(times)
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"evaluations: 2 x {options.keywords} keywords x {RESULTS} results, "
        f"metrics {options.metrics} ({len(metrics)}), {UNGRADED_SHARE:.0%} of keywords "
        "without values"
    )
    print(
        f"statistics: {stats.SAMPLES} bootstrap resamples and {stats.PERMUTATIONS} sign "
        "flips per metric; Kendall's tau and RBO for every keyword"
    )
    print(
        f"comparison page (GET, logged-in lead, test client, PostgreSQL): median "
        f"{median:.3f} s, min {min(times):.3f} s, max {max(times):.3f} s over {len(times)} "
        f"runs   target <= {PAGE_TARGET_S:.0f} s   {verdict(median <= PAGE_TARGET_S)}"
    )
    print(
        f"  CPU of this process per page (all its threads; PostgreSQL's own not counted): "
        f"median {statistics.median(cpu):.3f} s"
    )
    print(
        f"the same page sorted or paged again (statistics from the cache): median "
        f"{statistics.median(warm):.3f} s"
    )
    print(f"machine load (1, 5, 15 min) after the runs: {load} on {os.cpu_count()} cores")
    print("each piece alone (the page overlaps the statistics with the list read):")
    for name, seconds in pieces.items():
        print(f"  {name}: {seconds:.3f} s")
    print(f"CSV of every keyword: {csv_seconds:.3f} s; API with keywords=true: {api_seconds:.3f} s")
    for metric in pair.metrics:
        r = metric.result
        print(
            f"  {metric.label}: {r.compared} keywords, difference {r.difference:+.4f} "
            f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}], p = {r.p_value:.4f}, "
            f"{r.wins}/{r.ties}/{r.losses}"
        )
    print(f"  mean Kendall's tau {pair.kendall_tau_mean:.3f}, mean RBO {pair.rbo_mean:.3f}")


def api_client_for(team):
    from django.test import Client

    from apps.accounts.api_tokens import api_token_create

    _token, text = api_token_create(team=team, name="bench")
    return Client(SERVER_NAME="localhost", headers={"Authorization": f"Bearer {text}"})


if __name__ == "__main__":
    main()
