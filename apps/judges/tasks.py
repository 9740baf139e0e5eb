"""The lanes that make a judge's run: Celery tasks, each making one call after another.

A run has `calls_at_once` lanes, so that many calls are in flight at once. A lane makes
steps (runs.run_step) for up to LANE_SECONDS, then hands over to a fresh task of itself
(a worker's time is shared fairly between runs, and its memory stays flat); when a step
says wait (a rate limit, an outage), the lane comes back after that long; when it says
stop, the lane ends. Every (re)start numbers a new set of lanes (`lane_epoch`): a lane
of an older set ends at its next step, so pausing and resuming never runs more lanes
than asked.

Lanes that died with their worker, or were never queued (the broker was down), are
started again by the sweep (resume_stalled_runs, every minute on beat) once the run has
not been seen for STALLED_AFTER.

Without a broker (make run, tests), tasks run in-process: a lane runs its steps to the
end in the request that started it, and a lane told to wait ends (the sweep, with beat,
takes it up again).
"""

from __future__ import annotations

import time
from datetime import timedelta

from celery import Task, shared_task
from django.db.models import F, Q
from django.utils import timezone

from apps.core.queueing import queue_after_commit, queue_in, queue_now
from apps.evaluations.models import Status

from .calibration import calibration_execute, stalled_calibrations
from .chains import chain_advance
from .models import CalibrationRun, JudgeChain, JudgeRun, RunStatus
from .runs import run_step

LANE_SECONDS = 20.0
CHAIN_WAIT_SECONDS = 2.0
STALLED_AFTER = timedelta(minutes=2)


def lanes_start(run: JudgeRun) -> None:
    """Start the run's lanes (a new set; the old ones end), once the caller commits."""
    JudgeRun.objects.filter(id=run.id).update(
        lane_epoch=F("lane_epoch") + 1, lanes_seen_at=timezone.now()
    )
    run.refresh_from_db(fields=["lane_epoch", "lanes_seen_at"])
    for _ in range(run.judge.calls_at_once):
        queue_after_commit(judge_lane, run.id, run.lane_epoch)


@shared_task(name="apps.judges.tasks.judge_lane", bind=True)
def judge_lane(self: Task, run_id: int, epoch: int) -> str:
    started = time.monotonic()
    while True:
        seen = JudgeRun.objects.filter(id=run_id, lane_epoch=epoch, status=RunStatus.RUNNING)
        if not seen.update(lanes_seen_at=timezone.now()):
            return "ended: the run stopped or has newer lanes"
        step = run_step(run_id=run_id)
        if step.action == "stop":
            return f"stopped: {step.why}"
        if step.action == "wait":
            if not self.request.is_eager:
                queue_in(step.seconds, judge_lane, run_id, epoch)
            return f"waiting {step.seconds:.1f} s: {step.why}"
        if not self.request.is_eager and time.monotonic() - started > LANE_SECONDS:
            queue_now(judge_lane, run_id, epoch)
            return "handed over"


def calibration_queue(run: CalibrationRun) -> None:
    queue_after_commit(calibrate, run.id)


@shared_task(name="apps.judges.tasks.calibrate")
def calibrate(run_id: int) -> str:
    calibration_execute(run_id=run_id)
    return "done"


def chain_queue(chain: JudgeChain) -> None:
    queue_after_commit(advance_chain, chain.id)


@shared_task(name="apps.judges.tasks.advance_chain", bind=True)
def advance_chain(self: Task, chain_id: int) -> str:
    """Advance the chain until nothing is left, handing over after LANE_SECONDS; while
    its first judge still grades, look again in a few seconds."""
    started = time.monotonic()
    while (outcome := chain_advance(chain_id=chain_id)) == "more":
        if not self.request.is_eager and time.monotonic() - started > LANE_SECONDS:
            queue_now(advance_chain, chain_id)
            return "handed over"
    if outcome == "wait" and not self.request.is_eager:
        queue_in(CHAIN_WAIT_SECONDS, advance_chain, chain_id)
    return outcome


@shared_task(name="apps.judges.tasks.resume_stalled_runs")
def resume_stalled_runs() -> int:
    """Start again the lanes of running runs not seen for STALLED_AFTER and not waiting,
    and the calibrations whose worker went quiet; how many of both."""
    calibrations = stalled_calibrations()
    for calibration_id in calibrations:
        queue_now(calibrate, calibration_id)
    # A chain whose task was lost (a worker died, the broker was down) is advanced
    # again; one already being advanced answers "busy" and stops at once.
    for chain_id in JudgeChain.objects.filter(evaluation__status=Status.ACTIVE).values_list(
        "id", flat=True
    ):
        queue_now(advance_chain, chain_id)
    now = timezone.now()
    stalled = JudgeRun.objects.filter(
        Q(lanes_seen_at__lt=now - STALLED_AFTER) | Q(lanes_seen_at__isnull=True),
        Q(wait_until__isnull=True) | Q(wait_until__lte=now),
        status=RunStatus.RUNNING,
    ).select_related("judge")
    count = 0
    for run in stalled:
        lanes_start(run)
        count += 1
    return count + len(calibrations)
