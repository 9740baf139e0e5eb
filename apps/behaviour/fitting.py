"""A stored log's click models: its counts and sessions read back into the engine's
arrays, and the model a lead chose fitted to them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import TextChoices

from apps import engine
from apps.engine import clicks

from .models import ClickCount, ClickLog, SessionPattern


class ClickModel(TextChoices):
    CTR = "ctr", "CTR"
    COEC = "coec", "COEC"
    PBM = "pbm", "PBM"
    DBN = "dbn", "DBN"


def log_counts(log: ClickLog) -> clicks.ImpressionCounts:
    """The log's impressions and clicks per query, document and rank."""
    queries: dict[str, int] = {}
    docs: dict[str, int] = {}
    query, doc, rank, impressions, clicked = [], [], [], [], []
    rows = ClickCount.objects.filter(log=log).values_list(
        "query", "doc_id", "rank", "impressions", "clicks"
    )
    for text, doc_id, at, shown, hits in rows.iterator(chunk_size=10_000):
        query.append(queries.setdefault(text, len(queries)))
        doc.append(docs.setdefault(doc_id, len(docs)))
        rank.append(at)
        impressions.append(shown)
        clicked.append(hits)
    return clicks.ImpressionCounts(
        queries=list(queries),
        docs=list(docs),
        query=np.asarray(query, dtype=np.int64),
        doc=np.asarray(doc, dtype=np.int64),
        rank=np.asarray(rank, dtype=np.int64),
        impressions=np.asarray(impressions, dtype=np.int64),
        clicks=np.asarray(clicked, dtype=np.int64),
    )


def log_sessions(log: ClickLog) -> clicks.SessionPatterns:
    """The log's distinct sessions with how often each happened."""
    counter = clicks.SessionCounter()
    rows = SessionPattern.objects.filter(log=log).values_list("query", "docs", "clicks", "count")
    for query, shown, clicked, count in rows.iterator(chunk_size=10_000):
        counter.add(query, shown, clicked, count)
    return counter.patterns()


@dataclass(frozen=True)
class Fitted:
    """A model's estimates on a log: those on at least the minimum of impressions, and
    how many pairs the log has in all."""

    estimates: clicks.Estimates
    pairs: int


def log_fitted(log: ClickLog, model: str, *, minimum: int = 0) -> Fitted:
    """`model` fitted to the log; the estimates kept are those on `minimum` impressions
    or more (a log's thin pairs are most of its pairs: not kept, they cost no memory)."""
    if model == ClickModel.DBN:
        every = clicks.dbn(log_sessions(log)).estimates
        return Fitted(clicks.enough(every, minimum), len(every))
    counts = log_counts(log)
    pairs = np.unique(counts.query.astype(np.int64) * len(counts.docs) + counts.doc).size
    if model == ClickModel.CTR:
        return Fitted(clicks.ctr(counts, minimum=minimum), pairs)
    if model == ClickModel.COEC:
        return Fitted(clicks.coec(counts, minimum=minimum), pairs)
    if model == ClickModel.PBM:
        return Fitted(clicks.pbm(counts, minimum=minimum).estimates, pairs)
    raise engine.EngineError(f"no click model named {model!r}")


def log_estimates(log: ClickLog, model: str, *, minimum: int = 0) -> clicks.Estimates:
    """The (query, document) estimates of `model` on the log, on at least `minimum`
    impressions (0: every one)."""
    if model not in ClickModel.values:
        raise engine.EngineError(f"no click model named {model!r}")
    return log_fitted(log, model, minimum=minimum).estimates
