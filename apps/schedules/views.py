"""The lead's schedule pages: the team's schedules (and its time zone), one schedule's
page (its runs and their comparisons, edit, run now, remove). Everything is looked up
inside the current team: another team's answers 404."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.forms import as_sentence, saved_through
from apps.evaluations.models import Evaluation
from apps.judges.models import Judge

from . import cron, services
from .forms import ScheduleForm, TimeZoneForm
from .models import RunState, Schedule, ScheduledRun

RUNS_SHOWN = 50


def _schedule(request: TeamRequest, schedule_id: int) -> Schedule:
    return get_object_or_404(
        Schedule.objects.select_related("team", "source", "judge"),
        id=schedule_id,
        team_id=request.membership.team_id,
    )


def _form(request: TeamRequest, *, bound: bool = True, **kwargs: Any) -> ScheduleForm:
    team_id = request.membership.team_id
    return ScheduleForm(
        request.POST if bound and request.method == "POST" else None,
        evaluations=Evaluation.objects.filter(team_id=team_id, archived=False).order_by("name"),
        judges=Judge.objects.filter(team_id=team_id),
        **kwargs,
    )


@lead_required
def schedule_list(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    form = _form(request)
    schedule = saved_through(
        form, lambda data: services.schedule_create(team=team, created_by=request.user, **data)
    )
    if schedule is not None:
        messages.success(request, f"Scheduled {schedule.name}.")
        return redirect("schedules:schedule_detail", schedule.id)
    return _list_page(request, form, TimeZoneForm(initial={"time_zone": team.time_zone}))


@require_POST
@lead_required
def time_zone_save(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    zone_form = TimeZoneForm(request.POST)
    zone = saved_through(zone_form, lambda data: services.team_time_zone_set(team=team, **data))
    if zone is None:  # refused: the page again, the problem beside the zone typed
        team.refresh_from_db(fields=["time_zone"])
        return _list_page(request, _form(request, bound=False), zone_form)
    messages.success(request, f"The team's schedules read their times in {zone}.")
    return redirect("schedules:schedule_list")


@require_GET
@lead_required
def cron_words(request: TeamRequest) -> HttpResponse:
    """The cron field's reading as it is typed: its words, or what is wrong with it."""
    expression = request.GET.get("cron", "")
    try:
        words, problem = cron.in_words(expression, request.membership.team.time_zone), ""
    except cron.CronError as error:
        words, problem = "", as_sentence(str(error))
    context = {"words": words, "problem": problem if expression.strip() else ""}
    return render(request, "schedules/_cron_words.html", context)


def _list_page(request: TeamRequest, form: ScheduleForm, zone_form: TimeZoneForm) -> HttpResponse:
    team = request.membership.team
    context = {
        "schedules": Schedule.objects.filter(team=team).select_related("source", "team"),
        "form": form,
        "zone_form": zone_form,
    }
    return render(request, "schedules/schedule_list.html", context)


@lead_required
def schedule_detail(request: TeamRequest, schedule_id: int) -> HttpResponse:
    schedule = _schedule(request, schedule_id)
    form = _form(request, initial=_initial(schedule))
    if saved_through(form, lambda data: services.schedule_update(schedule=schedule, **data)):
        messages.success(request, f"Saved {schedule.name}.")
        return redirect("schedules:schedule_detail", schedule.id)
    schedule.refresh_from_db()  # the page shows what is stored, not what was refused
    runs = ScheduledRun.objects.filter(schedule=schedule).select_related(
        "evaluation", "previous", "baseline"
    )[:RUNS_SHOWN]
    context = {"schedule": schedule, "form": form, "runs": runs, "RunState": RunState}
    return render(request, "schedules/schedule_detail.html", context)


@require_POST
@lead_required
def schedule_run_now(request: TeamRequest, schedule_id: int) -> HttpResponse:
    schedule = _schedule(request, schedule_id)
    run = services.run_now(schedule=schedule)
    if run.state == RunState.FAILED:
        messages.error(request, f"The run did not start: {run.note}")
    else:
        messages.success(request, "Started a run; its keywords run now.")
    return redirect("schedules:schedule_detail", schedule.id)


@require_POST
@lead_required
def schedule_delete(request: TeamRequest, schedule_id: int) -> HttpResponse:
    schedule = _schedule(request, schedule_id)
    services.schedule_delete(schedule=schedule)
    messages.success(request, f"Removed the schedule {schedule.name}; its runs' evaluations stay.")
    return redirect("schedules:schedule_list")


def _initial(schedule: Schedule) -> dict[str, object]:
    return {
        "name": schedule.name,
        "source": schedule.source_id or "",
        "cron": schedule.cron,
        "judge": schedule.judge_id or "",
        "min_change": f"{schedule.min_change:g}",
        "active": schedule.active,
    }
