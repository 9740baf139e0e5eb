"""Claim latency of the grader's queue with a pool of 10,000 and of 1,000,000 slots.

Run: .venv/bin/python bench/queue_bench.py [--small-slots N] [--big-slots N] [--claims N]

Two teams, each with one active evaluation (graded, 3 slots per result, 20 results per
keyword, nothing graded yet) and its own graders. Graders take turns: claim the next
result (`slot_claim_next`, what "Give feedback" does) then grade it, so the front of the
queue moves as it does in real use. Claims on the two pools are interleaved so both see
the same machine noise. Target: the median claim on the big pool at most 1.5x the small.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import benchkit
from benchkit import Shape, analyze, build_evaluation, percentile, progress_note, verdict

benchkit.use_database("relevo_bench_queue")

RATIO_TARGET = 1.5
GRADERS_PER_TEAM = 32
SNAPSHOTS = 20
STRATEGY = 3


def shape_for(slots: int) -> Shape:
    keywords = max(1, slots // (SNAPSHOTS * STRATEGY))
    return Shape(keywords=keywords, snapshots=SNAPSHOTS, strategy=STRATEGY, graded_share=0.0)


def build_pool(name: str, slots: int):
    """A team, its graders and one active evaluation whose every slot is free."""
    from apps.accounts.models import Membership
    from apps.accounts.services import member_add, team_create

    team = team_create(name=name, owner_email=f"owner@{name.lower()}.test")
    for number in range(GRADERS_PER_TEAM):
        member_add(team=team, email=f"grader{number}@{name.lower()}.test", role="evaluator")
    shape = shape_for(slots)
    empty = [[[None] * shape.strategy for _ in range(shape.snapshots)]] * shape.keywords
    evaluation = build_evaluation(team, f"{name} pool", shape, empty, [("ndcg", 10)])
    graders = list(
        Membership.objects.filter(team=team, role="evaluator").select_related("user", "team")
    )
    return evaluation, graders


def claim_and_grade(membership, rng: random.Random) -> float:
    """One turn of a grader; returns the claim's time in milliseconds."""
    from apps.judging.judgements import Giver, slot_judge
    from apps.judging.services import slot_claim_next

    started = time.perf_counter()
    slot = slot_claim_next(membership=membership)
    elapsed = (time.perf_counter() - started) * 1000.0
    if slot is None:
        raise SystemExit("the pool ran dry: use fewer --claims")
    slot_judge(slot_id=slot.id, giver=Giver.grader(membership.user), grade=rng.choice([0, 1, 2, 3]))
    return elapsed


def time_waiting_count(membership, runs: int = 21):
    """The dashboard's "results waiting for you" count: median milliseconds, and the count."""
    from apps.judging.services import results_waiting_for

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        waiting = results_waiting_for(membership)
        times.append((time.perf_counter() - started) * 1000.0)
    return statistics.median(times), waiting


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-slots", type=int, default=10_000)
    parser.add_argument("--big-slots", type=int, default=1_000_000)
    parser.add_argument("--claims", type=int, default=600, help="claims per pool")
    args = parser.parse_args()

    progress_note("creating the database")
    benchkit.setup_django()
    from unittest import mock

    progress_note(f"building pools of {args.small_slots} and {args.big_slots} slots")
    started = time.perf_counter()
    pools = {
        "small": build_pool("Small", args.small_slots),
        "big": build_pool("Big", args.big_slots),
    }
    analyze()
    build_s = time.perf_counter() - started

    rng = random.Random(7)
    claims: dict[str, list[float]] = {"small": [], "big": []}
    # The metrics pipeline is not what this measures: grades queue nothing here.
    with mock.patch("apps.scoring.pipeline.start_recompute"):
        for turn in range(args.claims):
            for name in ("small", "big"):
                _evaluation, graders = pools[name]
                claims[name].append(claim_and_grade(graders[turn % len(graders)], rng))

    small, big = (statistics.median(claims[n]) for n in ("small", "big"))
    ratio = big / small
    for name in ("small", "big"):
        evaluation, _graders = pools[name]
        times = claims[name]
        print(
            f"pool {name}: {evaluation.total_slots} slots; claim median "
            f"{statistics.median(times):.2f} ms, p95 {percentile(times, 0.95):.2f} ms, "
            f"p99 {percentile(times, 0.99):.2f} ms over {len(times)} claims"
        )
    for name in ("small", "big"):
        _evaluation, graders = pools[name]
        count_ms, waiting = time_waiting_count(graders[0])
        shown = f"{waiting.count}{' or more' if waiting.more else ''}"
        print(
            f"pool {name}: the dashboard's count of results waiting for a grader ({shown}): "
            f"median {count_ms:.2f} ms (not a target)"
        )
    print(f"data built in {build_s:.1f} s (not a target)")
    print(
        f"ratio big/small of the claim medians: {ratio:.2f}   target <= {RATIO_TARGET}   "
        f"{verdict(ratio <= RATIO_TARGET)}"
    )
    return 0 if ratio <= RATIO_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
