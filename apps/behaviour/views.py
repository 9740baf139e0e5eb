"""The behaviour pages: the team's logs and an import, one log's report with the
judgements click models made from it (and those being made, polled while a worker makes
them), and the panel on an evaluation's page that grades it with them."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import Evaluation, Source
from apps.judges.team_rule import list_refusal
from apps.library.models import JudgementList

from .click_jobs import any_unfinished, click_judgements_request, log_jobs
from .click_judgements import thresholds_text
from .fitting import ClickModel
from .forms import ClickGradingForm, ClickJudgementsForm, LogImportForm
from .grading import evaluation_grade_with_clicks
from .importing import click_log_import
from .models import ClickJudgementJob, ClickJudgementSet, ClickLog, JobStatus

# How often the log's page asks again while judgements are being made.
POLL_SECONDS = 2


def _log(request: TeamRequest, log_id: int) -> ClickLog:
    return get_object_or_404(ClickLog, id=log_id, team_id=request.membership.team_id)


@lead_required
def log_list(request: TeamRequest) -> HttpResponse:
    form = LogImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            log = click_log_import(
                team=request.membership.team,
                user=request.user,
                name=data["name"],
                file_format=data["file_format"],
                queries=data["queries"],
                events=data["events"],
                log=data["log"],
            )
        except InvalidInput as error:
            problems = error.problems
        else:
            messages.success(request, f"Imported {log.name}: {log.events_read:,} events read.")
            return redirect(reverse("behaviour:log_detail", args=[log.id]))
    logs = ClickLog.objects.filter(team_id=request.membership.team_id)
    return render(
        request, "behaviour/log_list.html", {"logs": logs, "form": form, "problems": problems}
    )


@lead_required
def log_detail(request: TeamRequest, log_id: int) -> HttpResponse:
    log = _log(request, log_id)
    return _detail(request, log, ClickJudgementsForm(), [])


def _detail(
    request: TeamRequest, log: ClickLog, form: ClickJudgementsForm, problems: list[str]
) -> HttpResponse:
    context = {**_judgements(log), "form": form, "problems": problems}
    return render(request, "behaviour/log_detail.html", context)


def _judgements(log: ClickLog) -> dict[str, object]:
    """What the page's judgements section shows: the jobs and the sets they made."""
    made = (
        ClickJudgementSet.objects.filter(log=log)
        .select_related("judgement_list__source")
        .order_by("-created_at", "-id")
    )
    jobs = log_jobs(log)
    return {
        "log": log,
        "made": [(each, thresholds_text(each), ClickModel(each.model).label) for each in made],
        "any_fitted": any(each.fitted_on for each in made),
        "jobs": [(job, ClickModel(job.settings["model"]).label) for job in jobs],
        "polling": any_unfinished(jobs),
        "poll_seconds": POLL_SECONDS,
    }


@lead_required
def log_judgements(request: TeamRequest, log_id: int) -> HttpResponse:
    """The judgements section, polled while a job is queued or running."""
    log = _log(request, log_id)
    return render(request, "behaviour/_judgements.html", _judgements(log))


@lead_required
@require_POST
def judgements_make(request: TeamRequest, log_id: int) -> HttpResponse:
    log = _log(request, log_id)
    form = ClickJudgementsForm(request.POST)
    if not form.is_valid():
        return _detail(request, log, form, [])
    data = form.cleaned_data
    try:
        job = click_judgements_request(
            team=request.membership.team,
            user=request.user,
            log=log,
            model=data["model"],
            scale=data["scale"],
            min_impressions=data["min_impressions"],
            thresholds=data["thresholds"],
            name=data["name"],
        )
    except InvalidInput as error:
        return _detail(request, log, form, error.problems)
    _say_how_it_went(request, job)
    return redirect(reverse("behaviour:log_detail", args=[log.id]))


def _say_how_it_went(request: TeamRequest, job: ClickJudgementJob) -> None:
    """With a worker the job has just been queued; without one it ran at the commit."""
    model = ClickModel(job.settings["model"]).label
    if job.status == JobStatus.DONE and job.result is not None:
        listed = job.result.judgement_list
        messages.success(
            request,
            f"Made {listed.judgement_count:,} judgements from clicks: {listed.name}, "
            "in the library.",
        )
    elif job.status == JobStatus.FAILED:
        messages.error(request, f"No judgements were made with {model}: {'; '.join(job.problems)}")
    else:
        messages.info(request, f"Making judgements with {model} in the background…")


@lead_required
@require_POST
def log_delete(request: TeamRequest, log_id: int) -> HttpResponse:
    log = _log(request, log_id)
    log.delete()
    messages.success(request, f"Removed the log {log.name}; judgements made from it stay.")
    return redirect(reverse("behaviour:log_list"))


def _click_lists(evaluation: Evaluation) -> list[JudgementList]:
    return list(
        JudgementList.objects.filter(
            team_id=evaluation.team_id,
            scale=evaluation.scale,
            source__kind=Source.CLICKS,
        )
        .select_related("source")
        .order_by("-imported_at", "-id")
    )


@lead_required
def evaluation_clicks(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """The evaluation page's panel (loaded after the page): grade it with click
    judgements; nothing when the team has none on its scale."""
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=request.membership.team_id)
    lists = _click_lists(evaluation)
    if request.method == "POST":
        return _grade(request, evaluation, lists)
    if not lists:
        return HttpResponse("")
    refusals = {each.id: list_refusal(each) for each in lists}
    allowed = [(each.id, each.name) for each in lists if not refusals[each.id]]
    context = {
        "evaluation": evaluation,
        "form": ClickGradingForm(lists=allowed),
        "allowed": allowed,
        "refused": [(each, refusals[each.id]) for each in lists if refusals[each.id]],
    }
    return render(request, "behaviour/_evaluation_clicks.html", context)


def _grade(
    request: TeamRequest, evaluation: Evaluation, lists: list[JudgementList]
) -> HttpResponse:
    form = ClickGradingForm(request.POST, lists=[(each.id, each.name) for each in lists])
    back = redirect(reverse("insights:evaluation_detail", args=[evaluation.id]))
    if not form.is_valid():
        messages.error(request, "judgement_list: choose click judgements on this scale")
        return back
    chosen = next(each for each in lists if str(each.id) == form.cleaned_data["judgement_list"])
    try:
        done = evaluation_grade_with_clicks(
            evaluation=evaluation, judgement_list=chosen, user=request.user
        )
    except (InvalidInput, InvalidState) as error:
        messages.error(request, error.message)
        return back
    messages.success(
        request,
        f"{chosen.name} graded {done.graded} results; {done.unknown} had too few clicks to "
        f"judge, {done.taken} were graded or taken already.",
    )
    return back
