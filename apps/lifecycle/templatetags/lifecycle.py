"""`{% lifecycle_of evaluation as lifecycle %}`: the evaluation page's lifecycle buttons
and keyword counts, for the partial that every page showing an evaluation includes."""

from typing import Any

from django import template

from apps.evaluations.models import Evaluation
from apps.lifecycle.page_actions import LifecycleState, lifecycle_state

register = template.Library()


@register.simple_tag(takes_context=True)
def lifecycle_of(context: dict[str, Any], evaluation: Evaluation) -> LifecycleState:
    membership = context.get("membership")
    baseline_id = membership.team.baseline_evaluation_id if membership is not None else None
    return lifecycle_state(evaluation, baseline_id=baseline_id)
