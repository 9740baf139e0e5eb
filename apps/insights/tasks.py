"""Celery tasks of insights. They call a service; nothing else."""

from celery import shared_task

from .agreement.watch import disagreements_watch


@shared_task(name="apps.insights.tasks.watch_disagreements")
def watch_disagreements() -> int:
    """Beat: tell the teams that listen about disagreement queues past their level."""
    return disagreements_watch()
