"""The regression gate's page (lead only): choose a baseline and a candidate evaluation,
or run a search model now against the baseline, and read the gate's verdict with its rule
and numbers, beside the CI calls that ask the same. The rules are gate_asking.py's (the
command's and the API's); everything is looked up inside the current team."""

from __future__ import annotations

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


@require_GET
@lead_required
def gate_page(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    asked = "baseline" in request.GET
    form = GateForm(request.GET if asked else None, evaluations=_evaluations(request))
    answer = saved_through(form, lambda data: gate_ask(team=team, **data))
    run_form = _run_form(request, initial={"baseline": request.GET.get("baseline", "")})
    return _page(request, form, run_form, answer)


@require_POST
@lead_required
def gate_run(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    run_form = _run_form(request, data=request.POST)
    run = saved_through(run_form, lambda data: gate_run_start(team=team, **data))
    if run is None:
        return _page(request, GateForm(evaluations=_evaluations(request)), run_form, None)
    assert run.evaluation is not None
    messages.success(
        request,
        f"Started {run.evaluation.name}: the baseline's keywords run on the model now; "
        "the verdict is undecided until its new results are graded.",
    )
    query = {
        "baseline": str(run.baseline_id),
        "candidate": str(run.evaluation.id),
        "run": str(run.id),
    }
    if run.min_change:
        query["min_change"] = f"{run.min_change:g}"
    return redirect(f"{reverse('schedules:gate')}?{urlencode(query)}")


def _page(
    request: TeamRequest, form: GateForm, run_form: GateRunForm, answer: GateAnswer | None
) -> HttpResponse:
    api_url = request.build_absolute_uri(reverse("api:gate"))
    run = candidate_run_of(request.membership.team, request.GET.get("run"))
    context = {
        "form": form,
        "run_form": run_form,
        "answer": answer,
        "calls": ci_calls(answer.question, api_url) if answer else [],
        "run": run,
        "run_calls": model_ci_calls(run, api_url) if run and run.evaluation else [],
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
