"""The call log in the page, for a run and for a calibration: each call's prompt, answer,
the grades read from it, tokens, latency and error, filtered by outcome and paged
(call_log.call_log_page). Leads only; another team's run or calibration answers 404.
The JSON Lines download stays beside it (views.py, calibration_views.py)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest

from .call_log import ALL, FAILED, OUTCOMES, SUCCEEDED, call_log_page
from .models import CalibrationRun, JudgeCall, JudgeRun

BROAD = (ALL, SUCCEEDED, FAILED)


@lead_required
def run_calls(request: TeamRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        JudgeRun.objects.select_related("judge", "evaluation"),
        id=run_id,
        judge__team_id=request.membership.team_id,
    )
    return _render(
        request,
        JudgeCall.objects.filter(run=run),
        title=f"{run.judge.name} on {run.evaluation.name}",
        back=reverse("judges:run_detail", args=[run.id]),
        download=reverse("judges:run_call_log", args=[run.id]),
    )


@lead_required
def calibration_calls(request: TeamRequest, run_id: int) -> HttpResponse:
    calibration = get_object_or_404(
        CalibrationRun.objects.select_related("judge", "gold_set"),
        id=run_id,
        gold_set__team_id=request.membership.team_id,
    )
    return _render(
        request,
        JudgeCall.objects.filter(calibration=calibration),
        title=f"{calibration.graded_by} calibrated on {calibration.gold_set.name}",
        back=reverse("judges:gold_set_detail", args=[calibration.gold_set_id]),
        download=reverse("judges:calibration_call_log", args=[calibration.id]),
    )


def _render(
    request: TeamRequest, calls: QuerySet[JudgeCall], *, title: str, back: str, download: str
) -> HttpResponse:
    shown = call_log_page(
        calls, outcome=request.GET.get("outcome", ""), page_number=request.GET.get("page")
    )
    return render(
        request,
        "judges/call_log.html",
        {
            "title": title,
            "back": back,
            "download": download,
            "log": shown,
            # The three broad outcomes always; a kind of failure once a call failed so.
            "outcomes": [
                (outcome, shown.counts.get(outcome, 0))
                for outcome in OUTCOMES
                if outcome in BROAD or shown.counts.get(outcome)
            ],
        },
    )
