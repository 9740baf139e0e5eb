"""An evaluation's metrics as `trec_eval -q` prints them, so they can be diffed with it.

One block per query trec_eval evaluates (a keyword with judgements and values), then the
`all` block; the text itself is apps/trec_eval/report.py's, the one the standalone
scorer prints. Under the `trec` profile a metric trec_eval offers takes trec_eval's name
(P_10, map, gm_map, infAP, set_F, ...) and its value equals trec_eval's. Every other
metric, and every metric under `searchtweak` (whose numbers differ from trec_eval's by
design), is named `<metric id>_cut_<k>`, or the id alone for the whole list, so no line
claims a trec_eval name it would not reproduce. The `runid` is the imported run's tag.
"""

from collections.abc import Iterable
from typing import TextIO

from django.db.models import Exists, OuterRef

from apps.engine import COVERAGE
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    UnretrievedJudgement,
)
from apps.judging.models import SnapshotDecision
from apps.scoring.models import KeywordMetric
from apps.trec_eval.report import Report, write_report

from .query_ids import query_ids

# The run id of an evaluation that did not come from a TREC run file.
RUN_ID = "relevo"


def export_trec_eval(evaluation: Evaluation, out: TextIO) -> None:
    """Write the per-keyword values and the `all` block in trec_eval -q's format."""
    stored = list(
        EvaluationMetric.objects.filter(evaluation=evaluation).values_list("metric", "k", "value")
    )
    qids = query_ids(evaluation)  # the queries as the qrels and run exports name them
    per_query = _values_by_query(evaluation, qids)
    # trec_eval evaluates a query only when the qrels judge it: the coverage measures,
    # defined wherever there are results, do not make a query without judgements count.
    judged = _judged_queries(evaluation, qids)
    evaluated = {
        query: values
        for query, values in per_query.items()
        if query in judged and any(value is not None for value in values.values())
    }
    report = Report(
        run_id=evaluation.run_tag or RUN_ID,
        profile=evaluation.profile,
        metrics=[(metric, k) for metric, k, _ in stored],
        per_query=evaluated,
        # The stored means, except the coverage measures': those read every keyword with
        # results, trec_eval only the queries it evaluates.
        means={(metric, k): value for metric, k, value in stored if metric not in COVERAGE},
    )
    write_report(report, out)


def _judged_queries(evaluation: Evaluation, qids: dict[int, str]) -> set[str]:
    """The queries in the qrels: keywords with a grade, a lead's decision or a judged
    document they did not retrieve (by their qids)."""
    keyword = OuterRef("pk")
    judged = Keyword.objects.filter(evaluation=evaluation).filter(
        Exists(FeedbackSlot.objects.filter(keyword=keyword, grade__isnull=False))
        | Exists(UnretrievedJudgement.objects.filter(keyword=keyword))
        | Exists(SnapshotDecision.objects.filter(snapshot__keyword=keyword))
    )
    return {qids[keyword_id] for keyword_id in judged.values_list("id", flat=True)}


def _values_by_query(
    evaluation: Evaluation, qids: dict[int, str]
) -> dict[str, dict[tuple[str, int], float | None]]:
    """query id (query_ids.py) -> (metric, k) -> value."""
    rows: Iterable[tuple[int, str, int, float | None]] = (
        KeywordMetric.objects.filter(evaluation=evaluation)
        .values_list("keyword_id", "metric", "k", "value")
        .iterator(chunk_size=20_000)
    )
    values: dict[str, dict[tuple[str, int], float | None]] = {}
    for keyword_id, metric, k, value in rows:
        values.setdefault(qids[keyword_id], {})[(metric, k)] = value
    return values
