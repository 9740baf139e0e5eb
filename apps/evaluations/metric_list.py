"""The short way people write an evaluation's metrics: "ndcg@10, precision@5"."""


def parse_metric_list(text: str) -> list[tuple[str, int]]:
    """'ndcg@10, precision@5' -> [("ndcg", 10), ("precision", 5)]; ValueError if malformed.

    Only the shape is checked here; whether a metric exists and k is in range is the
    evaluation's own validation, which names every problem.
    """
    metrics: list[tuple[str, int]] = []
    for item in (piece.strip() for piece in text.split(",")):
        if not item:
            continue
        metric, at, k = item.partition("@")
        if not at or not metric.strip() or not k.strip().isdigit():
            raise ValueError(f"{item!r} is not metric@k (e.g. ndcg@10)")
        metrics.append((metric.strip(), int(k)))
    if not metrics:
        raise ValueError("name at least one metric, e.g. ndcg@10")
    return metrics
