"""The lead's pages for AI judges: the team's judges (add, edit, remove), assigning one
to an evaluation, a run's page (progress, spending, failures, the call log) and its
controls. Everything is looked up inside the current team: another team's answers 404.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput, InvalidState
from apps.core.forms import add_problems
from apps.evaluations.models import Evaluation

from . import controls, panel_views, prompts, selectors, services
from .call_log import call_log_lines
from .connection_check import check_connection
from .forms import AssignForm, JudgeForm, PromptForm
from .models import BatchState, Judge, JudgeBatch, JudgeFailure, JudgePrompt, JudgeRun
from .prompting import DEFAULT_INSTRUCTIONS

RUN_ACTIONS = {
    "pause": (controls.run_pause, "Paused"),
    "resume": (controls.run_resume, "Resumed"),
    "cancel": (controls.run_cancel, "Cancelled"),
    "retry": (controls.failures_retry, "Offered the failed results again to"),
}
FAILURES_SHOWN = 200
PANEL_POLL_SECONDS = 5


def _judge(request: TeamRequest, judge_id: int) -> Judge:
    return get_object_or_404(Judge, id=judge_id, team_id=request.membership.team_id)


def _run(request: TeamRequest, run_id: int) -> JudgeRun:
    return get_object_or_404(
        JudgeRun.objects.select_related("judge", "evaluation"),
        id=run_id,
        judge__team_id=request.membership.team_id,
    )


@lead_required
def judge_list(request: TeamRequest) -> HttpResponse:
    rows = panel_views.listed(selectors.judge_rows(request.membership.team_id))
    return render(request, "judges/judge_list.html", {"rows": rows})


@lead_required
def judge_create(request: TeamRequest) -> HttpResponse:
    return _judge_form(
        request,
        None,
        lambda data: services.judge_create(
            team=request.membership.team, created_by=request.user, **data
        ),
        "Added",
    )


@lead_required
def judge_edit(request: TeamRequest, judge_id: int) -> HttpResponse:
    judge = _judge(request, judge_id)
    if judge.is_panel:  # a panel has no model, address or key: its own form
        return redirect("judges:panel_edit", judge.id)
    return _judge_form(
        request, judge, lambda data: services.judge_update(judge=judge, **data), "Saved"
    )


def _judge_form(
    request: TeamRequest,
    judge: Judge | None,
    save: Callable[[dict[str, Any]], Judge],
    done: str,
) -> HttpResponse:
    """The judge form: shown, or saved by `save` (its problems beside their fields)."""
    initial = JudgeForm.initial_for(judge) if judge else None
    prompts = JudgePrompt.objects.filter(team_id=request.membership.team_id)
    form = JudgeForm(request.POST or None, initial=initial, prompts=prompts)
    if request.method == "POST" and form.is_valid():
        try:
            saved = save(form.cleaned_data)
        except InvalidInput as error:
            add_problems(form, error.problems)
        else:
            messages.success(request, f"{done} the judge {saved.name}.")
            return redirect("judges:judge_list")
    context = {"form": form, "judge": judge, "below_rule": selectors.below_rule(judge)}
    return render(request, "judges/judge_form.html", context)


@require_POST
@lead_required
def judge_delete(request: TeamRequest, judge_id: int) -> HttpResponse:
    judge = _judge(request, judge_id)
    try:
        services.judge_delete(judge=judge)
    except InvalidState as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Removed the judge {judge.name}.")
    return redirect("judges:judge_list")


@require_POST
@lead_required
def judge_test_connection(request: TeamRequest, judge_id: int) -> HttpResponse:
    """One small call with the judge's stored settings; the answer or the error, with
    the address called, shown on the judge's page; a panel's, one to each member."""
    judge = _judge(request, judge_id)
    if judge.is_panel:
        return panel_views.panel_test_connection(request, judge)
    report = check_connection(judge)
    if report.ok:
        messages.success(request, f"Test connection: {report.sentence}")
    else:
        messages.error(request, f"Test connection: {report.sentence}")
    return redirect("judges:judge_edit", judge.id)


@require_POST
@lead_required
def judge_assign(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=request.membership.team_id)
    form = AssignForm(request.POST)
    if not form.is_valid():
        field = "judge" if "judge" in form.errors else "slots_per_result"
        messages.error(
            request,
            "judge: choose one of the team's judges"
            if field == "judge"
            else "slots_per_result: choose how many grades of each result the judge gives",
        )
    else:
        judge = _judge(request, form.cleaned_data["judge"])
        share = form.cleaned_data["slots_per_result"]
        try:
            controls.run_assign(
                judge=judge,
                evaluation=evaluation,
                created_by=request.user,
                slots_per_result=1 if share is None else share,
                urgent=not form.cleaned_data["not_urgent"],
            )
        except (InvalidInput, InvalidState) as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"{judge.name} is grading this evaluation.")
    return redirect("insights:evaluation_detail", evaluation.id)


CHAIN_FIELDS = (
    "first",
    "second_opinion",
    "escalate_to",
    "confidence_below",
    "agreement_below",
    "audit_percent",
    "escalation_budget",
)


@require_POST
@lead_required
def chain_start(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=request.membership.team_id)
    given = {name: request.POST.get(name, "")[:40] for name in CHAIN_FIELDS}
    try:
        controls.chain_start(evaluation=evaluation, created_by=request.user, **given)
    except (InvalidInput, InvalidState) as error:
        messages.error(request, error.message)
    else:
        messages.success(request, "The chain is grading this evaluation.")
    return redirect("insights:evaluation_detail", evaluation.id)


@lead_required
def evaluation_panel(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """The evaluation page's AI judges panel (htmx swaps it in, and polls it while a judge
    runs); without htmx, the panel on a page of its own."""
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=request.membership.team_id)
    panel = selectors.evaluation_judges(evaluation)
    # Each run's batches out at the provider, in one query (the panel says where).
    out = JudgeBatch.objects.filter(state=BatchState.OUT)
    prefetch_related_objects(panel.runs, Prefetch("batches", queryset=out))
    context = {
        "evaluation": evaluation,
        "judges_panel": panel,
        "poll_seconds": PANEL_POLL_SECONDS,
    }
    if request.htmx:
        return render(request, "judges/_evaluation_panel.html", context)
    return render(request, "judges/evaluation_judges.html", context)


@lead_required
def run_detail(request: TeamRequest, run_id: int) -> HttpResponse:
    run = _run(request, run_id)
    failures = (
        JudgeFailure.objects.filter(run=run, open=True)
        .select_related("slot__keyword", "slot__snapshot")
        .order_by("id")
    )
    return render(
        request,
        "judges/run_detail.html",
        {
            "run": run,
            "failures": failures[:FAILURES_SHOWN],
            "failure_count": failures.count(),
            "shown": FAILURES_SHOWN,
            "batches_out": run.batches.filter(state=BatchState.OUT).select_related("run__judge"),
        },
    )


@require_POST
@lead_required
def run_control(request: TeamRequest, run_id: int, action: str) -> HttpResponse:
    run = _run(request, run_id)
    if action not in RUN_ACTIONS:
        raise Http404("No such action.")
    control, done = RUN_ACTIONS[action]
    try:
        control(run=run)
        if action == "retry":
            controls.run_resume(run=run, retrying=True)
    except InvalidState as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{done} {run.judge.name}.")
    back = request.POST.get("back")
    if back == "evaluation":
        return redirect("insights:evaluation_detail", run.evaluation_id)
    return redirect("judges:run_detail", run.id)


@lead_required
def run_call_log(request: TeamRequest, run_id: int) -> StreamingHttpResponse:
    run = _run(request, run_id)
    response = StreamingHttpResponse(call_log_lines(run), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="judge-run-{run.id}-calls.jsonl"'
    return response


# --- Prompts ---------------------------------------------------------------------------


def _prompt(request: TeamRequest, prompt_id: int) -> JudgePrompt:
    return get_object_or_404(JudgePrompt, id=prompt_id, team_id=request.membership.team_id)


@lead_required
def prompt_list(request: TeamRequest) -> HttpResponse:
    return render(
        request,
        "judges/prompt_list.html",
        {
            "prompts": selectors.team_prompts(request.membership.team_id),
            "defaults": selectors.default_prompts(),
            "default_instructions": DEFAULT_INSTRUCTIONS,
        },
    )


@lead_required
def prompt_create(request: TeamRequest) -> HttpResponse:
    form = PromptForm(request.POST or None, initial={"instructions": DEFAULT_INSTRUCTIONS})
    if request.method == "POST" and form.is_valid():
        try:
            prompt = prompts.prompt_create(
                team=request.membership.team, created_by=request.user, **form.cleaned_data
            )
        except InvalidInput as error:
            add_problems(form, error.problems)
        else:
            messages.success(request, f"Added the prompt {prompt.name}.")
            return redirect("judges:prompt_edit", prompt.id)
    return render(request, "judges/prompt_form.html", {"form": form, "prompt": None})


@lead_required
def prompt_edit(request: TeamRequest, prompt_id: int) -> HttpResponse:
    """A prompt's newest version, editable (saving new instructions makes a version),
    and its older versions below."""
    prompt = _prompt(request, prompt_id)
    newest = prompts.newest_version(prompt)
    form = PromptForm(
        request.POST or None, initial={"name": prompt.name, "instructions": newest.instructions}
    )
    if request.method == "POST" and form.is_valid():
        try:
            prompts.prompt_update(prompt=prompt, created_by=request.user, **form.cleaned_data)
        except InvalidInput as error:
            add_problems(form, error.problems)
        else:
            saved = prompts.newest_version(prompt)
            changed = saved.id != newest.id
            messages.success(
                request,
                f"Saved {saved.version}." if changed else "Saved; the instructions are unchanged.",
            )
            return redirect("judges:prompt_edit", prompt.id)
    context = {
        "form": form,
        "prompt": prompt,
        "versions": prompt.versions.all(),
        "judges": prompt.judges.all(),
    }
    return render(request, "judges/prompt_form.html", context)


@require_POST
@lead_required
def prompt_delete(request: TeamRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt(request, prompt_id)
    try:
        prompts.prompt_delete(prompt=prompt)
    except InvalidState as error:
        messages.error(request, error.message)
        return redirect("judges:prompt_edit", prompt.id)
    messages.success(request, f"Removed the prompt {prompt.name}.")
    return redirect("judges:prompt_list")
