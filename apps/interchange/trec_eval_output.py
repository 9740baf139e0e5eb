"""An evaluation's metrics as `trec_eval -q` prints them, so they can be diffed with it.

Each line is `measure<TAB>query<TAB>value`: one block per query trec_eval evaluates (a
keyword with judgements and values), in trec_eval's order of queries (their ids sorted as
text), then the `all` lines: the run id, the number of those queries (`num_q`), and each
measure's mean over them. `gm_map` is printed in the `all` block only, as trec_eval does.
Values have four decimals, as trec_eval prints them; the names are padded to 22
characters as trec_eval pads them, so `diff` lines up line for line.

Under the `trec` profile a metric trec_eval offers takes trec_eval's name (P_10,
map_cut_100, map, gm_map, Rprec, bpref, infAP, recip_rank, iprec_at_recall_0.10, 11pt_avg,
recall_100, set_recall, set_F, ndcg_cut_10, ndcg, success_10, set_P, num_rel...) and its value equals
trec_eval's; the counts (num_ret, num_rel, num_rel_ret) are whole numbers per query and
their sum in `all`, as trec_eval prints them; within a query the measures come in
trec_eval's order. Every other metric, and every metric under `searchtweak` (whose
numbers differ from trec_eval's by design), is named `<metric id>_cut_<k>`, or the id
alone for the whole list, so no line claims a trec_eval name it would not reproduce.
"""

import math
from collections.abc import Iterable
from typing import TextIO

from django.db.models import Exists, OuterRef

from apps.engine import COVERAGE, WHOLE_LIST
from apps.engine.metrics import RECALL_LEVELS, trec_eval_recall_name
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    UnretrievedJudgement,
)
from apps.judging.models import SnapshotDecision
from apps.scoring.models import KeywordMetric

from .trec_columns import to_column

RUN_ID = "relevo"

# Relevo metric -> (trec_eval name at a cutoff, trec_eval name over the whole list).
TREC_EVAL_NAMES: dict[str, tuple[str | None, str | None]] = {
    "ap": ("map_cut_{k}", "map"),
    "rr": (None, "recip_rank"),
    "precision": ("P_{k}", "set_P"),
    "recall": ("recall_{k}", "set_recall"),
    "ndcg": ("ndcg_cut_{k}", "ndcg"),
    "rprec": (None, "Rprec"),
    "bpref": (None, "bpref"),
    "infap": (None, "infAP"),
    "f1": (None, "set_F"),
    "gm_ap": (None, "gm_map"),
    "success": ("success_{k}", None),
    "num_ret": (None, "num_ret"),
    "num_rel": (None, "num_rel"),
    "num_rel_ret": (None, "num_rel_ret"),
    "iprec_avg": (None, "11pt_avg"),
    **{f"iprec_{level}": (None, trec_eval_recall_name(level)) for level in RECALL_LEVELS},
}
# Counts: trec_eval prints them as whole numbers, and sums them over the queries in `all`.
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
# Measures trec_eval prints in the `all` block only: a query's log AP is no AP to read.
SUMMARY_ONLY = {"gm_ap"}
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


def measure_name(metric: str, k: int, profile: str) -> str:
    """The name of (metric, k) in the output (see the module docstring)."""
    if profile == "trec" and metric in TREC_EVAL_NAMES:
        at_k, whole = TREC_EVAL_NAMES[metric]
        if k == WHOLE_LIST and whole is not None:
            return whole
        if k != WHOLE_LIST and at_k is not None:
            return at_k.format(k=k)
    return metric if k == WHOLE_LIST else f"{metric}_cut_{k}"


def _sort_key(name: str) -> tuple[int, str, int]:
    """trec_eval's measures in its order, by cutoff within one; the others after them."""
    stem, _, cutoff = name.rpartition("_")
    if stem == "iprec_at_recall":  # iprec_at_recall_0.10: its level orders it
        stem, number = stem + "_", int(round(float(cutoff) * 100))
    elif cutoff.isdigit():
        stem, number = stem + "_", int(cutoff)
    else:
        stem, number = name, 0
    if stem in TREC_EVAL_ORDER:
        return (TREC_EVAL_ORDER.index(stem), "", number)
    return (len(TREC_EVAL_ORDER), stem, number)


def _line(measure: str, query: str, value: str) -> str:
    return f"{measure:<22}\t{query}\t{value}\n"


def export_trec_eval(evaluation: Evaluation, out: TextIO) -> None:
    """Write the per-keyword values and the `all` means in trec_eval -q's format."""
    profile = evaluation.profile
    metrics = list(
        EvaluationMetric.objects.filter(evaluation=evaluation).values_list("metric", "k", "value")
    )
    names = {(metric, k): measure_name(metric, k, profile) for metric, k, _ in metrics}
    ordered = sorted(names.items(), key=lambda item: _sort_key(item[1]))
    per_query = _values_by_query(evaluation)
    # trec_eval evaluates a query only when the qrels judge it: the coverage measures,
    # defined wherever there are results, do not make a query without judgements count.
    judged = _judged_queries(evaluation)
    evaluated = {
        query
        for query, values in per_query.items()
        if query in judged and any(value is not None for value in values.values())
    }
    for query in sorted(evaluated):
        values = per_query[query]
        for key, name in ordered:
            value = values.get(key)
            if value is not None and key[0] not in SUMMARY_ONLY:
                out.write(_line(name, query, _shown(key, value)))
    out.write(_line("runid", "all", RUN_ID))
    out.write(_line("num_q", "all", str(len(evaluated))))
    means = {(metric, k): value for metric, k, value in metrics}
    for key, name in ordered:
        if key[0] in COUNTS:
            counted = [
                value for query in evaluated if (value := per_query[query].get(key)) is not None
            ]
            if counted:
                out.write(_line(name, "all", _shown(key, math.fsum(counted))))
        elif key[0] in COVERAGE:
            # Stored means read every keyword with results; trec_eval's only its queries.
            covered = [
                value for query in evaluated if (value := per_query[query].get(key)) is not None
            ]
            if covered:
                out.write(_line(name, "all", _shown(key, math.fsum(covered) / len(covered))))
        elif (mean := means[key]) is not None:
            out.write(_line(name, "all", _shown(key, mean)))


def _shown(key: tuple[str, int], value: float) -> str:
    return str(round(value)) if key[0] in COUNTS else f"{value:6.4f}"


def _judged_queries(evaluation: Evaluation) -> set[str]:
    """The queries in the qrels: keywords with a grade, a lead's decision or a judged
    document they did not retrieve (as TREC columns)."""
    keyword = OuterRef("pk")
    judged = Keyword.objects.filter(evaluation=evaluation).filter(
        Exists(FeedbackSlot.objects.filter(keyword=keyword, grade__isnull=False))
        | Exists(UnretrievedJudgement.objects.filter(keyword=keyword))
        | Exists(SnapshotDecision.objects.filter(snapshot__keyword=keyword))
    )
    return {to_column(text) for text in judged.values_list("text", flat=True)}


def _values_by_query(evaluation: Evaluation) -> dict[str, dict[tuple[str, int], float | None]]:
    """query id (the keyword as a TREC column) -> (metric, k) -> value."""
    rows: Iterable[tuple[str, str, int, float | None]] = (
        KeywordMetric.objects.filter(evaluation=evaluation)
        .values_list("keyword__text", "metric", "k", "value")
        .iterator(chunk_size=20_000)
    )
    values: dict[str, dict[tuple[str, int], float | None]] = {}
    for text, metric, k, value in rows:
        values.setdefault(to_column(text), {})[(metric, k)] = value
    return values
