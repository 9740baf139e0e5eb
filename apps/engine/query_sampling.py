"""Sampling a query set from how often each query was searched. Pure: no Django.

Given {query: searches}, a size and a seed, three designs:

- ``top``    the `size` most searched queries, ties broken by text. Not random: it says
             nothing about the queries left out, so no inclusion probability is given.
- ``bands``  a stratified random sample. The searches, from the least to the most
             searched query, are cut into bands equally wide on a log scale (1, 10, 100
             and 1,000 make three bands of powers of ten). The sample is shared equally
             between the bands; a band with fewer queries than its share gives them all
             and the others share the rest. Each band is a simple random sample, so a
             chosen query's inclusion probability is its band's sampled over its queries.
- ``pps``    probability proportional to searches, without replacement. A query whose
             searches alone make its chance 1 (size × searches ≥ the searches of all
             not yet taken) is certain and taken first; the rest are drawn by systematic
             sampling on a random order, which gives each its chance exactly:
             size left × searches / searches left.

Each chosen query carries its inclusion probability, so an estimate over the sample can
be weighted back to the whole log (Horvitz–Thompson: the sum of value / probability).

The population is put in text order before anything is drawn, and only
``random.Random(seed).random()`` is drawn from (the stream Python keeps the same across
versions), so a seed gives the same sample whatever order the frequencies came in.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import EngineError

METHODS = ("top", "bands", "pps")
DEFAULT_BANDS = 3
MAX_BANDS = 10
# Edges on a log scale come out a hair above a whole number (10.000000000000002).
EDGE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Picked:
    """A chosen query, its searches, its inclusion probability (None for `top`: not a
    random sample) and its band (1, the most searched; None unless `bands`)."""

    query: str
    searches: int
    probability: float | None
    band: int | None = None


@dataclass(frozen=True)
class Band:
    """A band of searches, `low` to `high` inclusive: its queries and their searches
    in the whole log, and how many of them were sampled."""

    number: int
    low: int
    high: int
    queries: int
    searches: int
    sampled: int


@dataclass(frozen=True)
class QuerySample:
    method: str
    size_asked: int
    seed: int
    population_queries: int
    population_searches: int
    picked: list[Picked]  # most searched first, then by text
    bands: list[Band] | None = None
    certain: int = 0  # pps: taken with probability 1

    @property
    def size(self) -> int:
        return len(self.picked)


Population = list[tuple[str, int]]


def sample_queries(
    frequencies: Mapping[str, int],
    *,
    method: str,
    size: int,
    seed: int,
    bands: int = DEFAULT_BANDS,
) -> QuerySample:
    """The sample `method` draws from `frequencies`; EngineError for bad input."""
    if method not in METHODS:
        raise EngineError(f"method must be one of {', '.join(METHODS)}")
    population = _population(frequencies)
    _whole(size, "size", low=1)
    _whole(seed, "seed", low=0)
    if method == "bands":
        _whole(bands, "bands", low=1, high=MAX_BANDS)
    total = sum(searches for _, searches in population)

    def sample(picked: Sequence[Picked], **more: Any) -> QuerySample:
        return QuerySample(
            method=method,
            size_asked=size,
            seed=seed,
            population_queries=len(population),
            population_searches=total,
            picked=sorted(picked, key=lambda one: (-one.searches, one.query)),
            **more,
        )

    if method == "top":
        return sample(top_queries(population, size))
    if method == "bands":
        picked, drawn = banded_sample(population, size, seed, bands)
        return sample(picked, bands=drawn)
    picked = pps_sample(population, size, seed)
    return sample(picked, certain=sum(1 for one in picked if one.probability == 1.0))


def _whole(value: Any, name: str, *, low: int, high: int | None = None) -> None:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or value < low
        or (high is not None and value > high)
    ):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise EngineError(f"{name} must be a whole number {bound}")


def _population(frequencies: Mapping[str, int]) -> Population:
    """The queries and their searches in text order; each searched at least once."""
    if not isinstance(frequencies, Mapping) or not frequencies:
        raise EngineError("there are no queries to sample from")
    for query, searches in frequencies.items():
        if not isinstance(query, str):
            raise EngineError("each query is a text")
        if not isinstance(searches, int) or isinstance(searches, bool) or searches < 1:
            raise EngineError(f"{query[:100]!r}: searches must be a whole number of at least 1")
    return sorted(frequencies.items())


# --- The most searched ----------------------------------------------------------------


def top_queries(population: Population, size: int) -> list[Picked]:
    ranked = sorted(population, key=lambda item: (-item[1], item[0]))
    return [Picked(query, searches, None) for query, searches in ranked[:size]]


# --- Bands of searches ----------------------------------------------------------------


def frequency_bands(low: int, high: int, count: int) -> list[tuple[int, int]]:
    """Ranges of searches, inclusive, from `low` to `high` in `count` bands equally wide on
    a log scale, the most searched first. A band no whole number falls in is left out,
    so all searches equal make one band."""
    ratio = high / low
    edges = [low * ratio ** (index / count) for index in range(count)]
    starts = [low] + [math.ceil(edge * (1 - EDGE_TOLERANCE)) for edge in edges[1:]]
    ranges = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < count else high
        if start <= end:
            ranges.append((start, end))
    return ranges[::-1]


def equal_allocation(populations: Sequence[int], size: int) -> list[int]:
    """`size` shared as equally as the bands allow. A band with no more queries than its
    share gives them all and the others share what it could not take; what does not
    divide goes one each to the bands with the most queries (the lower-numbered first)."""
    allocation = [0] * len(populations)
    open_bands = [index for index, queries in enumerate(populations) if queries > 0]
    left = min(size, sum(populations))
    while open_bands and left:
        share = left // len(open_bands)
        small = [index for index in open_bands if populations[index] <= share]
        if small:
            for index in small:
                allocation[index] = populations[index]
                left -= populations[index]
            open_bands = [index for index in open_bands if index not in small]
            continue
        for index in open_bands:
            allocation[index] = share
        left -= share * len(open_bands)
        for index in sorted(open_bands, key=lambda index: (-populations[index], index))[:left]:
            allocation[index] += 1
        left = 0
    return allocation


def banded_sample(
    population: Population, size: int, seed: int, count: int
) -> tuple[list[Picked], list[Band]]:
    """A simple random sample in each band of searches, the bands given equal shares."""
    searches = [searched for _, searched in population]
    ranges = frequency_bands(min(searches), max(searches), count)
    starts = [low for low, _ in ranges[::-1]]  # ascending, for bisect
    members: list[Population] = [[] for _ in ranges]
    for query, searched in population:
        members[len(ranges) - bisect_right(starts, searched)].append((query, searched))
    allocation = equal_allocation([len(band) for band in members], size)
    draw = random.Random(seed)
    picked: list[Picked] = []
    bands: list[Band] = []
    for number, ((low, high), band, taken) in enumerate(
        zip(ranges, members, allocation, strict=True), 1
    ):
        keys = [draw.random() for _ in band]
        chosen = sorted(range(len(band)), key=keys.__getitem__)[:taken]
        probability = taken / len(band) if band else 0.0
        picked += [Picked(*band[index], probability, number) for index in chosen]
        bands.append(
            Band(
                number=number,
                low=low,
                high=high,
                queries=len(band),
                searches=sum(searched for _, searched in band),
                sampled=taken,
            )
        )
    return picked, bands


# --- Probability proportional to searches ------------------------------------------------


def pps_sample(population: Population, size: int, seed: int) -> list[Picked]:
    """Certain queries first, then systematic sampling on a random order of the rest."""
    ranked = sorted(population, key=lambda item: (-item[1], item[0]))
    wanted = min(size, len(ranked))
    left = sum(searches for _, searches in ranked)
    certain: list[Picked] = []
    # Taking the most searched one at a time finds the same certain queries as taking
    # every query over the line at once and drawing the line again.
    while len(certain) < wanted and ranked[len(certain)][1] * (wanted - len(certain)) >= left:
        query, searches = ranked[len(certain)]
        certain.append(Picked(query, searches, 1.0))
        left -= searches
    rest = sorted(ranked[len(certain) :])
    return certain + _systematic(rest, wanted - len(certain), left, random.Random(seed))


def _systematic(rest: Population, size: int, total: int, draw: random.Random) -> list[Picked]:
    """`size` of `rest` (whose searches add up to `total`), each with probability
    size × searches / total (below 1), by systematic sampling on a random order.

    Scaled by `total`, query j covers [size × before, size × (before + searches)) of a
    line of size × total, and the points start, start + total, ... pick; a query covers
    at most `total`, so at most one point falls in it, and a whole-number start makes
    every probability exact."""
    if size == 0:
        return []
    keys = [draw.random() for _ in rest]
    order = sorted(range(len(rest)), key=keys.__getitem__)
    point = int(draw.random() * total)
    picked: list[Picked] = []
    before = 0
    for index in order:
        query, searches = rest[index]
        before += searches
        if point < size * before:
            picked.append(Picked(query, searches, size * searches / total))
            point += total
    return picked
