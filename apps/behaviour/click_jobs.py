"""Asking for judgements from clicks: the settings are checked at once (a wrong field is
named before anything is queued), then a job is kept and a worker fits and stores them
(click_job_running.py): a big log's fit and store outlast a web request."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput
from apps.core.queueing import queue_after_commit
from apps.engine import clicks

from .click_judgements import click_settings_checked, settings_stored
from .models import ClickJudgementJob, ClickLog, JobStatus
from .tasks import make_click_judgements

UNFINISHED = (JobStatus.QUEUED, JobStatus.RUNNING)
JOBS_SHOWN = 20


def click_judgements_request(
    *,
    team: Team,
    user: User | None,
    log: ClickLog,
    model: Any,
    scale: Any,
    min_impressions: Any = clicks.MIN_IMPRESSIONS,
    thresholds: Any = None,
    name: Any = None,
) -> ClickJudgementJob:
    """Check the settings (InvalidInput names each field that is wrong), keep the job and
    queue it after the commit. With no broker the job runs at the commit, in this
    process, and is over when this returns."""
    asked, list_name = click_settings_checked(
        team=team,
        log=log,
        model=model,
        scale=scale,
        min_impressions=min_impressions,
        thresholds=thresholds,
        name=name,
    )
    if _unfinished(team).filter(settings__name=list_name).exists():
        raise InvalidInput(
            [f"name: judgements named {list_name} are being made already; give these another name"]
        )
    with transaction.atomic():
        job = ClickJudgementJob.objects.create(
            team=team,
            log=log,
            requested_by=user,
            settings={**settings_stored(asked), "name": list_name},
            queued_at=timezone.now(),
        )
        queue_after_commit(make_click_judgements, job.id)
    job.refresh_from_db()  # done or failed already when it ran at the commit
    return job


def _unfinished(team: Team) -> Any:
    return ClickJudgementJob.objects.filter(team=team, status__in=UNFINISHED)


def log_jobs(log: ClickLog) -> list[ClickJudgementJob]:
    """The log's newest jobs, with the lists they made."""
    return list(
        ClickJudgementJob.objects.filter(log=log)
        .select_related("result__judgement_list", "requested_by")
        .order_by("-created_at", "-id")[:JOBS_SHOWN]
    )


def any_unfinished(jobs: list[ClickJudgementJob]) -> bool:
    return any(job.status in UNFINISHED for job in jobs)
