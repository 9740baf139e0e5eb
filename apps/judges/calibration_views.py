"""The lead's calibration pages: the team's gold sets (draw one), a gold set's report
(people's ceiling and every calibration side by side; calibrate a judge on it), a
calibration's controls and call log, fitting a panel's weights on its calibration, and
the team's gate. Everything is looked up inside the current team: another team's
answers 404."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Max
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput, InvalidState
from apps.core.forms import add_problems
from apps.core.typed import parse_id
from apps.evaluations.models import Evaluation

from . import calibration, controls, panels
from .call_log import calibration_log_lines
from .forms_calibration import GateForm, GoldSetForm
from .gold_sets import gold_set_create, gold_set_delete
from .list_calibration import list_calibration_make, lists_to_calibrate
from .models import CalibrationRun, CalibrationStatus, GoldSet, Judge, JudgeGate
from .selectors import people_graded_evaluations

POLL_SECONDS = 3


def _gold_set(request: TeamRequest, gold_set_id: int) -> GoldSet:
    return get_object_or_404(GoldSet, id=gold_set_id, team_id=request.membership.team_id)


def _calibration(request: TeamRequest, run_id: int) -> CalibrationRun:
    return get_object_or_404(
        CalibrationRun.objects.select_related("judge", "gold_set"),
        id=run_id,
        gold_set__team_id=request.membership.team_id,
    )


@lead_required
def gold_set_list(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    evaluations = list(Evaluation.objects.filter(team=team, archived=False).order_by("-id"))
    form = GoldSetForm(
        request.POST or None,
        baselines=list(people_graded_evaluations(team.id)),
        evaluations=evaluations,
    )
    if request.method == "POST" and form.is_valid():
        try:
            gold = gold_set_create(team=team, created_by=request.user, **form.cleaned_data)
        except InvalidInput as error:
            add_problems(form, error.problems)
        else:
            messages.success(request, f"Drew the gold set {gold.name}.")
            return redirect("judges:gold_set_detail", gold.id)
    gate = JudgeGate.objects.filter(team=team).first()
    gold_sets = (
        GoldSet.objects.filter(team=team)
        .annotate(
            item_count=Count("items", distinct=True),
            keyword_count=Count("items__keyword_index", distinct=True),
            run_count=Count("runs", distinct=True),
            best_alpha=Max("runs__alpha"),
        )
        .order_by("-created_at", "-id")
    )
    return render(
        request,
        "judges/gold_set_list.html",
        {
            "gold_sets": gold_sets,
            "form": form,
            "gate_form": GateForm(initial={"min_alpha": gate.min_alpha if gate else ""}),
            "gate": gate,
        },
    )


@require_POST
@lead_required
def gate_save(request: TeamRequest) -> HttpResponse:
    form = GateForm(request.POST)
    form.is_valid()
    try:
        calibration.gate_set(
            team=request.membership.team, min_alpha=form.cleaned_data.get("min_alpha")
        )
    except InvalidInput as error:
        messages.error(request, "; ".join(error.problems))
    else:
        messages.success(request, "Saved the team's rule for AI judges.")
    return redirect("judges:gold_set_list")


@lead_required
def gold_set_detail(request: TeamRequest, gold_set_id: int) -> HttpResponse:
    """The report; htmx polls it (the report alone) while a calibration runs."""
    gold = _gold_set(request, gold_set_id)
    report = calibration.gold_report(gold)
    context = {
        "gold": gold,
        "report": report,
        "running": any(r.run.status == CalibrationStatus.RUNNING for r in report.runs),
        "poll_seconds": POLL_SECONDS,
        "judges": Judge.objects.filter(team_id=gold.team_id),
        "lists": lists_to_calibrate(gold),
        "grades": report.scale.grades,
    }
    if request.htmx:
        return render(request, "judges/_gold_report.html", context)
    return render(request, "judges/gold_set_detail.html", context)


@require_POST
@lead_required
def gold_set_remove(request: TeamRequest, gold_set_id: int) -> HttpResponse:
    gold = _gold_set(request, gold_set_id)
    try:
        gold_set_delete(gold_set=gold)
    except InvalidState as error:
        messages.error(request, error.message)
        return redirect("judges:gold_set_detail", gold.id)
    messages.success(request, f"Removed the gold set {gold.name} and its calibrations.")
    return redirect("judges:gold_set_list")


@require_POST
@lead_required
def calibration_start(request: TeamRequest, gold_set_id: int) -> HttpResponse:
    gold = _gold_set(request, gold_set_id)
    if "judgement_list" in request.POST:
        return _list_calibration_start(request, gold)
    judge_id = request.POST.get("judge", "")
    judge = Judge.objects.filter(team_id=gold.team_id, id=parse_id(judge_id) or 0).first()
    if judge is None:
        messages.error(request, "judge: choose one of the team's judges")
        return redirect("judges:gold_set_detail", gold.id)
    try:
        controls.calibration_start(
            gold_set=gold,
            judge=judge,
            created_by=request.user,
            with_images=False if request.POST.get("without_images") else None,
        )
    except InvalidState as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Calibrating {judge.name} on {gold.name}.")
    return redirect("judges:gold_set_detail", gold.id)


def _list_calibration_start(request: TeamRequest, gold: GoldSet) -> HttpResponse:
    listed = lists_to_calibrate(gold).filter(id=parse_id(request.POST["judgement_list"]) or 0)
    if not listed:
        messages.error(request, "judgement_list: choose a list of the library on this scale")
        return redirect("judges:gold_set_detail", gold.id)
    try:
        run = list_calibration_make(
            gold_set=gold, judgement_list=listed[0], created_by=request.user
        )
    except InvalidInput as error:
        messages.error(request, "; ".join(error.problems))
    else:
        messages.success(request, f"Calibrated {run.graded_by} on {gold.name}.")
    return redirect("judges:gold_set_detail", gold.id)


CALIBRATION_ACTIONS = {"cancel", "retry"}


@require_POST
@lead_required
def calibration_control(request: TeamRequest, run_id: int, action: str) -> HttpResponse:
    run = _calibration(request, run_id)
    if action not in CALIBRATION_ACTIONS:
        raise Http404("No such action.")
    try:
        if action == "cancel":
            calibration.calibration_cancel(run=run)
            messages.success(request, f"Cancelled the calibration of {run.graded_by}.")
        else:
            retried = controls.calibration_retry(run=run)
            messages.success(request, f"Asking {run.graded_by} again about {retried} results.")
    except InvalidState as error:
        messages.error(request, error.message)
    return redirect("judges:gold_set_detail", run.gold_set_id)


@require_POST
@lead_required
def calibration_fit_weights(request: TeamRequest, run_id: int) -> HttpResponse:
    """Fit the weights of the panel calibrated on its finished calibration: what its
    fitted rule weighs its members' grades by from then on."""
    run = _calibration(request, run_id)
    panel = run.judge
    if panel is None:
        messages.error(request, "judge: a judgement list's calibration has no panel to fit")
        return redirect("judges:gold_set_detail", run.gold_set_id)
    try:
        panels.panel_fit_weights(panel=panel, calibration=run.id)
    except (InvalidInput, InvalidState) as error:
        messages.error(request, error.message)
    else:
        weights = ", ".join(
            f"{member.name} {weight:.2f}" for member, weight in panels.fitted_weights_shown(panel)
        )
        messages.success(request, f"Fitted {panel.name}'s weights on this calibration: {weights}.")
    return redirect("judges:gold_set_detail", run.gold_set_id)


@lead_required
def calibration_call_log(request: TeamRequest, run_id: int) -> StreamingHttpResponse:
    run = _calibration(request, run_id)
    response = StreamingHttpResponse(
        calibration_log_lines(run), content_type="application/x-ndjson"
    )
    response["Content-Disposition"] = f'attachment; filename="calibration-{run.id}-calls.jsonl"'
    return response
