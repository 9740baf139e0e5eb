"""The "Judge what decides" page of an evaluation: where the comparison its queue is
ordered by stands, and the form with which a lead switches the decision order on (with
a rival and a metric) or off (apps/judging/decisive.py). The evaluation page shows the
status line and links here, so it pays for the rivals' list only here."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.engine.decisive import additive_metrics
from apps.evaluations.models import Evaluation
from apps.judging.decisive import (
    decisive_order_clear,
    decisive_order_set,
    decisive_status,
    rival_choices,
)


def _team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    evaluations = Evaluation.objects.select_related("decisive_order__rival")
    return get_object_or_404(evaluations, id=evaluation_id, team_id=request.membership.team_id)


@require_http_methods(["GET", "POST"])
@lead_required
def decisive_order_page(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """GET: the status and the form; POST: order the queue as the form says."""
    evaluation = _team_evaluation(request, evaluation_id)
    if request.method == "GET":
        return render(
            request,
            "insights/decisive_order.html",
            {
                "evaluation": evaluation,
                "decisive": decisive_status(evaluation=evaluation),
                "decisive_rivals": rival_choices(evaluation=evaluation),
                # The metrics the form takes, from the engine's registry.
                "decisive_metrics": additive_metrics(),
            },
        )
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
