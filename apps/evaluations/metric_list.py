"""How people and documents write an evaluation's metrics.

In text, "ndcg@10, precision@5, ap": a metric with its cutoff, or alone for the whole
list. In JSON, {"metric": "ap", "k": 10}, with "k": null (or 0) for the whole list. Inside
Relevo the whole list is k = engine.WHOLE_LIST (0), so (metric, k) stays a pair of
plain values in every table and dictionary.
"""

from apps.scoring.engine import WHOLE_LIST


def parse_metric_list(text: str) -> list[tuple[str, int]]:
    """'ndcg@10, precision@5, ap' -> [("ndcg", 10), ("precision", 5), ("ap", 0)];
    ValueError if malformed.

    Only the shape is checked here; whether a metric exists and k is in range is the
    evaluation's own validation, which names every problem.
    """
    metrics: list[tuple[str, int]] = []
    for item in (piece.strip() for piece in text.split(",")):
        if not item:
            continue
        metric, at, k = item.partition("@")
        if not metric.strip() or (at and not k.strip().isdigit()):
            raise ValueError(f"{item!r} is not metric@k (e.g. ndcg@10) or a metric alone")
        if at and int(k) == WHOLE_LIST:
            raise ValueError(
                f"{item!r}: k starts at 1; write {metric.strip()!r} for the whole list"
            )
        metrics.append((metric.strip().lower(), int(k) if at else WHOLE_LIST))
    if not metrics:
        raise ValueError("name at least one metric, e.g. ndcg@10")
    return metrics


def metric_text(metric: str, k: int) -> str:
    """The text form of one (metric, k): "ndcg@10", or "ap" for the whole list."""
    return metric if k == WHOLE_LIST else f"{metric}@{k}"


def cutoff_out(k: int) -> int | None:
    """k as JSON shows it: null for the whole list."""
    return None if k == WHOLE_LIST else k


def cutoff_in(k: object) -> object:
    """k as JSON gives it, inside Relevo: null (or 0) is the whole list; anything else
    is passed on for the evaluation's validation to judge."""
    return WHOLE_LIST if k is None else k
