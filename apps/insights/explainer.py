"""The metric explainer's page: one keyword's value of one metric, step by step, with
each rank's document (apps/engine/explain.py computes the steps)."""

from typing import Any

from django.http import Http404

from apps.core.typed import parse_int
from apps.engine import MAX_CUTOFF, WHOLE_LIST
from apps.evaluations.metric_list import metric_text
from apps.evaluations.models import EvaluationMetric, Keyword, Snapshot
from apps.scoring.loading import load_keyword_inputs


def explain_value(keyword: Keyword, metric: str, k: str) -> dict[str, Any]:
    """The explanation and the documents of its ranks; Http404 unless (metric, k) is one
    of the keyword's evaluation's metrics (the address is bounded before it is read)."""
    cutoff = parse_int(k, WHOLE_LIST, MAX_CUTOFF)
    if cutoff is None or len(metric) > 32:
        raise Http404("No such metric in this evaluation.")
    if not EvaluationMetric.objects.filter(
        evaluation_id=keyword.evaluation_id, metric=metric, k=cutoff
    ).exists():
        raise Http404("No such metric in this evaluation.")
    inputs = load_keyword_inputs(keyword_id=keyword.id)
    if inputs is None:
        raise Http404("No such keyword.")
    explanation = inputs.explain(metric, cutoff)
    documents = dict(
        (position, (doc_id, name))
        for position, doc_id, name in Snapshot.objects.filter(keyword=keyword)
        .order_by("position")
        .values_list("position", "doc_id", "name")
    )
    return {
        "explanation": explanation,
        "documents": documents,
        "rows": [(step, documents.get(step.position, ("", ""))) for step in explanation.steps],
        "metric_key": metric_text(metric, cutoff),
        "whole_list": cutoff == WHOLE_LIST,
    }
