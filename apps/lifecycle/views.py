"""The lead's pages for an evaluation's lifecycle: create, edit while pending, and the
buttons on the evaluation page (start or resume, pause, finish, clone, archive, pin,
team baseline, delete).

Every object is looked up inside the current team (another team's answers 404) and only
leads may use them (an evaluator gets 403). Actions are POSTs that call one service and
go back to the evaluation page with what happened, or the service's refusal, as a
message; the services alone decide what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import DomainError, InvalidInput
from apps.endpoints.models import SearchModel
from apps.evaluations import services
from apps.evaluations.models import Evaluation, Status

from . import stale, steps
from .editing import evaluation_update
from .forms import (
    DEFAULT_METRICS,
    EvaluationEditForm,
    EvaluationForm,
    KeywordsAddForm,
    keyword_list,
    put_problems,
    suggested_name,
)
from .guidelines_check import off_scale_warning
from .keyword_listing import keyword_page


def team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    team_id = request.membership.team_id
    return get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)


def _form_status(form: EvaluationForm) -> int:
    return 400 if form.is_bound and form.errors else 200


# --- New evaluation and editing --------------------------------------------------------


def _model_defaults(team_id: int) -> dict[str, dict[str, str]]:
    """For each of the team's models, the name and keywords a new evaluation starts with."""
    taken = list(Evaluation.objects.filter(team_id=team_id).values_list("name", flat=True))
    return {
        str(model_id): {
            "name": suggested_name(name, taken),
            "keywords": keywords.replace("\r\n", "\n"),
        }
        for model_id, name, keywords in SearchModel.objects.filter(team_id=team_id).values_list(
            "id", "name", "default_keywords"
        )
    }


@lead_required
def evaluation_new(request: TeamRequest, *, keywords: str = "") -> HttpResponse:
    """The new-evaluation form. `keywords` fills its keywords: the tries' pages, a layer
    above, open it so with a saved query set's queries (apps/tries/sampling_views.py)."""
    team = request.membership.team
    defaults = _model_defaults(team.id)
    chosen = defaults.get(request.GET.get("model", ""))
    initial = {"search_model": request.GET["model"], **chosen} if chosen else {}
    if keywords:
        initial["keywords"] = keywords
    form = EvaluationForm(request.POST or None, team_id=team.id, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            evaluation = services.evaluation_create_with_keywords(
                team=team, created_by=request.user, **form.cleaned_data
            )
        except InvalidInput as error:
            put_problems(form, error.problems)
        else:
            count = evaluation.keywords.count()
            messages.success(
                request,
                f"Created {evaluation.name} with {count} keyword{'s' if count != 1 else ''}. "
                "Check it, then start it.",
            )
            _warn_of_guidelines(request, evaluation)
            return redirect("insights:evaluation_detail", evaluation.id)
    keywords = form["keywords"].value() or ""
    return render(
        request,
        "evaluations/evaluation_form.html",
        {
            "form": form,
            "evaluation": None,
            "model_defaults": defaults,
            "default_metrics": {str(scale): metrics for scale, metrics in DEFAULT_METRICS.items()},
            "keyword_count": len(keyword_list(keywords)),
        },
        status=_form_status(form),
    )


@lead_required
def evaluation_edit(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = team_evaluation(request, evaluation_id)
    if evaluation.status != Status.PENDING or evaluation.fetching:
        return edit_refused(request, evaluation)
    form = EvaluationEditForm(request.POST or None, evaluation=evaluation)
    if request.method == "POST" and form.is_valid():
        try:
            evaluation = evaluation_update(
                evaluation=evaluation,
                metrics=form.cleaned_data["metrics"],
                tags=form.cleaned_data["tags"],
                **form.changes(),
            )
        except InvalidInput as error:
            put_problems(form, error.problems)
        except DomainError as error:
            messages.error(request, f"Not saved: {error.message}.")
            return redirect("insights:evaluation_detail", evaluation.id)
        else:
            messages.success(request, f"Saved {evaluation.name}.")
            _warn_of_guidelines(request, evaluation)
            return redirect("insights:evaluation_detail", evaluation.id)
    return render(
        request,
        "evaluations/evaluation_form.html",
        {
            "form": form,
            "evaluation": evaluation,
            # The keywords change through forms of their own (keyword_views.py).
            "keywords": keyword_page(evaluation, request.GET.get("keywords_page")),
            "add_form": KeywordsAddForm(),
            "guidelines_warning": _guidelines_warning(evaluation),
        },
        status=_form_status(form),
    )


def _guidelines_warning(evaluation: Evaluation) -> str:
    """Whether the saved guidelines name grades the saved scale lacks, as a sentence."""
    return off_scale_warning(evaluation.scoring_guidelines, evaluation.grading_scale)


def _warn_of_guidelines(request: TeamRequest, evaluation: Evaluation) -> None:
    """Saved, but the guidelines name grades the scale lacks: say so, without refusing
    (the lead may be about to change the scale, or quote another evaluation's)."""
    warning = _guidelines_warning(evaluation)
    if warning:
        messages.warning(request, warning)


def edit_refused(request: TeamRequest, evaluation: Evaluation) -> HttpResponse:
    running = evaluation.status == Status.ACTIVE or evaluation.fetching
    state = "running its keywords" if evaluation.fetching else evaluation.status
    hint = " Pause it first." if running else ""
    return render(
        request,
        "evaluations/refused.html",
        {
            "evaluation": evaluation,
            "title": f"{evaluation.name} cannot be edited now",
            "reason": f"Only a pending evaluation can be edited; this one is {state}.{hint}",
        },
        status=409,
    )


# --- Lifecycle actions ----------------------------------------------------------------


Action = Callable[[TeamRequest, Evaluation], str]


def _act(
    request: TeamRequest,
    evaluation_id: int,
    refusal: str,
    action: Action,
    *,
    flag: str | None = None,
) -> HttpResponse:
    """Run one action; its report, or the service's refusal, shows on the evaluation page.

    `flag` names a field the POST must give as 1 or 0 (pin or unpin, ...)."""
    evaluation = team_evaluation(request, evaluation_id)
    if flag is not None and request.POST.get(flag) not in ("0", "1"):
        return render(
            request,
            "evaluations/problems.html",
            {"evaluation": evaluation, "problems": [f"{flag}: must be 1 or 0"]},
            status=400,
        )
    try:
        report = action(request, evaluation)
    except DomainError as error:
        messages.error(request, f"{refusal}: {error.message}.")
    else:
        messages.success(request, report)
    return redirect("insights:evaluation_detail", evaluation.id)


def _flag(request: TeamRequest, field: str) -> bool:
    return request.POST[field] == "1"


def _start(request: TeamRequest, evaluation: Evaluation) -> str:
    resuming = evaluation.started_at is not None
    evaluation = steps.evaluation_start(evaluation=evaluation)
    if evaluation.fetching:
        return (
            "Started: its keywords are running against the search model; "
            "it opens when they are done."
        )
    return "Resumed: open for grading again." if resuming else "Started: open for grading."


@require_POST
@lead_required
def evaluation_start(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    return _act(request, evaluation_id, "Not started", _start)


@require_POST
@lead_required
def evaluation_pause(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    def pause(request: TeamRequest, evaluation: Evaluation) -> str:
        was_starting = evaluation.fetching
        steps.evaluation_stop(evaluation=evaluation)
        if was_starting:
            return "Paused: no more keywords run; those already run are kept for the resume."
        return "Paused: graders get none of its results until it is resumed."

    return _act(request, evaluation_id, "Not paused", pause)


@require_http_methods(["GET", "POST"])
@lead_required
def evaluation_finish(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    if request.method == "GET":
        return _confirm(request, evaluation_id, "finish")

    def finish(request: TeamRequest, evaluation: Evaluation) -> str:
        steps.evaluation_finish_now(evaluation=evaluation)
        copy = " A fresh copy starts, as it auto-restarts." if evaluation.auto_restart else ""
        return f"Finished {evaluation.name}.{copy}"

    return _act(request, evaluation_id, "Not finished", finish)


@require_POST
@lead_required
def evaluation_clone(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = team_evaluation(request, evaluation_id)
    try:
        copy = steps.evaluation_clone(evaluation=evaluation)
    except DomainError as error:
        messages.error(request, f"Not cloned: {error.message}.")
        return redirect("insights:evaluation_detail", evaluation.id)
    messages.success(
        request, f"Cloned {evaluation.name} as {copy.name}: pending, ready to edit or start."
    )
    return redirect("insights:evaluation_detail", copy.id)


def _switch(
    request: TeamRequest,
    evaluation_id: int,
    field: str,
    switch: Callable[[Evaluation, bool], object],
    reports: tuple[str, str],
) -> HttpResponse:
    """Turn a yes/no setting on (field=1) or off (field=0); `reports` says which happened."""

    def action(request: TeamRequest, evaluation: Evaluation) -> str:
        on = _flag(request, field)
        switch(evaluation, on)
        return reports[0] if on else reports[1]

    return _act(request, evaluation_id, f"Not {field}", action, flag=field)


@require_POST
@lead_required
def evaluation_stale_requeue(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    def requeue(request: TeamRequest, evaluation: Evaluation) -> str:
        sent = stale.stale_requeue(evaluation=evaluation, lead=request.user)
        if not sent:
            return "No stale judgement to send back."
        return f"{sent} stale judgement{'s' if sent != 1 else ''} sent back to the queue."

    return _act(request, evaluation_id, "Not sent back", requeue)


@require_POST
@lead_required
def evaluation_archive(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    return _switch(
        request,
        evaluation_id,
        "archived",
        lambda evaluation, on: steps.evaluation_archive(evaluation=evaluation, archived=on),
        ("Archived: hidden from the lists.", "Back from the archive."),
    )


@require_POST
@lead_required
def evaluation_pin(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    return _switch(
        request,
        evaluation_id,
        "pinned",
        lambda evaluation, on: steps.evaluation_pin(evaluation=evaluation, pinned=on),
        ("Pinned to the dashboard.", "Unpinned from the dashboard."),
    )


@require_POST
@lead_required
def evaluation_baseline(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    def baseline(request: TeamRequest, evaluation: Evaluation) -> str:
        team = request.membership.team
        if _flag(request, "baseline"):
            steps.team_set_baseline(team=team, evaluation=evaluation)
            return f"{evaluation.name} is now the team's baseline."
        if team.baseline_evaluation_id != evaluation.id:
            return f"{evaluation.name} was not the team's baseline; nothing changed."
        steps.team_set_baseline(team=team, evaluation=None)
        return "The team has no baseline now."

    return _act(request, evaluation_id, "Baseline not changed", baseline, flag="baseline")


@require_http_methods(["GET", "POST"])
@lead_required
def evaluation_delete(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    if request.method == "GET":
        return _confirm(request, evaluation_id, "delete")
    evaluation = team_evaluation(request, evaluation_id)
    try:
        steps.evaluation_delete(evaluation=evaluation)
    except DomainError as error:
        messages.error(request, f"Not deleted: {error.message}.")
        return redirect("insights:evaluation_detail", evaluation.id)
    messages.success(request, f"Deleted {evaluation.name}.")
    return redirect("insights:evaluation_list")


def _confirm(request: TeamRequest, evaluation_id: int, action: str) -> HttpResponse:
    evaluation = team_evaluation(request, evaluation_id)
    return render(
        request,
        "evaluations/confirm.html",
        {"evaluation": evaluation, "action": action, "keywords": evaluation.keywords.count()},
    )


@lead_required
def evaluation_lifecycle(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """The lifecycle partial, polled while the keywords run; once they are done (or the
    start was paused) the page reloads to show the evaluation as it now is."""
    evaluation = team_evaluation(request, evaluation_id)
    response = render(request, "evaluations/_lifecycle.html", {"evaluation": evaluation})
    if not evaluation.fetching:
        response["HX-Refresh"] = "true"
    return response
