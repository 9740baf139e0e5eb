"""Judging a comparison in progress, simulated: how many judgements each order needs
before the verdict can no longer change (apps/engine/decisive.py).

A rival evaluation (the baseline) is fully graded. The candidate ("this" evaluation)
shares some documents with it, whose grades reuse copied at opening; its other results
wait in the queue. Grades are given one at a time in a chosen order, each the document's
true grade, until the stop rule says the verdict is decided. The simulation test and
bench/decisive_bench.py both run it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from apps.engine.decisive import Result, Side, Verdict, priorities, standing, verdict_of

Place = tuple[int, int]  # (keyword index, rank index) of one of the candidate's results


@dataclass(frozen=True)
class Pair:
    """Per keyword: the candidate's and the rival's documents in rank order, and every
    document's true grade."""

    candidate: list[list[str]]
    rival: list[list[str]]
    truth: list[dict[str, int]]


def random_pair(
    rng: random.Random, *, keywords: int = 50, results: int = 10, pool: int = 16, shared: int = 5
) -> Pair:
    """Random keywords: each has `pool` documents with true grades 0 to 3; both rankings
    show `results` of them, `shared` of which they have in common. The candidate orders
    its documents by their grade blurred by a noise drawn per keyword, so on some
    keywords it ranks better than the rival (which shows its documents in random order)
    and on others about as badly."""
    candidate, rival, truth = [], [], []
    for _ in range(keywords):
        grades = {f"d{n}": rng.choice((0, 0, 1, 1, 2, 3)) for n in range(pool)}
        documents = list(grades)
        rng.shuffle(documents)
        common = documents[:shared]
        theirs = common + documents[shared:results]
        ours = common + documents[results : 2 * results - shared]
        rng.shuffle(theirs)
        blur = rng.uniform(0.5, 6.0)
        ours.sort(key=lambda doc: -(grades[doc] + rng.gauss(0, blur)))
        candidate.append(ours)
        rival.append(theirs)
        truth.append(grades)
    return Pair(candidate, rival, truth)


def _keywords(pair: Pair, graded: set[Place]) -> list[tuple[list[Result], list[Result]]]:
    """The comparison's state: the rival all graded; the candidate's shared documents
    graded by reuse, its own ones graded when in `graded`."""
    keywords = []
    for index, (ours, theirs, grades) in enumerate(
        zip(pair.candidate, pair.rival, pair.truth, strict=True)
    ):
        reused = set(theirs)
        ours_now = [
            Result((grades[doc] if doc in reused or (index, rank) in graded else None,))
            for rank, doc in enumerate(ours)
        ]
        keywords.append((ours_now, [Result((grades[doc],)) for doc in theirs]))
    return keywords


def keyword_order(pair: Pair) -> list[Place]:
    """The queue without the option: keywords in order, results in rank order."""
    reused = [set(theirs) for theirs in pair.rival]
    return [
        (index, rank)
        for index, ours in enumerate(pair.candidate)
        for rank, doc in enumerate(ours)
        if doc not in reused[index]
    ]


def decision_order(pair: Pair, side: Side) -> list[Place]:
    """The queue with the option: the open results by priority, highest first (ties in
    keyword order), as apps/judging/decisive.py writes it."""
    widths = priorities(_keywords(pair, set()), this=side)
    return sorted(keyword_order(pair), key=lambda place: (-widths[place[0]][place[1]], place))


@dataclass(frozen=True)
class Run:
    judgements: int  # given before the stop rule said "decided"
    verdict: Verdict  # the verdict it decided
    final: Verdict  # the verdict with every grade known


def judge_until_decided(
    pair: Pair, order: Sequence[Place], side: Side, *, min_change: float = 0.0
) -> Run:
    """Give the true grades in `order` until `standing` decides; each result's share is
    swapped from its interval to its value, so a step costs one result, not a keyword."""
    count = len(pair.candidate)
    state = _keywords(pair, set())
    low = high = 0.0
    for our_results, their_results in state:
        our_low, our_high = side.value_range(our_results)
        their_low, their_high = side.value_range(their_results)
        low, high = low + our_low - their_high, high + our_high - their_low
    final = verdict_of(_mean_difference(pair, side), min_change)
    given = 0
    # Once every open result is given the sums hold one value (up to rounding): decided.
    while given < len(order) and (
        verdict_of(low / count, min_change) != verdict_of(high / count, min_change)
    ):
        index, rank = order[given]
        ours = pair.candidate[index]
        weight = side.weight(rank + 1, len(ours))
        gain_low, gain_high = side.gain_range(state[index][0][rank])
        value, _ = side.gain_range(Result((pair.truth[index][ours[rank]],)))
        low += weight * (value - gain_low)
        high -= weight * (gain_high - value)
        given += 1
    decided = standing(
        _keywords(pair, set(order[:given])), this=side, rival=side, min_change=min_change
    )
    assert decided.verdict is not None, "the running sums and standing() disagree"
    return Run(given, decided.verdict, final)


def _mean_difference(pair: Pair, side: Side) -> float:
    everything = standing(_keywords(pair, set(keyword_order(pair))), this=side, rival=side)
    assert everything.low == everything.high
    return everything.low


def moved_pair(
    rng: random.Random, *, keywords: int = 1000, results: int = 20, better: float = 0.3
) -> Pair:
    """The comparison bench's lists (bench/comparison_bench.py): the candidate's list is
    the rival's with four swaps and three documents replaced by new ones, which are a
    little better on average (each grade 0 to 3, raised by one with probability
    `better`)."""
    candidate, rival, truth = [], [], []
    for number in range(keywords):
        documents = [f"doc-{number}-{position}" for position in range(results)]
        grades = {doc: rng.choice((0, 0, 1, 1, 2, 3)) for doc in documents}
        moved = documents[:]
        for _ in range(4):
            i, j = rng.randrange(results), rng.randrange(results)
            moved[i], moved[j] = moved[j], moved[i]
        for position in rng.sample(range(results), 3):
            new = f"doc-{number}-new-{position}"
            grades[new] = min(3, rng.choice((0, 0, 1, 1, 2, 3)) + (rng.random() < better))
            moved[position] = new
        candidate.append(moved)
        rival.append(documents)
        truth.append(grades)
    return Pair(candidate, rival, truth)
