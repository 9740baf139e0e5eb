"""trec_eval's names for the measures Relevo has, both ways.

``measure_name`` gives the line name of a Relevo (metric, k); ``requested_metrics`` reads
trec_eval's -m specifications ("P.5,10", "map", "ndcg_cut", "all_trec") into Relevo's
(metric, k) pairs; ``sort_key`` puts lines in the order trec_eval prints them.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.engine.conventions import MAX_CUTOFF, RECALL_LEVELS, TREC, WHOLE_LIST
from apps.engine.metrics import get_metric, trec_eval_metrics


class MeasureError(ValueError):
    """A -m specification trec_eval would not accept either."""


# Relevo metric -> (trec_eval name at a cutoff, trec_eval name over the whole list), as
# each metric's definition in apps/engine/metrics.py gives them.
TREC_EVAL_NAMES: dict[str, tuple[str | None, str | None]] = {
    metric.id: (metric.trec_eval.at_cutoff, metric.trec_eval.whole_list)
    for metric in trec_eval_metrics()
}
# Counts: trec_eval prints them as whole numbers, and sums them over the queries in `all`.
COUNTS = frozenset({"num_ret", "num_rel", "num_rel_ret"})
# Measures trec_eval prints in the `all` block only: a query's log AP is no AP to read.
SUMMARY_ONLY = frozenset({"gm_ap"})
# The order in which trec_eval prints these measures (its measure table), cutoffs
# ascending within each.
TREC_EVAL_ORDER = [
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall_",
    "P_",
    "recall_",
    "infAP",
    "11pt_avg",
    "ndcg",
    "ndcg_cut_",
    "map_cut_",
    "success_",
    "set_P",
    "set_recall",
    "set_F",
]

# trec_eval's cutoffs when a measure that takes them is named without any.
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)
# A -m name -> the Relevo metric, and whether it takes cutoffs ("P.5,10"): the name at a
# cutoff without its "_{k}".
WITH_CUTOFFS = {
    at_k.removesuffix("_{k}"): metric
    for metric, (at_k, _) in TREC_EVAL_NAMES.items()
    if at_k is not None
}
WHOLE_LIST_ONLY = {
    whole: metric for metric, (_, whole) in TREC_EVAL_NAMES.items() if whole is not None
}
WHOLE_LIST_ONLY["iprec_at_recall"] = "iprec"  # all eleven levels, as trec_eval prints them
# trec_eval's default measures (no -m), and every measure Relevo has (-m all_trec).
OFFICIAL = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
ALL_TREC = OFFICIAL + (
    "recall",
    "infAP",
    "11pt_avg",
    "ndcg",
    "ndcg_cut",
    "map_cut",
    "success",
    "set_P",
    "set_recall",
    "set_F",
)
GROUPS = {"official": OFFICIAL, "all_trec": ALL_TREC}
# How many cutoffs one -m may list: trec_eval's own measures have at most a dozen.
MAX_CUTOFFS = 50


def measure_name(metric: str, k: int, profile: str = TREC) -> str:
    """The line name of (metric, k): trec_eval's under `trec` where trec_eval has the
    measure, else `<metric id>_cut_<k>` (the id alone over the whole list), so no line
    claims a trec_eval name whose value it would not reproduce. EngineError for a metric
    Relevo does not have."""
    names = get_metric(metric).trec_eval  # an unknown metric is an EngineError
    if profile == TREC:
        if k == WHOLE_LIST and names.whole_list is not None:
            return names.whole_list
        if k != WHOLE_LIST and names.at_cutoff is not None:
            return names.at_cutoff.format(k=k)
    return metric if k == WHOLE_LIST else f"{metric}_cut_{k}"


def sort_key(name: str) -> tuple[int, str, int]:
    """trec_eval's measures in its order, by cutoff within one; the others after them."""
    stem, _, cutoff = name.rpartition("_")
    if stem == "iprec_at_recall":  # iprec_at_recall_0.10: its level orders it
        stem, number = stem + "_", int(round(float(cutoff) * 100))
    elif cutoff.isascii() and cutoff.isdigit():
        stem, number = stem + "_", int(cutoff)
    else:
        stem, number = name, 0
    if stem in TREC_EVAL_ORDER:
        return (TREC_EVAL_ORDER.index(stem), "", number)
    return (len(TREC_EVAL_ORDER), stem, number)


def requested_metrics(specifications: Iterable[str]) -> list[tuple[str, int]]:
    """Relevo's (metric, k) pairs for trec_eval -m specifications, in order, each once:
    "P.5,10" -> P@5, P@10; "P" -> P at trec_eval's default cutoffs; "map" -> AP over
    the whole list; "official" and "all_trec" -> their groups. No specification at all
    means "official", as trec_eval prints by default. MeasureError names a bad one."""
    metrics: dict[tuple[str, int], None] = {}
    for specification in list(specifications) or ["official"]:
        for metric in _one_specification(specification):
            metrics.setdefault(metric)
    return list(metrics)


def _one_specification(specification: str) -> list[tuple[str, int]]:
    name, dot, cutoffs_text = specification.strip().partition(".")
    if name in GROUPS and not dot:
        return [metric for member in GROUPS[name] for metric in _one_specification(member)]
    if name in WITH_CUTOFFS:
        default = SUCCESS_CUTOFFS if name == "success" else DEFAULT_CUTOFFS
        cutoffs = _cutoffs(specification, cutoffs_text) if dot else default
        return [(WITH_CUTOFFS[name], k) for k in cutoffs]
    if name in WHOLE_LIST_ONLY and not dot:
        metric = WHOLE_LIST_ONLY[name]
        if metric == "iprec":
            return [(f"iprec_{level}", WHOLE_LIST) for level in RECALL_LEVELS]
        return [(metric, WHOLE_LIST)]
    known = sorted([*WITH_CUTOFFS, *WHOLE_LIST_ONLY, *GROUPS])
    if name in WHOLE_LIST_ONLY:
        raise MeasureError(f"-m {specification}: {name} takes no cutoffs")
    raise MeasureError(
        f"-m {specification}: not a measure Relevo computes; one of {', '.join(known)}"
    )


def _cutoffs(specification: str, text: str) -> list[int]:
    cutoffs = []
    for part in text.split(","):
        if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= MAX_CUTOFF:
            raise MeasureError(
                f"-m {specification}: cutoff {part!r} must be a whole number from 1 to {MAX_CUTOFF}"
            )
        cutoffs.append(int(part))
    if len(cutoffs) > MAX_CUTOFFS:
        raise MeasureError(f"-m {specification}: at most {MAX_CUTOFFS} cutoffs")
    return sorted(set(cutoffs))
