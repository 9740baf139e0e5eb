"""`{% metric_help %}`: every metric there is, with its one-line definition, under each
field where metrics are typed (the evaluation form, the TREC import)."""

from typing import Any

from django import template

from apps import engine

register = template.Library()


@register.inclusion_tag("evaluations/_metric_help.html")
def metric_help() -> dict[str, Any]:
    return {"metrics": list(engine.METRICS.values())}
