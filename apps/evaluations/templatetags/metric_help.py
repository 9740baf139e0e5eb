"""`{% metric_help %}`: every metric there is, with its one-line definition, under each
field where metrics are typed (the evaluation form, the TREC import)."""

from typing import Any

from django import template

from apps import engine

register = template.Library()


@register.inclusion_tag("evaluations/_metric_help.html")
def metric_help() -> dict[str, Any]:
    # A condensed twin (ndcg_cond) is its metric again on another list: one line says so.
    return {"metrics": [m for m in engine.METRICS.values() if not m.id.endswith(engine.CONDENSED)]}
