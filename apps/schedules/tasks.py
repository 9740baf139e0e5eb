"""Celery tasks of schedules. They call the runner; nothing else."""

from celery import shared_task

from .runner import scheduled_runs_advance, schedules_run_due


@shared_task(name="apps.schedules.tasks.run_schedules")
def run_schedules() -> dict[str, int]:
    """Beat: start the runs that are due, then move the others on."""
    return {"started": schedules_run_due(), "compared": scheduled_runs_advance()}
