"""Sampling queries by how often they were searched (apps/engine/query_sampling.py): the
most searched exactly; bands that cover the population, with every query of a band as
likely as the others; probability proportional to searches whose inclusion frequencies
over many seeds match the probabilities it states; the same seed, the same sample; and
bad input refused."""

import itertools
import math

import pytest

from apps.engine import EngineError
from apps.engine.query_sampling import (
    Band,
    equal_allocation,
    frequency_bands,
    sample_queries,
)

SEEDS = range(4000)


def zipf(count: int, top: int = 1000) -> dict[str, int]:
    """`count` queries searched top, top / 2, top / 3, ... times (at least once)."""
    return {f"q{rank:03d}": max(1, top // rank) for rank in range(1, count + 1)}


def inclusion_counts(frequencies, **asked) -> tuple[dict[str, int], dict[str, float]]:
    """How often each query was picked over SEEDS, and the probability stated for it."""
    counts = dict.fromkeys(frequencies, 0)
    stated: dict[str, float] = {}
    for seed in SEEDS:
        for one in sample_queries(frequencies, seed=seed, **asked).picked:
            counts[one.query] += 1
            assert stated.setdefault(one.query, one.probability) == one.probability
    return counts, stated


def assert_frequencies_match(counts, probabilities):
    """Each query picked in its stated share of the seeds, within four standard errors."""
    for query, probability in probabilities.items():
        error = math.sqrt(probability * (1 - probability) / len(SEEDS))
        assert abs(counts[query] / len(SEEDS) - probability) <= 4 * error + 1e-12, query


# --- The most searched ------------------------------------------------------------------


def test_top_takes_the_most_searched_with_ties_broken_by_text():
    frequencies = {"socks": 5, "boots": 9, "hats": 5, "caps": 5, "shoes": 12}

    sample = sample_queries(frequencies, method="top", size=3, seed=1)

    assert [(one.query, one.searches) for one in sample.picked] == [
        ("shoes", 12),
        ("boots", 9),
        ("caps", 5),
    ]
    assert [one.probability for one in sample.picked] == [None, None, None]
    assert (sample.population_queries, sample.population_searches) == (5, 36)


def test_the_same_seed_draws_the_same_sample_whatever_order_the_queries_came_in():
    frequencies = zipf(300)
    backwards = dict(reversed(list(frequencies.items())))

    for method in ("bands", "pps"):
        first = sample_queries(frequencies, method=method, size=40, seed=7)
        again = sample_queries(backwards, method=method, size=40, seed=7)
        other = sample_queries(frequencies, method=method, size=40, seed=8)
        assert first == again
        assert first.picked != other.picked


@pytest.mark.parametrize("method", ["top", "bands", "pps"])
def test_a_size_larger_than_the_population_takes_every_query(method):
    frequencies = {"a": 1, "b": 30, "c": 700}

    sample = sample_queries(frequencies, method=method, size=10, seed=3)

    assert sorted(one.query for one in sample.picked) == ["a", "b", "c"]
    assert (sample.size_asked, sample.size) == (10, 3)
    if method != "top":
        assert {one.probability for one in sample.picked} == {1.0}


# --- Bands ------------------------------------------------------------------------------


def test_bands_are_equally_wide_on_a_log_scale_and_cover_every_number_of_searches():
    assert frequency_bands(1, 1000, 3) == [(100, 1000), (10, 99), (1, 9)]
    assert frequency_bands(2, 2, 3) == [(2, 2)]
    for low, high, count in [(1, 2, 3), (1, 7, 10), (3, 123_457, 4), (1, 10**9, 10)]:
        ranges = frequency_bands(low, high, count)[::-1]
        assert ranges[0][0] == low and ranges[-1][1] == high
        assert all(after[0] == before[1] + 1 for before, after in itertools.pairwise(ranges))
        assert len(ranges) <= count


def test_bands_hold_every_query_once_and_record_their_ranges_and_counts():
    frequencies = {f"q{n}": n for n in range(1, 1001)}

    sample = sample_queries(frequencies, method="bands", size=30, seed=5, bands=3)

    # The tail band has only 9 queries: all of them, and the head and torso share the rest.
    assert sample.bands == [
        Band(1, 100, 1000, queries=901, searches=sum(range(100, 1001)), sampled=11),
        Band(2, 10, 99, queries=90, searches=sum(range(10, 100)), sampled=10),
        Band(3, 1, 9, queries=9, searches=45, sampled=9),
    ]
    assert sum(band.queries for band in sample.bands) == len(frequencies)
    assert sample.size == 30
    for one in sample.picked:
        band = sample.bands[one.band - 1]
        assert band.low <= one.searches <= band.high
        assert one.probability == band.sampled / band.queries


def test_equal_allocation_gives_small_bands_all_they_have_and_shares_the_rest():
    assert equal_allocation([100, 100, 100], 30) == [10, 10, 10]
    assert equal_allocation([100, 4, 50], 30) == [13, 4, 13]
    assert equal_allocation([100, 50, 4], 31) == [14, 13, 4]
    assert equal_allocation([2, 0, 3], 10) == [2, 0, 3]
    assert equal_allocation([5, 6, 7], 2) == [0, 1, 1]


def test_every_query_of_a_band_is_as_likely_as_the_others():
    frequencies = zipf(60)
    bands = sample_queries(frequencies, method="bands", size=12, seed=0, bands=3).bands
    assert all(band.sampled for band in bands)

    counts, stated = inclusion_counts(frequencies, method="bands", size=12, bands=3)

    # Every seed draws the same bands; in each, the sampled share of its queries.
    share = {
        query: next(b.sampled / b.queries for b in bands if b.low <= searches <= b.high)
        for query, searches in frequencies.items()
    }
    assert stated == share
    assert_frequencies_match(counts, share)


# --- Probability proportional to searches --------------------------------------------------


def test_pps_picks_each_query_as_often_as_the_probability_it_states():
    frequencies = {"a": 400, "b": 150, "c": 100, "d": 100, "e": 60, "f": 40, "g": 30}
    frequencies |= {f"tail{n}": n for n in range(1, 21)}  # 1,090 searches in all

    counts, stated = inclusion_counts(frequencies, method="pps", size=4)

    # "a" alone is certain (4 × 400 ≥ 1,090); then 3 of the rest, 690 searches.
    assert stated["a"] == 1.0 and counts["a"] == len(SEEDS)
    assert stated["b"] == pytest.approx(3 * 150 / 690)
    assert stated["tail1"] == pytest.approx(3 * 1 / 690)
    assert set(stated) == set(frequencies)  # every query picked by some seed
    assert_frequencies_match(counts, stated)


def test_pps_takes_exactly_the_size_asked_and_weighs_back_to_the_searches_exactly():
    frequencies = zipf(500, top=100_000)
    total = sum(frequencies.values())

    for seed in range(20):
        sample = sample_queries(frequencies, method="pps", size=50, seed=seed)
        assert sample.size == 50
        assert len({one.query for one in sample.picked}) == 50
        # Searches over probability is the same for every query not certain, so the
        # Horvitz-Thompson estimate of all searches is exact whatever the seed.
        estimate = sum(one.searches / one.probability for one in sample.picked)
        assert estimate == pytest.approx(total, rel=1e-9)
    # The heaviest queries are certain, whatever the seed, and counted in the sample.
    assert sample.certain > 0
    assert [one.query for one in sample.picked[: sample.certain]] == [
        f"q{rank:03d}" for rank in range(1, sample.certain + 1)
    ]
    assert {one.probability for one in sample.picked[: sample.certain]} == {1.0}


def test_a_horvitz_thompson_estimate_from_bands_is_unbiased_over_seeds():
    frequencies = zipf(200, top=5000)
    truth = sum(frequencies.values())

    estimates = [
        sum(one.searches / one.probability for one in sample.picked)
        for sample in (
            sample_queries(frequencies, method="bands", size=20, seed=seed, bands=4)
            for seed in range(400)
        )
    ]

    assert sum(estimates) / len(estimates) == pytest.approx(truth, rel=0.03)


# --- Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frequencies", "asked", "message"),
    [
        ({"a": 1}, {"method": "top", "size": 0, "seed": 1}, "size must be a whole number"),
        ({"a": 1}, {"method": "pps", "size": True, "seed": 1}, "size must be a whole number"),
        ({"a": 1}, {"method": "pps", "size": 2.5, "seed": 1}, "size must be a whole number"),
        ({"a": 1}, {"method": "pps", "size": 1, "seed": -1}, "seed must be a whole number"),
        ({"a": 1}, {"method": "bands", "size": 1, "seed": 1, "bands": 0}, "bands must be"),
        ({"a": 1}, {"method": "bands", "size": 1, "seed": 1, "bands": 11}, "from 1 to 10"),
        ({"a": 1}, {"method": "random", "size": 1, "seed": 1}, "method must be one of"),
        ({}, {"method": "top", "size": 1, "seed": 1}, "no queries to sample"),
        ({"a": 0}, {"method": "pps", "size": 1, "seed": 1}, "at least 1"),
        ({"a": "3"}, {"method": "pps", "size": 1, "seed": 1}, "at least 1"),
        ({3: 3}, {"method": "pps", "size": 1, "seed": 1}, "each query is a text"),
    ],
)
def test_bad_input_is_refused_with_an_engine_error(frequencies, asked, message):
    with pytest.raises(EngineError, match=message):
        sample_queries(frequencies, **asked)
