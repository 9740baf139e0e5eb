"""The Celery task of auto-restart: an evaluation set to restart on its own gets a fresh
copy when it finishes. The pipeline finishes evaluations and queues this task by its
name (apps.scoring.finishing), so it never imports the lifecycle above it; the app
registers the task when it is ready (apps.py).
"""

from celery import shared_task

from .lifecycle import evaluation_restart


@shared_task(name="apps.evaluations.auto_restart.restart_evaluation")
def restart_evaluation(evaluation_id: int) -> int:
    """Start a fresh copy of the finished evaluation; its id."""
    return evaluation_restart(evaluation_id=evaluation_id).id
