"""Running a click judgement job on a Celery worker, and the sweep that restarts the
ones no worker is on.

A worker takes a job with a conditional UPDATE (queued to running), so of two workers
handed the same job one runs it and the other goes away. While it fits and stores, a
thread of the worker writes the job's heartbeat every HEARTBEAT_SECONDS; a job whose
heartbeat stops (the worker was killed or lost its machine) goes back to the queue.
The list and the job's end are stored in one transaction, and only by the worker that
took the job last: a job that made its list is done, and is never run again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import F
from django.utils import timezone

from apps.core.errors import InvalidInput

from .click_judgements import judgements_made, settings_of
from .models import ClickJudgementJob, ClickJudgementSet, JobStatus

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15
# No heartbeat for this long: the worker died (a beat can wait on a busy database).
QUIET_AFTER = timedelta(minutes=2)
# Queued and not started for this long: its task was lost (the broker was down).
UNSTARTED_AFTER = timedelta(minutes=3)
# A job whose worker died this many times is failed, not queued once more: it would
# most likely kill the next one too (a log too big for the worker's memory).
MAX_ATTEMPTS = 3
SWEEP_BATCH = 100


class _NoLongerOurs(Exception):
    """The job was given to another worker while this one still ran it."""


def click_job_run(*, job_id: int) -> str:
    """Make the job's judgements if no other worker has it; what happened, in a word."""
    attempt = _claim(job_id)
    if attempt is None:
        return "not runnable"
    job = ClickJudgementJob.objects.select_related("team", "log", "requested_by").get(id=job_id)
    try:
        with _heartbeat(job_id, attempt):
            judgements_made(
                team=job.team,
                user=job.requested_by,
                log=job.log,
                asked=settings_of(job.settings),
                name=job.settings["name"],
                on_stored=lambda made: _finish_done(job_id, attempt, made),
            )
    except _NoLongerOurs:
        return "given to another worker"
    except InvalidInput as error:
        _finish(job_id, attempt, status=JobStatus.FAILED, problems=error.problems)
        return "failed"
    except Exception as error:
        # A bug or an outage, not the lead's settings: logged whole, named on the job.
        logger.exception("click judgement job %s failed", job_id)
        problem = f"the worker failed: {type(error).__name__}"
        _finish(job_id, attempt, status=JobStatus.FAILED, problems=[problem])
        return "failed"
    return "done"


def _claim(job_id: int) -> int | None:
    """Take a queued job; the attempt's number, or None when it is not queued (another
    worker has it, or it ended)."""
    now = timezone.now()
    taken = ClickJudgementJob.objects.filter(
        id=job_id, status=JobStatus.QUEUED, result__isnull=True
    ).update(status=JobStatus.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1)
    if not taken:
        return None
    return ClickJudgementJob.objects.values_list("attempts", flat=True).get(id=job_id)


def _ours(job_id: int, attempt: int) -> Any:
    return ClickJudgementJob.objects.filter(id=job_id, status=JobStatus.RUNNING, attempts=attempt)


def _finish_done(job_id: int, attempt: int, made: ClickJudgementSet) -> None:
    """Record the job done with its list, in the list's transaction; raising undoes the
    list when another worker has the job now."""
    if not _finish(job_id, attempt, status=JobStatus.DONE, result=made):
        raise _NoLongerOurs


def _finish(job_id: int, attempt: int, **ending: Any) -> bool:
    return bool(_ours(job_id, attempt).update(finished_at=timezone.now(), **ending))


@contextmanager
def _heartbeat(job_id: int, attempt: int) -> Iterator[None]:
    """Write the job's heartbeat every HEARTBEAT_SECONDS from a thread of its own while
    the block runs (the fit is one long call that cannot stop to write it)."""
    stopped = threading.Event()

    def beat() -> None:
        try:
            while not stopped.wait(HEARTBEAT_SECONDS):
                try:
                    _ours(job_id, attempt).update(heartbeat_at=timezone.now())
                except DatabaseError:
                    logger.warning("could not write job %s's heartbeat", job_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"relevo-click-job-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()


def stalled_click_jobs() -> list[int]:
    """Put back in the queue the jobs no worker is on: queued ones nobody started within
    UNSTARTED_AFTER, running ones whose heartbeat stopped QUIET_AFTER ago (failed after
    MAX_ATTEMPTS). A job with its list is done and never among them. The ids to queue."""
    now = timezone.now()
    waiting = ClickJudgementJob.objects.filter(result__isnull=True)
    unstarted = waiting.filter(status=JobStatus.QUEUED, queued_at__lt=now - UNSTARTED_AFTER)
    quiet = waiting.filter(status=JobStatus.RUNNING, heartbeat_at__lt=now - QUIET_AFTER)
    _fail_worn_out(quiet.filter(attempts__gte=MAX_ATTEMPTS))
    again = []
    for job_id in list(unstarted.values_list("id", flat=True)[:SWEEP_BATCH]):
        # queued_at moves on, so a job still waiting is queued once more in a few minutes.
        if unstarted.filter(id=job_id).update(queued_at=now):
            again.append(job_id)
    for job_id in list(quiet.values_list("id", flat=True)[:SWEEP_BATCH]):
        if quiet.filter(id=job_id).update(status=JobStatus.QUEUED, queued_at=now):
            again.append(job_id)
    return again


def _fail_worn_out(jobs: Any) -> None:
    problem = (
        f"the worker stopped while making them, {MAX_ATTEMPTS} times; make them with "
        "manage.py click_judgements"
    )
    jobs.update(status=JobStatus.FAILED, problems=[problem], finished_at=timezone.now())
