"""A stored log's click models: its counts and sessions read back into the engine's
arrays, and the model a lead chose fitted to them."""

from __future__ import annotations

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


def log_estimates(log: ClickLog, model: str) -> clicks.Estimates:
    """Every (query, document) estimate of `model` on the log, thin ones included."""
    if model == ClickModel.CTR:
        return clicks.ctr(log_counts(log))
    if model == ClickModel.COEC:
        return clicks.coec(log_counts(log))
    if model == ClickModel.PBM:
        return clicks.pbm(log_counts(log)).estimates
    if model == ClickModel.DBN:
        return clicks.dbn(log_sessions(log)).estimates
    raise engine.EngineError(f"no click model named {model!r}")
