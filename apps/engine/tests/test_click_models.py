"""Click models (apps/engine/clicks.py): CTR and COEC on a hand-worked log; the
position-based model and the DBN fitted to clicks simulated from known parameters
recover the relevance order (and PBM its examination curve); the counters fold events
into counts and refuse what the models cannot read."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from apps.engine import EngineError
from apps.engine.clicks import (
    MAX_RANK,
    MAX_SESSION_RANKS,
    Estimate,
    ImpressionCounter,
    ImpressionCounts,
    ResultLists,
    SessionCounter,
    SessionPatterns,
    coec,
    ctr,
    dbn,
    enough,
    pbm,
)

QUERIES, DOCS = 50, 10


def small_log() -> ImpressionCounts:
    counter = ImpressionCounter()
    for query, doc, rank, impressions, clicks in (
        ("shoes", "A", 1, 10, 4),
        ("shoes", "A", 2, 10, 2),
        ("shoes", "B", 1, 10, 2),
        ("shoes", "B", 2, 10, 1),
        ("socks", "C", 1, 20, 6),
        ("socks", "D", 2, 20, 1),
    ):
        counter.add(query, doc, rank, clicked=True, count=clicks)
        counter.add(query, doc, rank, clicked=False, count=impressions - clicks)
    return counter.counts()


def test_ctr_is_clicks_over_impressions_at_all_ranks_together():
    assert ctr(small_log()) == {
        ("shoes", "A"): Estimate(0.3, 20),  # (4 + 2) / 20
        ("shoes", "B"): Estimate(0.15, 20),  # (2 + 1) / 20
        ("socks", "C"): Estimate(0.3, 20),  # 6 / 20
        ("socks", "D"): Estimate(0.05, 20),  # 1 / 20
    }


def test_coec_divides_clicks_by_the_clicks_each_rank_gets_on_average():
    # Rank 1 over the whole log: 10 + 10 + 20 = 40 impressions, 4 + 2 + 6 = 12 clicks,
    # a rate of 0.3. Rank 2: 10 + 10 + 20 = 40 impressions, 2 + 1 + 1 = 4 clicks, 0.1.
    # A: 6 clicks / (10 x 0.3 + 10 x 0.1 = 4 expected) = 1.5
    # B: 3 clicks / (10 x 0.3 + 10 x 0.1 = 4 expected) = 0.75
    # C: 6 clicks / (20 x 0.3 = 6 expected) = 1.0
    # D: 1 click / (20 x 0.1 = 2 expected) = 0.5
    # A and C have the same CTR, but half of A's impressions were at the weaker rank.
    estimates = coec(small_log())

    assert {pair: estimate.value for pair, estimate in estimates.items()} == pytest.approx(
        {("shoes", "A"): 1.5, ("shoes", "B"): 0.75, ("socks", "C"): 1.0, ("socks", "D"): 0.5}
    )
    assert {estimate.impressions for estimate in estimates.values()} == {20}
    assert all(type(estimate.impressions) is int for estimate in estimates.values())


def test_enough_keeps_only_estimates_with_the_minimum_of_impressions():
    estimates = {("q", "thin"): Estimate(1.0, 3), ("q", "solid"): Estimate(0.4, 10)}

    assert enough(estimates) == {("q", "solid"): Estimate(0.4, 10)}
    assert enough(estimates, minimum=3) == estimates


@pytest.mark.parametrize("model", [ctr, coec, lambda counts, **kept: pbm(counts, **kept).estimates])
def test_a_models_minimum_keeps_what_enough_would_keep(model):
    counts = small_log()

    for minimum in (0, 10, 25, 1_000):
        kept = model(counts, minimum=minimum)
        assert kept == enough(model(counts), minimum)


def test_one_event_at_a_time_and_in_batches_give_the_same_counts():
    events = [("q", "a", 1, True), ("q", "a", 1, False), ("q", "b", 2, False), ("r", "a", 1, 1)]
    one_by_one, batched = ImpressionCounter(), ImpressionCounter()
    for event in events:
        one_by_one.add(*event)
    batched.add_many(iter(events[:2]))
    batched.add_many(events[2:])

    for counts in (one_by_one.counts(), batched.counts()):
        rows = {
            (counts.queries[q], counts.docs[d], r, shown, clicked)
            for q, d, r, shown, clicked in zip(
                counts.query,
                counts.doc,
                counts.rank,
                counts.impressions,
                counts.clicks,
                strict=True,
            )
        }
        assert rows == {("q", "a", 1, 2, 1), ("q", "b", 2, 1, 0), ("r", "a", 1, 1, 1)}
        assert counts.docs == ["a", "b"]  # a doc shared by two queries is one name


def test_ranks_are_whole_numbers_from_one_whether_added_alone_or_in_a_batch():
    with pytest.raises(EngineError, match="not a whole number from 1"):
        ImpressionCounter().add("q", "a", 0, clicked=False)
    with pytest.raises(EngineError, match="not a whole number from 1"):
        ImpressionCounter().add("q", "a", MAX_RANK + 1, clicked=False)
    batched = ImpressionCounter()
    with pytest.raises(EngineError, match="not a whole number from 1"):
        batched.add_many([("q", "a", 1, False), ("q", "b", 0, False), ("q", "c", 1, False)])
    with pytest.raises(EngineError, match="whole-number ranks from 1"):
        batched.add_many([("q", "d", 2.0, False)])  # type: ignore[list-item]
    # The events before the refused one stay counted.
    assert coec(batched.counts()) == {("q", "a"): Estimate(0.0, 1)}


def test_counts_refuse_more_clicks_than_impressions():
    with pytest.raises(EngineError, match="between 0 and the impressions"):
        ImpressionCounts(
            queries=["q"],
            docs=["a"],
            query=np.array([0]),
            doc=np.array([0]),
            rank=np.array([1]),
            impressions=np.array([2]),
            clicks=np.array([3]),
        )


def test_empty_logs_give_no_estimates():
    empty = ImpressionCounter().counts()

    assert ctr(empty) == coec(empty) == pbm(empty).estimates == {}
    assert dbn(SessionCounter().patterns()).estimates == {}


# --- simulations ---------------------------------------------------------------------


def mean_tau(truth: np.ndarray, estimates, values=lambda estimate: estimate.value) -> float:
    """Mean over queries of Kendall's tau between the true and the fitted order."""
    taus = []
    for query in range(QUERIES):
        fitted = [values(estimates[(f"q{query}", f"d{doc}")]) for doc in range(DOCS)]
        taus.append(kendalltau(truth[query], fitted).statistic)
    return float(np.mean(taus))


def shuffled_lists(rng: np.random.Generator, sessions: int) -> tuple[np.ndarray, np.ndarray]:
    """Each session's query and its 10 docs in a fresh random order, so every doc is
    seen at every rank."""
    query = rng.integers(0, QUERIES, sessions)
    return query, np.argsort(rng.random((sessions, DOCS)), axis=1)


def test_pbm_recovers_the_relevance_order_and_the_examination_curve():
    rng = np.random.default_rng(20150101)
    examination = np.array([1.0, 0.85, 0.7, 0.6, 0.5, 0.42, 0.36, 0.3, 0.25, 0.2])
    attractiveness = rng.uniform(0.05, 0.95, (QUERIES, DOCS))
    # 100,000 sessions x 10 ranks = 1,000,000 simulated impressions.
    query, order = shuffled_lists(rng, 100_000)
    clicked = rng.random(order.shape) < attractiveness[query[:, None], order] * examination
    counter = ImpressionCounter()
    counter.add_many(
        zip(
            [f"q{each}" for each in np.repeat(query, DOCS).tolist()],
            [f"d{each}" for each in order.ravel().tolist()],
            np.tile(np.arange(1, DOCS + 1), query.size).tolist(),
            clicked.ravel().tolist(),
            strict=True,
        )
    )

    fit = pbm(counter.counts())

    assert fit.converged
    assert mean_tau(attractiveness, fit.estimates) >= 0.8
    fitted = np.array([fit.examination[rank] for rank in range(1, DOCS + 1)])
    assert np.abs(fitted - examination).max() < 0.03
    assert all(0.0 <= estimate.value <= 1.0 for estimate in fit.estimates.values())
    assert sum(estimate.impressions for estimate in fit.estimates.values()) == 1_000_000


def simulate_dbn(rng, attractive, satisfying, continuation, sessions):
    query, order = shuffled_lists(rng, sessions)
    a, s = attractive[query[:, None], order], satisfying[query[:, None], order]
    examining = np.ones(sessions, dtype=bool)
    clicks = np.zeros(order.shape, dtype=bool)
    for rank in range(DOCS):
        clicks[:, rank] = examining & (rng.random(sessions) < a[:, rank])
        satisfied = clicks[:, rank] & (rng.random(sessions) < s[:, rank])
        examining &= ~satisfied & (rng.random(sessions) < continuation)
    counter = SessionCounter()
    for each, shown, clicked in zip(query.tolist(), order.tolist(), clicks.tolist(), strict=True):
        counter.add(f"q{each}", [f"d{doc}" for doc in shown], clicked)
    return counter.patterns()


def test_dbn_recovers_the_relevance_order_and_the_continuation():
    rng = np.random.default_rng(20090420)
    attractive = rng.uniform(0.1, 0.9, (QUERIES, DOCS))
    satisfying = rng.uniform(0.1, 0.9, (QUERIES, DOCS))
    # 100,000 sessions of 10 ranks: 1,000,000 simulated impressions.
    sessions = simulate_dbn(rng, attractive, satisfying, continuation=0.9, sessions=100_000)

    fit = dbn(sessions)

    assert fit.converged
    assert mean_tau(attractive * satisfying, fit.estimates) >= 0.8
    assert fit.continuation == pytest.approx(0.9, abs=0.02)
    for pair, estimate in fit.estimates.items():
        assert estimate.value == pytest.approx(fit.attractiveness[pair] * fit.satisfaction[pair])
        assert 0.0 <= estimate.value <= 1.0
    assert sum(estimate.impressions for estimate in fit.estimates.values()) == 1_000_000


def test_dbn_gives_a_never_clicked_document_no_relevance():
    counter = SessionCounter()
    counter.add("q", ["a", "b"], [1, 0], count=30)
    counter.add("q", ["b", "a"], [0, 1], count=20)

    fit = dbn(counter.patterns(), continuation=1.0)

    assert fit.estimates[("q", "b")] == Estimate(0.0, 50)
    assert fit.satisfaction[("q", "b")] == 0.0
    assert fit.estimates[("q", "a")].impressions == 50
    assert fit.continuation == 1.0


def test_sessions_repeat_into_one_pattern_with_its_count():
    counter = SessionCounter()
    counter.add("q", ["a", "b", "c"], [0, 1, 0])
    counter.add("q", ["a", "b", "c"], [False, True, False], count=4)
    counter.add("q", ["a"], [1])

    patterns = counter.patterns()

    assert patterns.count.tolist() == [5, 1]
    assert patterns.doc.tolist() == [[0, 1, 2], [0, -1, -1]]
    assert patterns.clicks.tolist() == [[False, True, False], [True, False, False]]


@pytest.mark.parametrize(
    ("docs", "clicks", "message"),
    [
        (["a", "b"], [1], "one click flag per document"),
        ([f"d{rank}" for rank in range(MAX_SESSION_RANKS + 1)], [0] * 21, "between 1 and 20"),
        ([], [], "between 1 and 20"),
        (["a", "a"], [0, 0], "each document once"),
        (["a", "b"], [0, 2], "0 or 1"),
    ],
)
def test_sessions_the_dbn_cannot_read_are_refused(docs, clicks, message):
    with pytest.raises(EngineError, match=message):
        SessionCounter().add("q", docs, clicks)


# --- result lists held flat ----------------------------------------------------------


def random_lists(rng: np.random.Generator, count: int) -> ResultLists:
    """Lists of 0 to 25 of 40 documents for 7 queries, a third of them clicked; short
    lists from few documents repeat, as sessions do."""
    query, starts, doc, clicked = [], [0], [], []
    for _ in range(count):
        length = int(rng.choice([0, 1, 2, 3, 10, 25]))
        query.append(int(rng.integers(7)))
        doc += rng.choice(40, size=length, replace=False).tolist()
        clicked += (rng.random(length) < 0.3).tolist()
        starts.append(len(doc))
    return ResultLists(
        queries=[f"q{each}" for each in range(7)],
        docs=[f"d{each}" for each in range(40)],
        query=np.array(query, dtype=np.int32),
        starts=np.array(starts),
        doc=np.array(doc, dtype=np.int32),
        clicked=np.array(clicked, dtype=np.uint8),
    )


def count_rows(counts: ImpressionCounts) -> list[tuple]:
    return sorted(
        zip(
            [counts.queries[each] for each in counts.query.tolist()],
            [counts.docs[each] for each in counts.doc.tolist()],
            counts.rank.tolist(),
            counts.impressions.tolist(),
            counts.clicks.tolist(),
            strict=True,
        )
    )


def test_lists_fold_into_the_counts_and_sessions_their_events_make_one_by_one():
    lists = random_lists(np.random.default_rng(3), 3000)
    by_event, by_session = ImpressionCounter(), SessionCounter()
    for number, query in enumerate(lists.query.tolist()):
        start, end = int(lists.starts[number]), int(lists.starts[number + 1])
        shown = [lists.docs[each] for each in lists.doc[start:end].tolist()]
        flags = lists.clicked[start:end].tolist()
        for rank, (doc, clicked) in enumerate(zip(shown, flags, strict=True), start=1):
            by_event.add(lists.queries[query], doc, rank, clicked)
        if shown:
            top = slice(0, MAX_SESSION_RANKS)
            by_session.add(lists.queries[query], shown[top], flags[top])
    at_once = SessionCounter()
    at_once.add_lists(lists)

    assert count_rows(ImpressionCounts.of_lists(lists)) == count_rows(by_event.counts())
    one_by_one, together = by_session.patterns(), at_once.patterns()
    assert together.count.sum() == 3000 - int((lists.lengths == 0).sum())
    assert together.count.size < together.count.sum()  # repeated sessions were merged
    assert pattern_rows(together) == pattern_rows(one_by_one)  # first seen first


def pattern_rows(patterns: SessionPatterns) -> list[tuple]:
    return [
        (
            patterns.queries[query],
            [patterns.docs[each] for each in docs if each >= 0],
            clicks[: (docs >= 0).sum()].tolist(),
            count,
        )
        for query, docs, clicks, count in zip(
            patterns.query.tolist(),
            patterns.doc,
            patterns.clicks,
            patterns.count.tolist(),
            strict=True,
        )
    ]


class ManyNames:
    """A name list too long to hold, long enough that (query, doc, rank) cannot be
    packed into one 64-bit number."""

    def __init__(self, prefix: str, size: int) -> None:
        self.prefix, self.size = prefix, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> str:
        return f"{self.prefix}{index}"


def test_lists_among_more_names_than_one_number_can_pack_still_count_each_cell():
    lists = ResultLists(
        queries=ManyNames("q", 2**22),
        docs=ManyNames("d", 2**40),
        query=np.array([2**22 - 1, 5, 2**22 - 1]),
        starts=np.array([0, 2, 3, 5]),
        doc=np.array([2**40 - 1, 7, 7, 2**40 - 1, 7]),
        clicked=np.array([1, 0, 1, 0, 0]),
    )

    assert count_rows(ImpressionCounts.of_lists(lists)) == [
        ("q4194303", "d1099511627775", 1, 2, 1),
        ("q4194303", "d7", 2, 2, 0),
        ("q5", "d7", 1, 1, 1),
    ]


@pytest.mark.parametrize(
    ("starts", "clicked", "message"),
    [
        ([0, 2, 1], [0, 0], "starts run from 0"),
        ([0, 2, 1, 2], [0, 0], "starts never go down"),
        ([0, 1, 2], [0, 2], "click flags are 0 or 1"),
    ],
)
def test_lists_the_counters_cannot_read_are_refused(starts, clicked, message):
    with pytest.raises(EngineError, match=message):
        ResultLists(
            queries=["q"],
            docs=["a", "b"],
            query=np.zeros(len(starts) - 1, dtype=np.int32),
            starts=np.array(starts),
            doc=np.array([0, 1]),
            clicked=np.array(clicked),
        )
    repeated = ResultLists(
        ["q"], ["a"], np.array([0]), np.array([0, 2]), np.array([0, 0]), np.array([0, 0])
    )
    counter = SessionCounter()
    counter.add_lists(random_lists(np.random.default_rng(5), 10))
    before = pattern_rows(counter.patterns())
    with pytest.raises(EngineError, match="each document once"):
        counter.add_lists(repeated)
    assert pattern_rows(counter.patterns()) == before
