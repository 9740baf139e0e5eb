"""Click logs simulated from click models with known parameters, written as a UBI 1.0.0
export (JSON Lines: query records, and events), so tests can import them as a team would
and check that the fitted models find the relevance they were drawn from.

Every search shows all of its query's documents in a fresh random order, so each
document is seen at every rank; its events are one impression per document shown and
one click per document clicked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

QUERIES = 50
DOCS = 10  # documents per query, all shown in each search


@dataclass(frozen=True)
class SimulatedLog:
    queries: Path  # the ubi_queries export
    events: Path  # the ubi_events export
    events_written: int
    relevance: np.ndarray  # the true relevance of each (query, doc), QUERIES x DOCS


def query_text(query: int) -> str:
    return f"query {query}"


def doc_id(query: int, doc: int) -> str:
    return f"q{query}-doc{doc}"


def position_based_log(
    folder: Path, seed: int, events: int, examination: np.ndarray
) -> SimulatedLog:
    """About `events` events from the position-based model: a document at rank r is
    clicked when rank r is examined (examination[r - 1]) and the document attracts
    (its attractiveness, drawn uniformly from 0.05 to 0.95), independently."""
    rng = np.random.default_rng(seed)
    attractiveness = rng.uniform(0.05, 0.95, (QUERIES, DOCS))
    # A search makes DOCS impressions and, on average, this many clicks.
    clicks_each = float(attractiveness.mean() * examination.sum())
    query, order = _searches(rng, round(events / (DOCS + clicks_each)))
    chance = attractiveness[query[:, None], order] * examination
    clicked = rng.random(order.shape) < chance
    return _written(folder, query, order, clicked, attractiveness)


def cascade_log(
    folder: Path,
    seed: int,
    events: int,
    attractiveness: np.ndarray,
    satisfaction: np.ndarray,
    continuation: float,
) -> SimulatedLog:
    """About `events` events from the dynamic Bayesian network (Chapelle & Zhang): the
    user examines rank 1; an examined document is clicked when it attracts; a click
    satisfies with the document's satisfaction, and a satisfied user stops; otherwise
    the user goes on to the next rank with probability `continuation`. Relevance is
    attractiveness x satisfaction."""
    rng = np.random.default_rng(seed)
    sessions = events // DOCS  # enough: each makes DOCS events and its clicks
    query, order = _searches(rng, sessions)
    a, s = attractiveness[query[:, None], order], satisfaction[query[:, None], order]
    examining = np.ones(sessions, dtype=bool)
    clicked = np.zeros(order.shape, dtype=bool)
    for rank in range(DOCS):
        clicked[:, rank] = examining & (rng.random(sessions) < a[:, rank])
        satisfied = clicked[:, rank] & (rng.random(sessions) < s[:, rank])
        examining &= ~satisfied & (rng.random(sessions) < continuation)
    keep = min(sessions, round(events / (DOCS + clicked.sum() / sessions)))
    return _written(
        folder, query[:keep], order[:keep], clicked[:keep], attractiveness * satisfaction
    )


def _searches(rng: np.random.Generator, sessions: int) -> tuple[np.ndarray, np.ndarray]:
    """Each search's query, and its documents in a fresh random order."""
    return rng.integers(0, QUERIES, sessions), np.argsort(rng.random((sessions, DOCS)), axis=1)


def _written(
    folder: Path,
    query: np.ndarray,
    order: np.ndarray,
    clicked: np.ndarray,
    relevance: np.ndarray,
) -> SimulatedLog:
    record = (
        '{"query_id": "s%d", "user_query": "%s", "query_response_hit_ids": [%s], '
        '"client_id": "c%d", "timestamp": "2026-10-01T10:00:00Z"}'
    )
    event = (
        '{"action_name": "%s", "query_id": "s%d", "timestamp": "2026-10-01T10:00:05Z", '
        '"event_attributes": {"object": {"object_id": "%s"}, "position": {"ordinal": %d}}}'
    )
    records, events = [], []
    for session, (each, shown, clicks) in enumerate(
        zip(query.tolist(), order.tolist(), clicked.tolist(), strict=True)
    ):
        hits = [doc_id(each, doc) for doc in shown]
        records.append(
            record % (session, query_text(each), ", ".join(f'"{hit}"' for hit in hits), session)
        )
        events += [event % ("impression", session, hit, rank) for rank, hit in enumerate(hits)]
        events += [
            event % ("click", session, hits[rank], rank)
            for rank, click in enumerate(clicks)
            if click
        ]
    queries_path, events_path = folder / "ubi_queries.jsonl", folder / "ubi_events.jsonl"
    queries_path.write_text("\n".join(records) + "\n")
    events_path.write_text("\n".join(events) + "\n")
    return SimulatedLog(queries_path, events_path, len(events), relevance)
