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

from array import array
from collections.abc import Iterable, Iterator, Sequence
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
    """int32 when every value fits (half the memory: a log's counts run to millions of
    rows), else int64. Widen before multiplying."""
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise EngineError(f"{name} must be a one-dimensional array of whole numbers")
    if array.size and array.min() >= -(2**31) and array.max() < 2**31:
        return array.astype(np.int32, copy=False)
    return array.astype(np.int64, copy=False)


@dataclass(frozen=True)
class ImpressionCounts:
    """How often each document was shown, and clicked, at each rank for each query.

    Row i: document ``docs[doc[i]]`` shown ``impressions[i]`` times at rank ``rank[i]``
    for query ``queries[query[i]]``, and clicked ``clicks[i]`` of those times. The name
    lists may hold names no row uses. The columns are int32 when their values fit."""

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

    @classmethod
    def of_lists(cls, lists: ResultLists) -> ImpressionCounts:
        """Every list's documents as impressions at their ranks from 1, the clicked ones
        clicked, counted per (query, document, rank)."""
        return _counted_lists(lists)


@dataclass(frozen=True)
class ResultLists:
    """Result lists held flat, as a reader collects them: list k was shown for query
    ``queries[query[k]]``; its documents are ``docs[doc[i]]`` for i from ``starts[k]`` to
    ``starts[k + 1] - 1``, the first at rank 1, and ``clicked[i]`` (0 or 1) says which
    were clicked. A list names a document once; a list may be empty. The index arrays
    keep the narrow types they come in (ten million documents shown are 40 MB as int32)."""

    queries: Sequence[str]
    docs: Sequence[str]
    query: np.ndarray
    starts: np.ndarray
    doc: np.ndarray
    clicked: np.ndarray

    def __post_init__(self) -> None:
        for name in ("query", "starts", "doc", "clicked"):
            array = np.asarray(getattr(self, name))
            whole = array.dtype == bool or np.issubdtype(array.dtype, np.integer)
            if array.ndim != 1 or (array.size and not whole):
                raise EngineError(f"{name} must be a one-dimensional array of whole numbers")
            object.__setattr__(self, name, array if array.size else array.astype(np.int64))
        starts, size = self.starts, self.doc.size
        if starts.size != self.query.size + 1 or starts[0] != 0 or starts[-1] != size:
            raise EngineError("starts run from 0 to the documents shown, one more than the lists")
        if (np.diff(starts) < 0).any():
            raise EngineError("starts never go down")
        if self.clicked.size != size:
            raise EngineError("one click flag per document shown")
        if self.query.size and (self.query.min() < 0 or self.query.max() >= len(self.queries)):
            raise EngineError("a query index is outside the list of queries")
        if size and (self.doc.min() < 0 or self.doc.max() >= len(self.docs)):
            raise EngineError("a doc index is outside the list of docs")
        if size and (self.clicked.min() < 0 or self.clicked.max() > 1):
            raise EngineError("click flags are 0 or 1")

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)


def _slices(lists: ResultLists) -> Iterator[tuple[slice, slice]]:
    """The lists _SLICE at a time: which lists, and which documents shown they hold."""
    for first in range(0, lists.query.size, _SLICE):
        last = min(first + _SLICE, lists.query.size)
        yield slice(first, last), slice(int(lists.starts[first]), int(lists.starts[last]))


def _counted_lists(lists: ResultLists) -> ImpressionCounts:
    """Each shown document becomes one int, (query, doc, rank) and its click flag packed,
    sorted in place; equal runs are the cells. One int64 per document shown is all the
    memory it takes beyond the lists themselves (made a slice of the lists at a time)."""
    shown, lengths = lists.doc.size, lists.lengths
    doc_count = max(len(lists.docs), 1)
    if not shown:
        nothing = np.empty(0, dtype=np.int64)
        return ImpressionCounts(lists.queries, lists.docs, *[nothing] * 5)
    rank_span = int(lengths.max()) + 1
    key = np.empty(shown, dtype=np.int64)
    for lists_at, shown_at in _slices(lists):
        part = key[shown_at]
        part[:] = np.repeat(lists.query[lists_at], lengths[lists_at])
        part *= doc_count
        part += lists.doc[shown_at]
    pairs = None
    if max(len(lists.queries), 1) * doc_count * rank_span * 2 >= 2**63:
        # Too many names to pack (query, doc, rank) into 63 bits: number the pairs first.
        pairs, inverse = np.unique(key, return_inverse=True)
        key[:] = inverse.reshape(-1)
        del inverse
    for lists_at, shown_at in _slices(lists):
        part = key[shown_at]
        part *= rank_span
        # A rank: the place in the slice, less the place where its list begins, plus 1.
        begins = lists.starts[lists_at] - shown_at.start
        part += np.arange(1, part.size + 1) - np.repeat(begins, lengths[lists_at])
        part <<= 1
        part |= lists.clicked[shown_at]
    key.sort()
    # Runs of equal keys; a cell is one run (all clicked or none) or two (unclicked
    # first). Each array is let go as soon as it is used: the peak is the sort's.
    change = np.empty(shown, dtype=bool)
    change[0] = True
    np.not_equal(key[1:], key[:-1], out=change[1:])
    run_start = np.flatnonzero(change)
    del change
    run_key = key[run_start]
    del key
    run_length = np.empty_like(run_start)
    np.subtract(run_start[1:], run_start[:-1], out=run_length[:-1])
    run_length[-1] = shown - run_start[-1]
    del run_start
    clicked_run = (run_key & 1).astype(bool)
    run_key >>= 1
    new_cell = np.empty(run_key.size, dtype=bool)
    new_cell[0] = True
    np.not_equal(run_key[1:], run_key[:-1], out=new_cell[1:])
    cell_start = np.flatnonzero(new_cell)
    del new_cell
    impressions = _int_array(np.add.reduceat(run_length, cell_start), "impressions")
    run_length *= clicked_run
    clicks = _int_array(np.add.reduceat(run_length, cell_start), "clicks")
    del run_length, clicked_run
    cell = run_key[cell_start]
    del run_key, cell_start
    rank = _int_array(cell % rank_span, "rank")
    cell //= rank_span
    if pairs is not None:
        cell = pairs[cell]
    doc = _int_array(cell % doc_count, "doc")
    cell //= doc_count
    return ImpressionCounts(
        queries=lists.queries,
        docs=lists.docs,
        query=_int_array(cell, "query"),
        doc=doc,
        rank=rank,
        impressions=impressions,
        clicks=clicks,
    )


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
    keys, of_row = np.unique(query.astype(np.int64) * max(doc_count, 1) + doc, return_inverse=True)
    return _PairIndex(of_row.reshape(-1), keys // max(doc_count, 1), keys % max(doc_count, 1))


def _estimates(
    queries: Sequence[str],
    docs: Sequence[str],
    pairs: _PairIndex,
    values: np.ndarray,
    impressions: np.ndarray,
    minimum: int = 0,
) -> Estimates:
    """The pairs' estimates, only those on at least `minimum` impressions: a log's
    thin pairs are most of its pairs, and each is a Python object here."""
    values = np.asarray(values, dtype=float)
    if minimum > 0:
        kept = np.flatnonzero(np.rint(impressions) >= minimum)
        pairs = _PairIndex(pairs.of_row, pairs.query[kept], pairs.doc[kept])
        values, impressions = values[kept], np.asarray(impressions)[kept]
    estimates: Estimates = {}
    # A slice at a time: a million pairs as lists of Python numbers would double the peak.
    for part in range(0, pairs.size, _SLICE):
        end = part + _SLICE
        estimates.update(
            ((queries[query], docs[doc]), Estimate(value, count))
            for query, doc, value, count in zip(
                pairs.query[part:end].tolist(),
                pairs.doc[part:end].tolist(),
                values[part:end].tolist(),
                np.rint(impressions[part:end]).astype(np.int64).tolist(),  # sums are floats
                strict=True,
            )
        )
    return estimates


def _per_pair(pairs: _PairIndex, weights: np.ndarray) -> np.ndarray:
    return np.bincount(pairs.of_row, weights=weights, minlength=pairs.size)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


# --- CTR and COEC --------------------------------------------------------------------


def ctr(counts: ImpressionCounts, *, minimum: int = 0) -> Estimates:
    """Click-through rate: a pair's clicks over its impressions, all ranks together
    (`minimum`: only the pairs on at least that many impressions, as `enough`)."""
    pairs = _pair_index(counts.query, counts.doc, len(counts.docs))
    shown = _per_pair(pairs, counts.impressions)
    clicks = _per_pair(pairs, counts.clicks)
    return _estimates(counts.queries, counts.docs, pairs, _ratio(clicks, shown), shown, minimum)


def rank_click_rates(counts: ImpressionCounts) -> np.ndarray:
    """Each rank's click-through rate over all queries and docs; index 0 is rank 1, and a
    rank nothing was shown at has rate 0."""
    if not counts.rank.size:
        return np.zeros(0)
    length = int(counts.rank.max())
    at = counts.rank - 1
    shown = np.bincount(at, weights=counts.impressions, minlength=length)
    return _ratio(np.bincount(at, weights=counts.clicks, minlength=length), shown)


def coec(counts: ImpressionCounts, *, minimum: int = 0) -> Estimates:
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
        minimum,
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
    counts: ImpressionCounts,
    iterations: int = 500,
    tolerance: float = 1e-8,
    *,
    minimum: int = 0,
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

    EM creeps: two steps at a time are extrapolated along the way they went (SQUAREM,
    Varadhan & Roland 2008), and a third step from there is kept when that point fits at
    least as well as the first step's, else the second step is; so the fit never gets
    worse and the same maximum is reached in a fraction of the steps. Stops when a round
    raises the log-likelihood per impression by no more than `tolerance`, or after
    `iterations` steps in all. These are maximum-likelihood estimates: a pair seen a few
    times gets an extreme α (one click in one impression is α = 1), hence ``enough``;
    and when most pairs are that thin, they bias γ too.
    """
    if iterations < 1:
        raise EngineError("iterations must be at least 1")
    if not counts.rank.size:
        return PositionBasedFit({}, {}, 0, True)
    em = _PositionBasedSteps(counts)
    pairs = _PairIndex(np.empty(0, dtype=np.int64), em.pair_query, em.pair_doc)
    alpha, gamma = em.start
    steps, converged, fit_before = 0, False, -np.inf
    while steps < iterations and not converged:
        alpha_1, gamma_1, fit = em.step(alpha, gamma)
        steps += 1
        converged = bool(fit - fit_before <= tolerance)
        fit_before = fit
        if converged or steps == iterations:
            alpha, gamma = alpha_1, gamma_1
            break
        alpha_2, gamma_2, fit_1 = em.step(alpha_1, gamma_1)
        steps += 1
        alpha, gamma = _extrapolated((alpha, alpha_1, alpha_2), (gamma, gamma_1, gamma_2))
        if steps < iterations and alpha is not alpha_2:
            alpha_3, gamma_3, fit_far = em.step(alpha, gamma)
            steps += 1
            if fit_far >= fit_1:
                alpha, gamma = alpha_3, gamma_3
                continue
        alpha, gamma = alpha_2, gamma_2
    shown_per_pair, shown_per_rank = em.shown_per_pair, em.shown_per_rank
    del em  # its arrays, one per cell, before the estimates, one object per pair
    return PositionBasedFit(
        estimates=_estimates(counts.queries, counts.docs, pairs, alpha, shown_per_pair, minimum),
        examination={
            rank + 1: float(gamma[rank]) for rank in np.flatnonzero(shown_per_rank).tolist()
        },
        iterations=steps,
        converged=converged,
    )


_DRAWN_BACK = 20  # halvings of the way back before the last estimate is taken as it is


def _extrapolated(
    alphas: tuple[np.ndarray, np.ndarray, np.ndarray],
    gammas: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """SQUAREM's point from three successive estimates: as far along their way as the
    steps' slowing down says, drawn back towards the last estimate until every α and
    γ is within [0, 1] (cut off there, EM stalled at a worse fit); the last estimate
    itself when the steps do not slow down."""
    change = np.concatenate([alphas[1] - alphas[0], gammas[1] - gammas[0]])
    bend = np.concatenate([alphas[2] - alphas[1], gammas[2] - gammas[1]]) - change
    size, curve = np.sqrt(_dot(change, change)), np.sqrt(_dot(bend, bend))
    if curve == 0.0 or size <= curve:
        return alphas[2], gammas[2]
    reach = size / curve
    start = np.concatenate([alphas[0], gammas[0]])
    for _ in range(_DRAWN_BACK):
        far = start + 2.0 * reach * change + reach**2 * bend
        if far.min() >= 0.0 and far.max() <= 1.0:
            return far[: alphas[0].size], far[alphas[0].size :]
        reach = (reach + 1.0) / 2.0  # at 1 the point is the last estimate
    return alphas[2], gammas[2]


class _PositionBasedSteps:
    """The PBM's EM steps over a log's cells, sorted by pair so that a pair's α reaching
    its cells and their sums coming back run through memory in order. The arrays with
    one value per cell are made once, in two blocks, and reused from step to step."""

    def __init__(self, counts: ImpressionCounts) -> None:
        doc_count = max(len(counts.docs), 1)
        key = counts.query.astype(np.int64)
        key *= doc_count
        key += counts.doc
        order = np.argsort(key, kind="stable")
        cells = order.size
        self._indices = np.empty((2, cells), dtype=np.int64)
        self.pair_of_cell, self.at = self._indices
        sorted_key = np.take(key, order, out=self.pair_of_cell)
        del key
        new_pair = np.empty(cells, dtype=bool)
        new_pair[0] = True
        np.not_equal(sorted_key[1:], sorted_key[:-1], out=new_pair[1:])
        pair_query, pair_doc = np.divmod(sorted_key[new_pair], doc_count)
        self.pair_query, self.pair_doc = pair_query.astype(np.int32), pair_doc.astype(np.int32)
        self.pairs = self.pair_query.size
        np.cumsum(new_pair, out=self.pair_of_cell)
        self.pair_of_cell -= 1
        del new_pair
        self.at[:] = counts.rank[order]
        self.at -= 1
        length = int(self.at.max()) + 1
        self._floats = np.empty((4, cells))
        self.unclicked, self.attractive, self.examined, self.quiet = self._floats
        shown, clicked = self.attractive, self.examined  # until the first step
        shown[:] = counts.impressions[order]
        clicked[:] = counts.clicks[order]
        del order
        self.shown_per_pair = self._per_pair(shown)
        self.clicks_per_pair = self._per_pair(clicked)
        self.shown_per_rank = np.bincount(self.at, weights=shown, minlength=length)
        self.clicks_per_rank = np.bincount(self.at, weights=clicked, minlength=length)
        self.impressions = float(self.shown_per_pair.sum())
        self.length = length
        # Start from the rank click rates as examination and each pair's clicks over
        # them; away from 0 and 1, where EM would stay stuck.
        rates = _ratio(self.clicks_per_rank, self.shown_per_rank)
        top = rates.max()
        gamma = np.clip(rates / top if top > 0 else np.ones(length), 0.01, 1.0)
        expected = self._per_pair(shown * gamma[self.at])
        alpha = np.clip(_ratio(self.clicks_per_pair, expected), 0.01, 0.99)
        self.start = alpha, gamma
        np.subtract(shown, clicked, out=self.unclicked)

    def step(self, alpha: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The next α and γ, and the log-likelihood per impression of these."""
        a, g, quiet = self.attractive, self.examined, self.quiet
        np.take(alpha, self.pair_of_cell, out=a)
        np.take(gamma, self.at, out=g)
        np.multiply(a, g, out=quiet)
        np.subtract(1.0, quiet, out=quiet)  # the chance of no click
        np.maximum(quiet, np.finfo(float).tiny, out=quiet)
        # An unclicked impression is attractive with posterior α(1 - γ) / (1 - αγ) and
        # examined with γ(1 - α) / (1 - αγ); α and γ come out of the sums.
        for other in (g, a):
            np.subtract(1.0, other, out=other)
            other /= quiet
            other *= self.unclicked
        # Clicks' share of the log-likelihood goes by pair and by rank; only the
        # impressions without a click need a log per cell.
        fit = (
            _dot(self.clicks_per_pair, _log(alpha))
            + _dot(self.clicks_per_rank, _log(gamma))
            + _dot(self.unclicked, np.log(quiet, out=quiet))
        ) / self.impressions
        new_alpha = _ratio(
            self.clicks_per_pair + alpha * self._per_pair(g),
            self.shown_per_pair,
        )
        new_gamma = _ratio(
            self.clicks_per_rank + gamma * np.bincount(self.at, weights=a, minlength=self.length),
            self.shown_per_rank,
        )
        top = new_gamma.max()
        if top > 0:
            new_alpha *= top
            new_gamma /= top
        return new_alpha, new_gamma, float(fit)

    def _per_pair(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.pair_of_cell, weights=weights, minlength=self.pairs)


def _dot(left: np.ndarray, right: np.ndarray) -> float:
    """A dot product without BLAS, whose threads cost more than they save on a busy
    machine (a 400,000-long product took 6 ms through `@`, 0.5 ms so)."""
    return float(np.einsum("i,i->", left, right))


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
        doc = np.asarray(self.doc)
        if doc.dtype != np.int32:  # kept as it comes: half the memory of int64
            doc = doc.astype(np.int64)
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


# Sessions are merged (np.unique) once this many wait, and then whenever those waiting
# outnumber those merged: memory follows the distinct sessions, not all of them.
_MERGE_AT = 100_000
_SLICE = 100_000  # lists turned into rows at a time, to bound the temporary arrays


class _OfOneLength:
    """The sessions of one list length, each a row of int32: its query, its clicks as
    bits, its documents; merged rows are distinct, with their counts and when each was
    first seen; rows waiting to be merged come from `add` (flat arrays) or in blocks."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.rows = np.empty((0, length + 2), dtype=np.int32)
        self.count = np.empty(0, dtype=np.int64)
        self.first = np.empty(0, dtype=np.int64)
        self.blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.waiting = 0
        self._flat = array("i")
        self._flat_count = array("q")
        self._flat_first = array("q")

    def add(self, row: list[int], count: int, first: int) -> None:
        self._flat.extend(row)
        self._flat_count.append(count)
        self._flat_first.append(first)
        self.waiting += 1
        if self.waiting >= max(_MERGE_AT, self.count.size):
            self.merge()

    def add_block(self, rows: np.ndarray, count: np.ndarray, first: np.ndarray) -> None:
        self._flat_to_block()  # blocks stay in the order their sessions came
        self.blocks.append((rows, count, first))
        self.waiting += count.size

    def merge(self) -> None:
        self._flat_to_block()
        if not self.blocks:
            return
        parts = [(self.rows, self.count, self.first)] if self.count.size else []
        parts += self.blocks
        self.blocks, self.waiting = [], 0
        if len(parts) == 1:
            rows, count, first = parts[0]
        else:
            rows = np.concatenate([part[0] for part in parts])
            count = np.concatenate([part[1] for part in parts])
            first = np.concatenate([part[2] for part in parts])
        del parts
        self.rows, self.count, self.first = _distinct_rows(rows, count, first)

    def _flat_to_block(self) -> None:
        if self._flat_count:
            self.blocks.append(
                (
                    np.array(self._flat, dtype=np.int32).reshape(-1, self.length + 2),
                    np.array(self._flat_count, dtype=np.int64),
                    np.array(self._flat_first, dtype=np.int64),
                )
            )
            self._flat, self._flat_count, self._flat_first = array("i"), array("q"), array("q")


def _distinct_rows(
    rows: np.ndarray, count: np.ndarray, first: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal rows made one, their counts added and the earliest `first` kept (within
    each part the rows come in the order of `first`, and the parts in order). Rows are
    sorted by a 64-bit hash and rows of equal hash compared; when all are distinct, as
    sessions mostly are, nothing is copied."""
    hashes = np.zeros(rows.shape[0], dtype=np.uint64)
    for column in range(rows.shape[1]):
        hashes ^= rows[:, column].astype(np.uint64)
        hashes *= np.uint64(0x9E3779B97F4A7C15)
        hashes ^= hashes >> np.uint64(29)
    order = np.argsort(hashes, kind="stable")
    hashes = hashes[order]
    leads = np.empty(rows.shape[0], dtype=bool)
    leads[:1] = True
    np.not_equal(hashes[1:], hashes[:-1], out=leads[1:])
    del hashes
    if leads.all():
        return rows, count, first
    repeats = np.flatnonzero(~leads)
    if (rows[order[repeats]] != rows[order[repeats - 1]]).any():  # two rows, one hash
        as_bytes = rows.view(np.dtype((np.void, rows.itemsize * rows.shape[1]))).ravel()
        _, kept, of_row = np.unique(as_bytes, return_index=True, return_inverse=True)
        total = np.zeros(kept.size, dtype=np.int64)
        np.add.at(total, of_row.reshape(-1), count)
        return rows[kept], total, first[kept]
    # A stable sort keeps each group's earliest row first; the rows kept move up in
    # place, a slice at a time (a copy of them all would double the peak).
    group_starts = np.flatnonzero(leads)
    totals = np.add.reduceat(count[order], group_starts)
    kept = order[group_starts]
    del order, leads
    in_place = np.argsort(kept)
    kept, totals = kept[in_place], totals[in_place]
    for start in range(0, kept.size, _SLICE):
        moving = kept[start : start + _SLICE]
        rows[start : start + moving.size] = rows[moving]
    return rows[: kept.size], totals, first[kept]


class SessionCounter:
    """Folds sessions (query, shown documents, clicks) into SessionPatterns.

    Query texts and document ids are numbered once; a session is kept as a short row of
    ints (its query, its clicks as bits, its documents), and repeated sessions merge
    into one row with a count, so a million sessions of ten documents take tens of MB."""

    def __init__(self) -> None:
        self._queries: dict[str, int] = {}
        self._docs: dict[str, int] = {}
        self._lengths: dict[int, _OfOneLength] = {}
        self._seen = 0

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
        names = self._docs
        row = [
            self._queries.setdefault(query, len(self._queries)),
            sum(click << rank for rank, click in enumerate(clicked)),
        ]
        row += [names.setdefault(doc, len(names)) for doc in shown]
        length = len(shown)
        kept = self._lengths.get(length) or self._lengths.setdefault(length, _OfOneLength(length))
        kept.add(row, count, self._seen)
        self._seen += 1

    def add_lists(self, lists: ResultLists) -> None:
        """Every list as one session, the first MAX_SESSION_RANKS documents of it; an
        empty list is none. Lists that show a document twice are refused, and then
        nothing is added."""
        lengths = np.minimum(lists.lengths, MAX_SESSION_RANKS)
        made = []
        for length in np.unique(lengths[lengths > 0]).tolist():
            chosen = np.flatnonzero(lengths == length)
            made.append((length, chosen, _session_rows(lists, chosen, length)))
        # Numbered in the counter's own numbers only once all are read.
        query_number = _numbered(self._queries, lists.queries)
        doc_number = _numbered(self._docs, lists.docs)
        for length, chosen, rows in made:
            for part in range(0, chosen.size, _SLICE):
                into = rows[part : part + _SLICE]
                into[:, 0] = query_number[into[:, 0]]
                into[:, 2:] = doc_number[into[:, 2:]]
            kept = self._lengths.get(length) or self._lengths.setdefault(
                length, _OfOneLength(length)
            )
            kept.add_block(rows, np.ones(chosen.size, dtype=np.int64), self._seen + chosen)
            if kept.waiting >= max(_MERGE_AT, kept.count.size):
                kept.merge()
        self._seen += lists.query.size

    def patterns(self) -> SessionPatterns:
        """Everything added so far, as arrays, in the order each pattern was first seen."""
        groups = [self._lengths[length] for length in sorted(self._lengths)]
        for group in groups:
            group.merge()
        size = sum(group.count.size for group in groups)
        width = max((group.length for group in groups if group.count.size), default=0)
        first = np.concatenate([group.first for group in groups]) if groups else np.empty(0)
        place = np.empty(size, dtype=np.int64)
        place[np.argsort(first, kind="stable")] = np.arange(size)
        query = np.empty(size, dtype=np.int32)
        doc = np.full((size, width), -1, dtype=np.int32)
        clicks = np.zeros((size, width), dtype=bool)
        count = np.empty(size, dtype=np.int64)
        done = 0
        for group in groups:
            at = place[done : done + group.count.size]
            done += group.count.size
            query[at] = group.rows[:, 0]
            doc[at, : group.length] = group.rows[:, 2:]
            bits = group.rows[:, 1:2] >> np.arange(group.length, dtype=np.int32)
            clicks[at, : group.length] = (bits & 1).astype(bool)
            count[at] = group.count
        return SessionPatterns(
            queries=list(self._queries),
            docs=list(self._docs),
            query=query,
            doc=doc,
            clicks=clicks,
            count=count,
        )


def _session_rows(lists: ResultLists, chosen: np.ndarray, length: int) -> np.ndarray:
    """The chosen lists' first `length` documents as session rows (query, click bits,
    documents), in the lists' own numbers, a slice at a time."""
    rows = np.empty((chosen.size, length + 2), dtype=np.int32)
    for part in range(0, chosen.size, _SLICE):
        sessions = chosen[part : part + _SLICE]
        at = lists.starts[sessions][:, None] + np.arange(length)
        docs = lists.doc[at]
        in_order = np.sort(docs, axis=1)
        if (in_order[:, 1:] == in_order[:, :-1]).any():
            raise EngineError("a session shows each document once")
        into = rows[part : part + _SLICE]
        into[:, 0] = lists.query[sessions]
        bits = lists.clicked[at].astype(np.int32) << np.arange(length, dtype=np.int32)
        into[:, 1] = bits.sum(axis=1, dtype=np.int32)
        into[:, 2:] = docs
    return rows


def _numbered(numbers: dict[str, int], names: Sequence[str]) -> np.ndarray:
    """Each name's number in `numbers`, new names numbered on."""
    return np.fromiter(
        (numbers.setdefault(name, len(numbers)) for name in names), np.int32, len(names)
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
