"""The evaluation page's "Judge what decides" form: a lead switches the decision order
of the queue on (with a rival and a metric) or off (apps/judging/decisive.py)."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation
from apps.judging.decisive import decisive_order_clear, decisive_order_set


def _team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    return get_object_or_404(Evaluation, id=evaluation_id, team_id=request.membership.team_id)


@require_POST
@lead_required
def decisive_order_on(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _team_evaluation(request, evaluation_id)
    try:
        decisive_order_set(
            evaluation=evaluation,
            rival_id=request.POST.get("rival", ""),
            metric=request.POST.get("metric", ""),
            min_change=request.POST.get("min_change", ""),
            lead=request.user,
        )
    except InvalidInput as error:
        return render(request, "insights/_problems.html", {"problems": error.problems}, status=400)
    messages.success(request, "The queue now gives first the results that decide the comparison.")
    return redirect("insights:evaluation_detail", evaluation.id)


@require_POST
@lead_required
def decisive_order_off(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _team_evaluation(request, evaluation_id)
    decisive_order_clear(evaluation=evaluation)
    messages.success(request, "The queue is back in keyword order.")
    return redirect("insights:evaluation_detail", evaluation.id)
