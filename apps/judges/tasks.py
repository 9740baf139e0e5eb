"""The lanes that make a judge's run: Celery tasks, each making one call after another.

A run's `calls_at_once` calls in flight are shared among its lanes, up to
CALLS_PER_LANE a lane (lane_widths): a lane's step makes its calls at once from threads
and writes what they brought back together, so a run of 8 calls at once holds 2 worker
processes, not 8, and its database work is a step's, not a call's. Two lanes rather
than one keep calls in flight while the other lane writes. A lane makes steps
(runs.run_step) for up to LANE_SECONDS, then hands over to a fresh task of itself
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

A not-urgent run has no lanes: advance_batches sends its batches and applies them once
they ended (batch_runs.py), when it starts and at every sweep.
"""

from __future__ import annotations

import time
from datetime import timedelta

from celery import Task, shared_task
from django.db.models import F, Q
from django.utils import timezone

from apps.core.queueing import queue_after_commit, queue_in, queue_now
from apps.evaluations.models import Status

from .batch_runs import batch_advance, runs_to_advance
from .calibration import calibration_execute, stalled_calibrations
from .chains import chain_advance
from .models import CalibrationRun, JudgeChain, JudgeRun, RunStatus
from .runs import run_steps

LANE_SECONDS = 20.0
CALLS_PER_LANE = 4
CHAIN_WAIT_SECONDS = 2.0
STALLED_AFTER = timedelta(minutes=2)
SEEN_EVERY = timedelta(seconds=5)


def lanes_start(run: JudgeRun) -> None:
    """Start the run's lanes (a new set; the old ones end), once the caller commits; a
    not-urgent run's batches instead."""
    JudgeRun.objects.filter(id=run.id).update(
        lane_epoch=F("lane_epoch") + 1, lanes_seen_at=timezone.now()
    )
    run.refresh_from_db(fields=["lane_epoch", "lanes_seen_at", "urgent"])
    if not run.urgent:
        queue_after_commit(advance_batches, run.id)
        return
    for calls in lane_widths(run.judge.calls_at_once):
        queue_after_commit(judge_lane, run.id, run.lane_epoch, calls)


def lane_widths(calls_at_once: int) -> list[int]:
    """How many calls each lane makes at once: as few lanes as CALLS_PER_LANE allows,
    sharing the calls evenly (8: 4 and 4; 5: 3 and 2; 3: 3)."""
    lanes = -(-max(1, calls_at_once) // CALLS_PER_LANE)
    share, extra = divmod(max(1, calls_at_once), lanes)
    return [share + (lane < extra) for lane in range(lanes)]


@shared_task(name="apps.judges.tasks.judge_lane", bind=True)
def judge_lane(self: Task, run_id: int, epoch: int, calls: int = 1) -> str:
    started = time.monotonic()
    seen_at = 0.0
    ended: list[str] = []

    def go_on() -> bool:
        nonlocal seen_at
        if not self.request.is_eager and time.monotonic() - started > LANE_SECONDS:
            return False
        mine = JudgeRun.objects.filter(id=run_id, lane_epoch=epoch, status=RunStatus.RUNNING)
        # Seen is written every SEEN_EVERY (a write is a commit to wait for; the sweep
        # needs one every STALLED_AFTER), and checked by reading before every step.
        if time.monotonic() - seen_at > SEEN_EVERY.total_seconds():
            if mine.update(lanes_seen_at=timezone.now()):
                seen_at = time.monotonic()
                return True
        elif mine.exists():
            return True
        ended.append("the run stopped or has newer lanes")
        return False

    step = run_steps(run_id=run_id, calls=calls, go_on=go_on)
    if step.action == "stop":
        return f"stopped: {step.why}"
    if step.action == "wait":
        if not self.request.is_eager:
            queue_in(step.seconds, judge_lane, run_id, epoch, calls)
        return f"waiting {step.seconds:.1f} s: {step.why}"
    if ended:
        return f"ended: {ended[0]}"
    queue_now(judge_lane, run_id, epoch, calls)
    return "handed over"


@shared_task(name="apps.judges.tasks.advance_batches")
def advance_batches(run_id: int) -> str:
    return batch_advance(run_id=run_id)


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
    and the calibrations whose worker went quiet; how many of both. Advance every run
    with batches (polled, applied, the next sent)."""
    calibrations = stalled_calibrations()
    for calibration_id in calibrations:
        queue_now(calibrate, calibration_id)
    # A chain whose task was lost (a worker died, the broker was down) is advanced
    # again; one already being advanced answers "busy" and stops at once.
    for chain_id in JudgeChain.objects.filter(evaluation__status=Status.ACTIVE).values_list(
        "id", flat=True
    ):
        queue_now(advance_chain, chain_id)
    for run_id in runs_to_advance():
        queue_now(advance_batches, run_id)
    now = timezone.now()
    stalled = JudgeRun.objects.filter(
        Q(lanes_seen_at__lt=now - STALLED_AFTER) | Q(lanes_seen_at__isnull=True),
        Q(wait_until__isnull=True) | Q(wait_until__lte=now),
        status=RunStatus.RUNNING,
        urgent=True,
    ).select_related("judge")
    count = 0
    for run in stalled:
        lanes_start(run)
        count += 1
    return count + len(calibrations)
