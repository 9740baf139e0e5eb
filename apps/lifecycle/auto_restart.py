"""Auto-restart: an evaluation set to restart on its own gets a fresh copy when it
finishes. The pipeline finishes evaluations (apps.scoring.finishing) and never imports
the lifecycle above it: the app registers restart_after_commit there when it is ready
(apps.py).
"""

from celery import shared_task

from apps.core.queueing import queue_after_commit

from .steps import evaluation_restart


def restart_after_commit(evaluation_id: int) -> None:
    """Queue the fresh copy of the finished evaluation once its finish commits."""
    queue_after_commit(restart_evaluation, evaluation_id)


@shared_task(name="apps.lifecycle.auto_restart.restart_evaluation")
def restart_evaluation(evaluation_id: int) -> int:
    """Start a fresh copy of the finished evaluation; its id."""
    return evaluation_restart(evaluation_id=evaluation_id).id
