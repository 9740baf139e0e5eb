"""The schedules' runs, driven by beat every SCHEDULES_CHECK_SECONDS (tasks.py):

1. schedules_run_due: each active schedule whose time has come starts a run: a copy of
   its setup evaluation, started (the search model's keywords run again on a worker for
   fresh results; on opening, the still-valid grades of earlier runs are reused and the
   stale ones are not, apps/lifecycle/reuse.py; the rest waits in the graders' queue).
   Its next time is the first after now, so times missed while beat was down make one
   run when it is back, not one each.
2. scheduled_runs_advance: a run whose evaluation has opened gets the schedule's AI
   judge; a run whose evaluation has finished is compared, by the regression gate, with
   the schedule's previous run and the team's baseline, and the team is told
   (schedule.run_compared, and regression.found when the run is worse than either,
   significantly and by at least the schedule's smallest change).
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from apps.core.errors import DomainError
from apps.evaluations.models import Evaluation, Keyword, Status
from apps.insights.gate import FAIL, gate
from apps.judges.controls import run_start as judge_run_start
from apps.lifecycle.steps import evaluation_start, run_copy
from apps.notifications.events import announce
from apps.notifications.models import Event
from apps.tries.gate_candidate import gate_candidate_make
from apps.tries.models import TryState

from . import cron
from .models import RunState, Schedule, ScheduledRun

logger = logging.getLogger(__name__)


def schedules_run_due(now: datetime | None = None) -> int:
    """Start a run of every schedule due at `now`; returns how many started."""
    now = now or timezone.now()
    started = 0
    due = Schedule.objects.filter(active=True, next_run_at__lte=now).select_related("team")
    for schedule in due:
        due_at = schedule.next_run_at
        assert due_at is not None
        following = cron.parse(schedule.cron).next_after(now, ZoneInfo(schedule.team.time_zone))
        with transaction.atomic():
            # Taken by moving its time on: a second beat, or this one sending twice,
            # finds it moved and starts nothing.
            taken = Schedule.objects.filter(id=schedule.id, next_run_at=due_at, active=True)
            if not taken.update(next_run_at=following):
                continue
            run = scheduled_run_start(schedule, due_at=due_at)
        started += run.state == RunState.STARTED
    return started


def scheduled_run_start(
    schedule: Schedule, *, due_at: datetime, by_hand: bool = False
) -> ScheduledRun:
    """A run of the schedule standing for `due_at`: its evaluation copied and started."""
    previous = (
        ScheduledRun.objects.filter(schedule=schedule, evaluation__isnull=False)
        .order_by("-due_at", "-id")
        .values_list("evaluation_id", flat=True)
        .first()
    )
    with transaction.atomic():
        run = ScheduledRun.objects.create(
            schedule=schedule,
            due_at=due_at,
            by_hand=by_hand,
            previous_id=previous,
            baseline_id=schedule.team.baseline_evaluation_id,
            judge_id=schedule.judge_id,
            min_change=schedule.min_change,
        )
        source = schedule.source
        if source is None:
            _stop(schedule, "its setup evaluation was removed; choose another to run again")
            return _fail(run, "the schedule's setup evaluation was removed")
        local = due_at.astimezone(ZoneInfo(schedule.team.time_zone))
        return run_evaluation_start(run, source, f"{schedule.name} {local:%Y-%m-%d %H:%M}")
    return run


def run_evaluation_start(run: ScheduledRun, source: Evaluation, name: str) -> ScheduledRun:
    """The run's evaluation made (lifecycle.steps.run_copy) and started. A refusal (no
    keywords to run, say) fails the run with the reason."""
    try:
        with transaction.atomic():
            copy = run_copy(evaluation=source, name=name)
            ScheduledRun.objects.filter(id=run.id).update(evaluation=copy)
            run.evaluation = evaluation_start(evaluation=copy)
    except DomainError as error:
        run.evaluation = None
        return _fail(run, f"could not start: {error.message}")
    return run


def scheduled_runs_advance() -> int:
    """Give a gate's candidate whose try is done its evaluation, opened runs their AI
    judge, and compare finished ones; returns how many were compared now."""
    for run_id in ScheduledRun.objects.filter(state=RunState.TRYING).values_list("id", flat=True):
        _candidate_make(run_id)
    compared = 0
    runs = ScheduledRun.objects.filter(state=RunState.STARTED).select_related(
        "schedule", "judge", "evaluation", "previous", "baseline"
    )
    for run in runs:
        evaluation = run.evaluation
        if evaluation is None:
            _fail(run, "its evaluation was removed before it finished")
        elif evaluation.status == Status.FINISHED:
            compared += _compare(run)
        elif evaluation.status == Status.ACTIVE and not run.judge_started:
            _judge(run)
    return compared


def _candidate_make(run_id: int) -> None:
    """The gate's candidate: once its try is done, its results as the run's evaluation
    (once: the run's row is locked and its state checked again)."""
    with transaction.atomic():
        run = (
            ScheduledRun.objects.select_for_update(of=("self",))
            .select_related("attempt__search_model", "baseline")
            .filter(id=run_id, state=RunState.TRYING)
            .first()
        )
        if run is None:
            return
        attempt, baseline = run.attempt, run.baseline
        if attempt is None or baseline is None:
            _fail(run, "its try or its baseline was removed before it finished")
        elif attempt.state == TryState.FAILED:
            _fail(run, f"the model's run failed: {attempt.error}")
        elif attempt.state == TryState.DONE:
            try:
                with transaction.atomic():
                    evaluation = gate_candidate_make(attempt=attempt, baseline=baseline)
            except DomainError as error:
                _fail(run, f"could not start: {error.message}")
                return
            ScheduledRun.objects.filter(id=run.id).update(
                state=RunState.STARTED, evaluation=evaluation
            )


def _judge(run: ScheduledRun) -> None:
    judge = run.judge
    if judge is not None and run.evaluation is not None:
        try:
            judge_run_start(judge=judge, evaluation=run.evaluation)
        except DomainError as error:
            ScheduledRun.objects.filter(id=run.id).update(
                note=f"the AI judge {judge.name} did not start: {error.message}"[:500]
            )
    ScheduledRun.objects.filter(id=run.id).update(judge_started=True)


def _compare(run: ScheduledRun) -> bool:
    """The gate against the previous run and the baseline, stored, then told once."""
    evaluation = run.evaluation
    assert evaluation is not None
    if Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists():
        return False  # its last grades are still being scored: next time
    verdicts: list[dict[str, Any]] = []
    for against, other in (("previous run", run.previous), ("baseline", run.baseline)):
        if other is None or other.id == evaluation.id:
            continue
        try:
            verdict = gate(
                team_id=evaluation.team_id,
                baseline_id=other.id,
                candidate_id=evaluation.id,
                min_change=run.min_change,
            )
        except (DomainError, ValueError) as error:  # no metric in common, say
            verdicts.append({"against": against, "evaluation": _named(other), "error": str(error)})
            continue
        verdicts.append(
            {
                "against": against,
                "evaluation": _named(other),
                "outcome": verdict.outcome,
                "reason": verdict.reason,
                "metrics": [asdict(metric) for metric in verdict.metrics],
            }
        )
    regressions = [str(v["against"]) for v in verdicts if v.get("outcome") == FAIL]
    with transaction.atomic():
        settled = ScheduledRun.objects.filter(id=run.id, state=RunState.STARTED).update(
            state=RunState.COMPARED,
            outcome={"comparisons": verdicts},
            regression=bool(regressions),
            compared_at=timezone.now(),
        )
        if settled:
            _tell(run, evaluation, verdicts, regressions)
    return bool(settled)


def _tell(
    run: ScheduledRun,
    evaluation: Evaluation,
    verdicts: list[dict[str, Any]],
    regressions: list[str],
) -> None:
    """A schedule's run is told compared; any run worse than what it was compared with is
    told a regression."""
    schedule = run.schedule
    data: dict[str, Any] = {
        "schedule": {"id": schedule.id, "name": schedule.name} if schedule else None,
        "run": {"id": run.id, "due_at": run.due_at.isoformat()},
        "evaluation": _named(evaluation),
        "comparisons": verdicts,
    }
    if schedule is not None:
        path = reverse("schedules:schedule_detail", args=[schedule.id])
        outcomes = "; ".join(
            f"against the {v['against']} {v['evaluation']['name']}: "
            f"{v.get('outcome', 'not compared')}"
            for v in verdicts
        )
        announce(
            team_id=evaluation.team_id,
            event=Event.RUN_COMPARED,
            summary=f"The scheduled run {evaluation.name} finished and was compared: "
            f"{outcomes or 'nothing to compare it with yet'}.",
            path=path,
            data=data,
        )
    else:
        path = reverse("insights:evaluation_detail", args=[evaluation.id])
    if regressions:
        announce(
            team_id=evaluation.team_id,
            event=Event.REGRESSION_FOUND,
            summary=f"Regression: {evaluation.name} is worse than the "
            f"{' and the '.join(regressions)}, significantly and by at least "
            f"{run.min_change:g}.",
            path=path,
            data={**data, "regressions": regressions},
        )


def _named(evaluation: Evaluation) -> dict[str, Any]:
    return {"id": evaluation.id, "name": evaluation.name}


def _fail(run: ScheduledRun, why: str) -> ScheduledRun:
    ScheduledRun.objects.filter(id=run.id).update(state=RunState.FAILED, note=why[:500])
    run.refresh_from_db()
    logger.warning("scheduled run %s of schedule %s: %s", run.id, run.schedule_id, why)
    return run


def _stop(schedule: Schedule, why: str) -> None:
    Schedule.objects.filter(id=schedule.id).update(active=False, next_run_at=None, note=why)
