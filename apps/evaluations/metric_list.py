"""How people and documents write an evaluation's metrics.

In text, "ndcg@10, precision@5, ap": a metric with its cutoff, or alone for the whole
list; trec_eval's names are understood too ("map, P_10, ndcg_cut_100, recip_rank").
In JSON, {"metric": "ap", "k": 10}, with "k": null (or 0) for the whole list. Inside
Relevo the whole list is k = engine.WHOLE_LIST (0), so (metric, k) stays a pair of
plain values in every table and dictionary.
"""

import re
from collections.abc import Iterable
from typing import Any

from apps.core.typed import BIGINT_MAX, SMALLINT_MAX, parse_int
from apps.engine import MAX_CUTOFF, WHOLE_LIST
from apps.engine.metrics import trec_eval_metrics


def _trec_eval_aliases() -> dict[str, tuple[str, int | None]]:
    """trec_eval's names of each metric (its definition's, apps/engine/metrics.py), lower
    case: the name at a cutoff without "_{k}" (P, map_cut) takes a cutoff, the name over
    the whole list (map, set_P) is the whole list unless "@k" says otherwise."""
    aliases: dict[str, tuple[str, int | None]] = {}
    for metric in trec_eval_metrics():
        at_cutoff, whole_list = metric.trec_eval.at_cutoff, metric.trec_eval.whole_list
        if at_cutoff is not None:
            aliases[at_cutoff.removesuffix("_{k}").lower()] = (metric.id, None)
        if whole_list is not None:
            aliases[whole_list.lower()] = (metric.id, WHOLE_LIST)
    return aliases


# trec_eval's names for the measures Relevo has, so people coming from trec_eval can
# write what they know: "map, P_10, ndcg_cut_100, recip_rank". Name -> (metric, k),
# k None when the name carries its cutoff after "_" (P_10) or takes "@k" (P@10).
TREC_EVAL_ALIASES = _trec_eval_aliases()
_CUTOFF_SUFFIX = re.compile(r"^(?P<name>[a-z_]+?)_(?P<k>[0-9]{1,5})$")


def parse_metric_list(text: str) -> list[tuple[str, int]]:
    """'ndcg@10, precision@5, ap' -> [("ndcg", 10), ("precision", 5), ("ap", 0)];
    ValueError if malformed.

    Only the shape is checked here, and that k fits its column (a smallint); whether a
    metric exists and k is at most engine.MAX_CUTOFF is the evaluation's own validation,
    which names every problem.
    """
    metrics: list[tuple[str, int]] = []
    for item in (piece.strip() for piece in text.split(",")):
        if not item:
            continue
        metric, at, k = item.partition("@")
        cutoff = parse_int(k, WHOLE_LIST, BIGINT_MAX) if at else None
        if not metric.strip() or (at and cutoff is None):
            raise ValueError(f"{item!r} is not metric@k (e.g. ndcg@10) or a metric alone")
        if cutoff is not None and cutoff > SMALLINT_MAX:  # past the cutoffs' column
            raise ValueError(f"{item!r}: k is at most {MAX_CUTOFF}")
        if at and cutoff == WHOLE_LIST:
            raise ValueError(
                f"{item!r}: k starts at 1; write {metric.strip()!r} for the whole list"
            )
        metrics.append(_from_trec_eval(metric.strip().lower(), cutoff))
    if not metrics:
        raise ValueError("name at least one metric, e.g. ndcg@10")
    return metrics


def _from_trec_eval(name: str, k: int | None) -> tuple[str, int]:
    """(metric, k) of a name as written, trec_eval's names included (P_10 -> precision@10,
    map -> ap over the whole list); any other name is passed on as it is."""
    suffix = _CUTOFF_SUFFIX.match(name) if k is None else None
    cutoff = parse_int(suffix["k"], WHOLE_LIST, SMALLINT_MAX) if suffix else None
    if suffix and cutoff is not None:
        aliased, fixed = TREC_EVAL_ALIASES.get(suffix["name"], ("", WHOLE_LIST))
        if fixed is None:
            return aliased, cutoff
    if name in TREC_EVAL_ALIASES:
        metric, fixed = TREC_EVAL_ALIASES[name]
        if fixed is None:  # P, recall: a cutoff with @, else the whole list
            return metric, WHOLE_LIST if k is None else k
        # map, recip_rank, set_P name the whole list; with @k they are ap@k, rr@k, P@k.
        return metric, fixed if k is None else k
    return name, WHOLE_LIST if k is None else k


def metric_names_folded(metrics: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The (metric, k) pairs with each name as Relevo spells it (trimmed, lower case:
    "NDCG" is ndcg), whoever wrote them (a form, the API, a document); anything that is
    not a name is left for the evaluation's validation to name."""
    return [
        (metric.strip().lower() if isinstance(metric, str) else metric, k) for metric, k in metrics
    ]


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
