"""Click models: implicit relevance estimates from search click logs.

Each model turns aggregated clicks into one estimate per (query, document), with the
number of impressions behind it so callers can drop the thin ones (``enough``). The
definitions follow Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015),
and Chapelle & Zhang (2009) for the dynamic Bayesian network.

- ``ctr``   clicks over impressions, all ranks together;
- ``coec``  clicks over expected clicks, the expectation taken from each rank's
            click-through rate over the whole log;
- ``pbm``   the position-based model, fitted by EM on (query, doc, rank) counts;
- ``dbn``   the dynamic Bayesian network, fitted by EM on whole sessions.

The inputs are counts, not events, so ten million events fit in memory:
``ImpressionCounter`` and ``SessionCounter`` fold events into them as they stream.
Ranks are 1-based throughout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import EngineError

# Below this many impressions an estimate is mostly noise; callers filter with `enough`.
MIN_IMPRESSIONS = 10
# The DBN reads whole result lists; 20 covers two pages of ten.
MAX_SESSION_RANKS = 20

Pair = tuple[str, str]


class Estimate(NamedTuple):
    """One (query, doc)'s estimate and the impressions it rests on."""

    value: float
    impressions: int


Estimates = dict[Pair, Estimate]


def enough(estimates: Estimates, minimum: int = MIN_IMPRESSIONS) -> Estimates:
    """The estimates resting on at least `minimum` impressions."""
    return {
        pair: estimate for pair, estimate in estimates.items() if estimate.impressions >= minimum
    }


# --- (query, doc, rank) counts -------------------------------------------------------


def _int_array(values: object, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise EngineError(f"{name} must be a one-dimensional array of whole numbers")
    return array.astype(np.int64, copy=False)


@dataclass(frozen=True)
class ImpressionCounts:
    """How often each document was shown, and clicked, at each rank for each query.

    Row i: document ``docs[doc[i]]`` shown ``impressions[i]`` times at rank ``rank[i]``
    for query ``queries[query[i]]``, and clicked ``clicks[i]`` of those times. The name
    lists may hold names no row uses."""

    queries: Sequence[str]
    docs: Sequence[str]
    query: np.ndarray
    doc: np.ndarray
    rank: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray

    def __post_init__(self) -> None:
        columns = ("query", "doc", "rank", "impressions", "clicks")
        for name in columns:
            object.__setattr__(self, name, _int_array(getattr(self, name), name))
        if len({getattr(self, name).size for name in columns}) != 1:
            raise EngineError("query, doc, rank, impressions and clicks must be equally long")
        if not self.rank.size:
            return
        if self.query.min() < 0 or self.query.max() >= len(self.queries):
            raise EngineError("a query index is outside the list of queries")
        if self.doc.min() < 0 or self.doc.max() >= len(self.docs):
            raise EngineError("a doc index is outside the list of docs")
        if self.rank.min() < 1:
            raise EngineError("ranks start at 1")
        if self.clicks.min() < 0 or (self.clicks > self.impressions).any():
            raise EngineError("clicks must be between 0 and the impressions")


# A cell's key packs its pair and rank into one int, and its value packs its clicks above
# its impressions (up to 2^32 - 1 a cell), so an event costs one lookup and a cell no tuple.
RANK_BITS = 20
MAX_RANK = (1 << RANK_BITS) - 1
_CLICKS_SHIFT = 32
_ONE_CLICKED = 1 + (1 << _CLICKS_SHIFT)
_MAX_COUNT = (1 << _CLICKS_SHIFT) - 1


class ImpressionCounter:
    """Folds (query, doc, rank, clicked) events into ImpressionCounts as they stream.

    Each (query, doc) gets an index the first time it is seen (a dict of docs per query,
    so a query's name is kept once), and each (pair, rank) a count, so memory grows with
    the distinct cells, not the events. Ranks go from 1 to MAX_RANK."""

    def __init__(self) -> None:
        # doc -> its pair's index shifted past the rank bits, per query.
        self._docs_of_query: dict[str, dict[str, int]] = {}
        self._pairs = 0
        self._cells: dict[int, int] = {}

    def _pair_key(self, query: str, doc: str) -> int:
        docs = self._docs_of_query.setdefault(query, {})
        key = docs.get(doc)
        if key is None:
            key = docs[doc] = self._pairs << RANK_BITS
            self._pairs += 1
        return key

    def add(self, query: str, doc: str, rank: int, clicked: bool | int, count: int = 1) -> None:
        """`count` impressions of `doc` at `rank` for `query`, all clicked or none."""
        if not isinstance(rank, int) or not 1 <= rank <= MAX_RANK:
            raise EngineError(f"rank {rank!r} is not a whole number from 1 to {MAX_RANK}")
        if not isinstance(count, int) or not 1 <= count <= _MAX_COUNT:
            raise EngineError(f"count {count!r} is not a whole number from 1 to {_MAX_COUNT}")
        cell = self._pair_key(query, doc) | rank
        self._cells[cell] = self._cells.get(cell, 0) + count * (_ONE_CLICKED if clicked else 1)

    def add_many(self, events: Iterable[tuple[str, str, int, bool | int]]) -> None:
        """Many (query, doc, rank, clicked) events, one impression each. An event with a
        rank that is not a whole number from 1 to MAX_RANK stops the batch there with
        EngineError; the events before it are counted."""
        docs_of_query, cells, pairs = self._docs_of_query, self._cells, self._pairs
        try:
            for query, doc, rank, clicked in events:
                if not 0 < rank <= MAX_RANK:
                    raise EngineError(f"rank {rank!r} is not a whole number from 1 to {MAX_RANK}")
                docs = docs_of_query.get(query)
                if docs is None:
                    docs = docs_of_query[query] = {}
                key = docs.get(doc)
                if key is None:
                    key = docs[doc] = pairs << RANK_BITS
                    pairs += 1
                cell = key | rank
                cells[cell] = cells.get(cell, 0) + (_ONE_CLICKED if clicked else 1)
        except TypeError as error:  # a rank like 2.0 or "2", a name that is a list
            raise EngineError(
                "events are (query, doc, rank, clicked) tuples "
                f"with whole-number ranks from 1 to {MAX_RANK}"
            ) from error
        finally:
            self._pairs = pairs

    def counts(self) -> ImpressionCounts:
        """Everything added so far, as arrays."""
        queries: list[str] = []
        docs: dict[str, int] = {}
        pair_query = np.empty(self._pairs, dtype=np.int64)
        pair_doc = np.empty(self._pairs, dtype=np.int64)
        for query, docs_of_query in self._docs_of_query.items():
            for doc, key in docs_of_query.items():
                pair_query[key >> RANK_BITS] = len(queries)
                pair_doc[key >> RANK_BITS] = docs.setdefault(doc, len(docs))
            queries.append(query)
        size = len(self._cells)
        cell = np.fromiter(self._cells.keys(), np.int64, size)
        packed = np.fromiter(self._cells.values(), np.int64, size)
        pair = cell >> RANK_BITS
        return ImpressionCounts(
            queries=queries,
            docs=list(docs),
            query=pair_query[pair],
            doc=pair_doc[pair],
            rank=cell & MAX_RANK,
            impressions=packed & _MAX_COUNT,
            clicks=packed >> _CLICKS_SHIFT,
        )


@dataclass(frozen=True)
class _PairIndex:
    """The distinct (query, doc) pairs of some rows, and each row's pair."""

    of_row: np.ndarray
    query: np.ndarray
    doc: np.ndarray

    @property
    def size(self) -> int:
        return self.query.size


def _pair_index(query: np.ndarray, doc: np.ndarray, doc_count: int) -> _PairIndex:
    keys, of_row = np.unique(query * max(doc_count, 1) + doc, return_inverse=True)
    return _PairIndex(of_row.reshape(-1), keys // max(doc_count, 1), keys % max(doc_count, 1))


def _estimates(
    queries: Sequence[str],
    docs: Sequence[str],
    pairs: _PairIndex,
    values: np.ndarray,
    impressions: np.ndarray,
) -> Estimates:
    return {
        (queries[query], docs[doc]): Estimate(value, shown)
        for query, doc, value, shown in zip(
            pairs.query.tolist(),
            pairs.doc.tolist(),
            np.asarray(values, dtype=float).tolist(),
            np.rint(impressions).astype(np.int64).tolist(),  # bincount sums are floats
            strict=True,
        )
    }


def _per_pair(pairs: _PairIndex, weights: np.ndarray) -> np.ndarray:
    return np.bincount(pairs.of_row, weights=weights, minlength=pairs.size)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


# --- CTR and COEC --------------------------------------------------------------------


def ctr(counts: ImpressionCounts) -> Estimates:
    """Click-through rate: a pair's clicks over its impressions, all ranks together."""
    pairs = _pair_index(counts.query, counts.doc, len(counts.docs))
    shown = _per_pair(pairs, counts.impressions)
    clicks = _per_pair(pairs, counts.clicks)
    return _estimates(counts.queries, counts.docs, pairs, _ratio(clicks, shown), shown)


def rank_click_rates(counts: ImpressionCounts) -> np.ndarray:
    """Each rank's click-through rate over all queries and docs; index 0 is rank 1, and a
    rank nothing was shown at has rate 0."""
    if not counts.rank.size:
        return np.zeros(0)
    length = int(counts.rank.max())
    at = counts.rank - 1
    shown = np.bincount(at, weights=counts.impressions, minlength=length)
    return _ratio(np.bincount(at, weights=counts.clicks, minlength=length), shown)


def coec(counts: ImpressionCounts) -> Estimates:
    """Clicks over expected clicks (COEC).

    A pair's expected clicks are the clicks an average document would have had in its
    place: the sum, over its impressions, of the click-through rate of the rank it was
    shown at, that rate taken over every query and doc in the log. COEC is its clicks
    divided by that sum: 1 means clicked as often as the ranks it was shown at get
    clicked, above 1 more often. ``value`` is the raw ratio and can exceed 1
    (click_grades maps it to grades with thresholds). A pair shown only at ranks nobody
    clicked expects no clicks and has none: its value is 0.
    """
    pairs = _pair_index(counts.query, counts.doc, len(counts.docs))
    rates = rank_click_rates(counts)
    expected = _per_pair(pairs, counts.impressions * rates[counts.rank - 1])
    clicks = _per_pair(pairs, counts.clicks)
    return _estimates(
        counts.queries,
        counts.docs,
        pairs,
        _ratio(clicks, expected),
        _per_pair(pairs, counts.impressions),
    )


# --- position-based model ------------------------------------------------------------


@dataclass(frozen=True)
class PositionBasedFit:
    """The position-based model fitted to a log.

    ``estimates``: each pair's attractiveness α; ``examination``: each rank's γ, for the
    ranks something was shown at, scaled so the largest is 1 (see ``pbm``)."""

    estimates: Estimates
    examination: dict[int, float]
    iterations: int
    converged: bool


def pbm(
    counts: ImpressionCounts, iterations: int = 500, tolerance: float = 1e-8
) -> PositionBasedFit:
    """The position-based model: a document at rank r is clicked when the user examines
    rank r (probability γ_r, the same for every query) and finds the document attractive
    (probability α_(q,d), whatever its rank): P(click) = γ_r · α_(q,d).

    Fitted by expectation-maximisation on the counts. An impression that was clicked was
    examined and attractive; one that was not is attractive with posterior probability
    α(1 - γ) / (1 - αγ) and examined with γ(1 - α) / (1 - αγ). Each step sets α to a
    pair's expected attractive impressions over its impressions and γ to a rank's
    expected examined impressions over its impressions.

    Only the products γ·α are identified (γ·k with α/k fits the same), so each step
    scales γ to make the largest 1, rank 1's in the usual log where examination falls
    with rank; α is then the click probability at the most examined rank.

    Stops when a step raises the log-likelihood per impression by no more than
    `tolerance`, or after `iterations` steps (α of thin pairs can creep towards 1 for a
    long time without changing the fit). These are maximum-likelihood estimates: a pair
    seen a few times gets an extreme α (one click in one impression is α = 1), hence
    ``enough``; and when most pairs are that thin, they bias γ too.
    """
    if iterations < 1:
        raise EngineError("iterations must be at least 1")
    if not counts.rank.size:
        return PositionBasedFit({}, {}, 0, True)
    pairs = _pair_index(counts.query, counts.doc, len(counts.docs))
    at = counts.rank - 1
    length = int(at.max()) + 1
    shown = counts.impressions.astype(float)
    clicked = counts.clicks.astype(float)
    unclicked = shown - clicked
    shown_per_pair = _per_pair(pairs, shown)
    shown_per_rank = np.bincount(at, weights=shown, minlength=length)
    clicks_per_rank = np.bincount(at, weights=clicked, minlength=length)

    # Start from the rank click rates as examination and each pair's clicks over them;
    # away from 0 and 1, where EM would stay stuck.
    rates = _ratio(clicks_per_rank, shown_per_rank)
    gamma = np.clip(rates / rates.max() if rates.max() > 0 else np.ones(length), 0.01, 1.0)
    expected = _per_pair(pairs, shown * gamma[at])
    alpha = np.clip(_ratio(_per_pair(pairs, clicked), expected), 0.01, 0.99)
    step, converged, fit_before = 0, False, -np.inf
    while step < iterations and not converged:
        step += 1
        a, g = alpha[pairs.of_row], gamma[at]
        unclicked_chance = 1.0 - a * g
        fit_now = _mean_log_likelihood(clicked, unclicked, a * g, unclicked_chance)
        converged = bool(fit_now - fit_before <= tolerance)
        fit_before = fit_now
        attracted = clicked + unclicked * _ratio(a * (1.0 - g), unclicked_chance)
        examined = clicked + unclicked * _ratio(g * (1.0 - a), unclicked_chance)
        new_alpha = _ratio(_per_pair(pairs, attracted), shown_per_pair)
        new_gamma = _ratio(np.bincount(at, weights=examined, minlength=length), shown_per_rank)
        top = new_gamma.max()
        if top > 0:
            new_alpha, new_gamma = new_alpha * top, new_gamma / top
        alpha, gamma = new_alpha, new_gamma
    return PositionBasedFit(
        estimates=_estimates(counts.queries, counts.docs, pairs, alpha, shown_per_pair),
        examination={
            rank + 1: float(gamma[rank]) for rank in np.flatnonzero(shown_per_rank).tolist()
        },
        iterations=step,
        converged=converged,
    )


def _mean_log_likelihood(
    clicked: np.ndarray,
    unclicked: np.ndarray,
    click_chance: np.ndarray,
    no_click_chance: np.ndarray,
) -> float:
    """The log-likelihood of the counts per impression (a chance of 0 meets no event
    that needs it: EM never gives 0 to what happened)."""
    total = clicked @ _log(click_chance) + unclicked @ _log(no_click_chance)
    return float(total / (clicked.sum() + unclicked.sum()))


def _log(chance: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(chance, np.finfo(float).tiny))


# --- sessions and the dynamic Bayesian network ---------------------------------------


@dataclass(frozen=True)
class SessionPatterns:
    """Distinct sessions and how many times each happened.

    Pattern i: for query ``queries[query[i]]`` the documents ``docs[doc[i, r]]`` were
    shown at ranks r + 1 (-1 past the end of a list shorter than the longest),
    ``clicks[i, r]`` says which were clicked, and ``count[i]`` sessions went exactly so."""

    queries: Sequence[str]
    docs: Sequence[str]
    query: np.ndarray
    doc: np.ndarray
    clicks: np.ndarray
    count: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "query", _int_array(self.query, "query"))
        object.__setattr__(self, "count", _int_array(self.count, "count"))
        doc = np.asarray(self.doc, dtype=np.int64)
        clicks = np.asarray(self.clicks, dtype=bool)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "clicks", clicks)
        if self.count.size != self.query.size:
            raise EngineError("query and count must be equally long")
        if doc.ndim != 2 or doc.shape[0] != self.query.size or clicks.shape != doc.shape:
            raise EngineError("doc and clicks must have one row per pattern, one column per rank")
        if doc.shape[1] > MAX_SESSION_RANKS:
            raise EngineError(f"a session shows at most {MAX_SESSION_RANKS} documents")
        if not self.query.size:
            return
        if self.query.min() < 0 or self.query.max() >= len(self.queries):
            raise EngineError("a query index is outside the list of queries")
        if doc.max() >= len(self.docs) or doc.min() < -1:
            raise EngineError("a doc index is outside the list of docs")
        if ((doc[:, 1:] >= 0) & (doc[:, :-1] < 0)).any() or (doc[:, 0] < 0).any():
            raise EngineError("each list starts at rank 1 and has no gaps")
        if (clicks & (doc < 0)).any():
            raise EngineError("a click past the end of its list")
        if self.count.min() < 1:
            raise EngineError("each pattern happened at least once")


class SessionCounter:
    """Folds sessions (query, shown documents, clicks) into SessionPatterns."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, tuple[str, ...], tuple[int, ...]], int] = {}

    def add(
        self, query: str, docs: Sequence[str], clicks: Sequence[int | bool], count: int = 1
    ) -> None:
        """`count` sessions for `query` that showed `docs` from rank 1 and clicked where
        `clicks` (0 or 1 per rank) says."""
        shown = tuple(docs)
        clicked = tuple(1 if click else 0 for click in clicks)
        if not shown or len(shown) > MAX_SESSION_RANKS:
            raise EngineError(f"a session shows between 1 and {MAX_SESSION_RANKS} documents")
        if len(clicked) != len(shown):
            raise EngineError("a session needs one click flag per document shown")
        if any(click not in (0, 1) for click in clicks):
            raise EngineError("click flags are 0 or 1")
        if len(set(shown)) != len(shown):
            raise EngineError("a session shows each document once")
        if count < 1:
            raise EngineError(f"count {count} is below 1")
        key = (query, shown, clicked)
        self._sessions[key] = self._sessions.get(key, 0) + count

    def patterns(self) -> SessionPatterns:
        """Everything added so far, as arrays."""
        queries: dict[str, int] = {}
        docs: dict[str, int] = {}
        size = len(self._sessions)
        width = max((len(shown) for _, shown, _ in self._sessions), default=0)
        query = np.empty(size, dtype=np.int64)
        doc = np.full((size, width), -1, dtype=np.int64)
        clicks = np.zeros((size, width), dtype=bool)
        for row, (name, shown, clicked) in enumerate(self._sessions):
            query[row] = queries.setdefault(name, len(queries))
            doc[row, : len(shown)] = [docs.setdefault(each, len(docs)) for each in shown]
            clicks[row, : len(clicked)] = clicked
        return SessionPatterns(
            queries=list(queries),
            docs=list(docs),
            query=query,
            doc=doc,
            clicks=clicks,
            count=np.fromiter(self._sessions.values(), np.int64, size),
        )


@dataclass(frozen=True)
class DbnFit:
    """The dynamic Bayesian network fitted to sessions.

    ``estimates``: each pair's relevance a·s; ``attractiveness`` a and ``satisfaction``
    s apart (s is 0 for a pair never clicked); ``continuation`` γ."""

    estimates: Estimates
    attractiveness: dict[Pair, float]
    satisfaction: dict[Pair, float]
    continuation: float
    iterations: int
    converged: bool


def dbn(
    sessions: SessionPatterns,
    iterations: int = 500,
    tolerance: float = 1e-8,
    continuation: float | None = None,
) -> DbnFit:
    """The full dynamic Bayesian network (Chapelle & Zhang 2009), fitted by EM.

    The user examines rank 1; at an examined rank they click when the document is
    attractive (probability a_(q,d)); after a click they are satisfied with probability
    s_(q,d) and stop; unsatisfied (or without a click) they go on to the next rank with
    probability γ, the same everywhere. The relevance estimate is a·s, the chance that
    an examined document satisfies.

    γ is fitted with a and s, or held at `continuation` if given (1 is the simplified
    DBN). Each EM step computes, per session pattern, the posterior of examination at
    every rank and of satisfaction at the last click, with one backward pass (the chance
    of no click from each rank on, given it is examined) and one forward pass; then a is
    a pair's expected attractive impressions over its impressions, s its expected
    satisfied clicks over its clicks, and γ the expected continuations over the
    expected chances to continue. Starts from a = s = γ = 0.5; stops when a step raises
    the log-likelihood per impression by no more than `tolerance`, or after `iterations`
    steps.
    """
    if iterations < 1:
        raise EngineError("iterations must be at least 1")
    if continuation is not None and not 0.0 <= continuation <= 1.0:
        raise EngineError("continuation is a probability, between 0 and 1")
    patterns, length = sessions.doc.shape
    if not patterns or not length:
        return DbnFit({}, {}, {}, continuation if continuation is not None else 0.0, 0, True)
    shown = sessions.doc >= 0
    pairs = _pair_index(
        np.broadcast_to(sessions.query[:, None], shown.shape)[shown],
        sessions.doc[shown],
        len(sessions.docs),
    )
    # Each shown slot's pair; the slots past the end of a list point at a pair of their
    # own whose a and s stay 0, so they never click and never stop anyone.
    pair_at = np.full(shown.shape, pairs.size, dtype=np.int64)
    pair_at[shown] = pairs.of_row
    weight = np.broadcast_to(sessions.count[:, None].astype(float), shown.shape)[shown]
    clicked = sessions.clicks.astype(float)
    shown_per_pair = _per_pair(pairs, weight)
    clicks_per_pair = _per_pair(pairs, weight * clicked[shown])
    rows = np.arange(patterns)
    ranks = np.arange(1, length + 1)
    # The last click's rank, 0 for a session without clicks.
    last = np.where(
        sessions.clicks.any(axis=1), length - np.argmax(sessions.clicks[:, ::-1], axis=1), 0
    )
    has_click = last > 0
    up_to_last = ranks[None, :] <= last[:, None]
    before_last = ranks[None, :] < last[:, None]
    impressions_seen = float(sessions.count @ shown.sum(axis=1))
    # A continuation from rank r to r + 1 is counted where r + 1 is on the list.
    continues = np.zeros(shown.shape, dtype=bool)
    continues[:, :-1] = shown[:, 1:]
    continue_weight = sessions.count[:, None] * continues

    a = np.full(pairs.size + 1, 0.5)
    s = np.full(pairs.size + 1, 0.5)
    a[-1] = s[-1] = 0.0
    gamma = 0.5 if continuation is None else float(continuation)
    step, converged, fit_before = 0, False, -np.inf
    while step < iterations and not converged:
        step += 1
        attractive, satisfying = a[pair_at], s[pair_at]
        # quiet[:, r]: the chance of no click from rank r + 1 on, given it is examined.
        quiet = np.ones((patterns, length + 1))
        for r in range(length - 1, -1, -1):
            quiet[:, r] = (1.0 - attractive[:, r]) * (1.0 - gamma + gamma * quiet[:, r + 1])
        last_s = satisfying[rows, np.maximum(last - 1, 0)]
        quiet_after = quiet[rows, last]
        ends_quietly = last_s + (1.0 - last_s) * (1.0 - gamma + gamma * quiet_after)
        satisfied_last = np.where(has_click, _ratio(last_s, ends_quietly), 0.0)

        # The chance of each pattern: up to the last click, a click that did not satisfy
        # or a skip, then going on; then the last click and the quiet end (or, with no
        # click at all, the quiet from rank 1).
        step_chance = np.where(
            sessions.clicks, attractive * (1.0 - satisfying) * gamma, (1.0 - attractive) * gamma
        )
        last_a = attractive[rows, np.maximum(last - 1, 0)]
        end_chance = np.where(has_click, last_a * ends_quietly, quiet[:, 0])
        log_chance = (_log(step_chance) * before_last).sum(axis=1) + _log(end_chance)
        fit_now = float(sessions.count @ log_chance) / impressions_seen
        converged = bool(fit_now - fit_before <= tolerance)
        fit_before = fit_now

        examined_next = np.where(
            has_click, _ratio((1.0 - last_s) * gamma * quiet_after, ends_quietly), 1.0
        )
        examined = up_to_last.astype(float)
        # Rank r + 1 is examined for sure up to the last click, with examined_next just
        # after it, and beyond that if the rank before was and the user went on.
        for r in range(length):
            examined[:, r] = np.where(last == r, examined_next, examined[:, r])
            if r:
                goes_on = _ratio(gamma * quiet[:, r], 1.0 - gamma + gamma * quiet[:, r])
                examined[:, r] = np.where(last < r, examined[:, r - 1] * goes_on, examined[:, r])
        satisfied = np.zeros(shown.shape)
        satisfied[rows[has_click], last[has_click] - 1] = satisfied_last[has_click]
        attracted = clicked + (1.0 - clicked) * (1.0 - examined) * attractive

        new_a = a.copy()
        new_s = s.copy()
        new_a[:-1] = _ratio(_per_pair(pairs, weight * attracted[shown]), shown_per_pair)
        new_s[:-1] = _ratio(_per_pair(pairs, weight * satisfied[shown]), clicks_per_pair)
        new_gamma = gamma
        if continuation is None:
            went_on = (continue_weight[:, :-1] * examined[:, 1:]).sum()
            could_go_on = (continue_weight * (examined - satisfied)).sum()
            new_gamma = float(went_on / could_go_on) if could_go_on > 0 else gamma
        a, s, gamma = new_a, new_s, new_gamma

    a, s = a[:-1], s[:-1]
    estimates = _estimates(sessions.queries, sessions.docs, pairs, a * s, shown_per_pair)
    return DbnFit(
        estimates=estimates,
        attractiveness={
            pair: float(value) for pair, value in zip(estimates, a.tolist(), strict=True)
        },
        satisfaction={
            pair: float(value) for pair, value in zip(estimates, s.tolist(), strict=True)
        },
        continuation=gamma,
        iterations=step,
        converged=converged,
    )
