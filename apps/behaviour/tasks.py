"""Celery tasks of behaviour logs. They take ids and call a service; nothing else."""

from celery import shared_task

from apps.core.queueing import queue_now

from .click_job_running import click_job_run, stalled_click_jobs


@shared_task(name="apps.behaviour.tasks.make_click_judgements")
def make_click_judgements(job_id: int) -> str:
    return click_job_run(job_id=job_id)


@shared_task(name="apps.behaviour.tasks.resume_stalled_click_jobs")
def resume_stalled_click_jobs() -> int:
    """Beat: queue again every click judgement job no worker is on."""
    stalled = stalled_click_jobs()
    for job_id in stalled:
        queue_now(make_click_judgements, job_id)
    return len(stalled)
