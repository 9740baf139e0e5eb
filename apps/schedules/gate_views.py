"""The regression gate's page (lead only): choose a baseline and a candidate evaluation,
or run a search model now against the baseline, and read the gate's verdict with its rule
and numbers, beside the CI calls that ask the same. The rules are gate_asking.py's (the
command's and the API's); everything is looked up inside the current team."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.forms import saved_through
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation
from apps.insights.gate import SAME_SOURCES
from apps.judges.models import Judge

from .forms import GateForm, GateRunForm
from .gate_asking import (
    GateAnswer,
    candidate_run_of,
    ci_calls,
    gate_ask,
    gate_run_start,
    model_ci_calls,
)
from .models import ScheduledRun


@require_GET
@lead_required
def gate_page(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    run = candidate_run_of(team, request.GET.get("run"))
    asked = _asked(request, run)
    form = GateForm(asked, evaluations=_evaluations(request))
    answer = saved_through(form, lambda data: gate_ask(team=team, **data))
    initial = {"baseline": asked.get("baseline", "") if asked else ""}
    return _page(request, form, _run_form(request, initial=initial), answer, run)


def _asked(request: TeamRequest, run: ScheduledRun | None) -> Mapping[str, Any] | None:
    """What the gate is asked: the form's fields, or a model run's candidate against its
    baseline once the model has run."""
    if "baseline" in request.GET:
        return request.GET
    if run is None or run.evaluation_id is None or run.baseline_id is None:
        return None
    return {
        "baseline": str(run.baseline_id),
        "candidate": str(run.evaluation_id),
        "min_change": f"{run.min_change:g}",
        "sources": SAME_SOURCES,
    }


@require_POST
@lead_required
def gate_run(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    run_form = _run_form(request, data=request.POST)
    run = saved_through(run_form, lambda data: gate_run_start(team=team, **data))
    if run is None:
        return _page(request, GateForm(evaluations=_evaluations(request)), run_form, None, None)
    messages.success(
        request,
        f"Started: the baseline's keywords run on {run.attempt} now; the verdict is "
        "undecided until its new results are graded.",
    )
    query = {"run": str(run.id)}
    return redirect(f"{reverse('schedules:gate')}?{urlencode(query)}")


def _page(
    request: TeamRequest,
    form: GateForm,
    run_form: GateRunForm,
    answer: GateAnswer | None,
    run: ScheduledRun | None,
) -> HttpResponse:
    api_url = request.build_absolute_uri(reverse("api:gate"))
    context = {
        "form": form,
        "run_form": run_form,
        "answer": answer,
        "calls": ci_calls(answer.question, api_url) if answer else [],
        "run": run,
        "run_calls": model_ci_calls(run, api_url) if run else [],
    }
    return render(request, "schedules/gate.html", context)


def _evaluations(request: TeamRequest) -> QuerySet[Evaluation]:
    return Evaluation.objects.filter(team_id=request.membership.team_id, archived=False)


def _run_form(request: TeamRequest, **kwargs: Any) -> GateRunForm:
    team_id = request.membership.team_id
    return GateRunForm(
        kwargs.pop("data", None),
        evaluations=_evaluations(request),
        models=SearchModel.objects.filter(team_id=team_id).order_by("name"),
        judges=Judge.objects.filter(team_id=team_id).order_by("name"),
        **kwargs,
    )
