"""Celery tasks of the pipeline, and the two functions that queue them (pipeline.py
calls those after its commit). The tasks take ids and call a service; nothing else."""

from celery import shared_task

from apps.core.queueing import queue_now

from . import services


def queue_keyword_recompute(*, keyword_id: int) -> None:
    """Queue the keyword's recompute; a broker that cannot be reached is logged, never
    raised (apps.core.queueing), and the keyword stays marked for the sweep."""
    queue_now(recompute_keyword, keyword_id)


def queue_evaluation_recompute(*, evaluation_id: int) -> None:
    """Queue a whole evaluation's recompute, tolerating a broker that is down."""
    queue_now(recompute_evaluation, evaluation_id)


@shared_task(name="apps.scoring.tasks.recompute_keyword")
def recompute_keyword(keyword_id: int) -> int:
    rounds = services.keyword_recompute(keyword_id=keyword_id)
    if rounds >= services.MAX_ROUNDS_PER_TASK and services.keyword_is_marked(keyword_id=keyword_id):
        # Out of rounds with grades still landing: the grades that marked it queued no
        # task (this one was pending), so hand the keyword to a new one.
        queue_keyword_recompute(keyword_id=keyword_id)
    return rounds


@shared_task(name="apps.scoring.tasks.recompute_marked")
def recompute_marked() -> int:
    return services.keywords_recompute_marked()


@shared_task(name="apps.scoring.tasks.recompute_evaluation")
def recompute_evaluation(evaluation_id: int) -> None:
    services.evaluation_recompute(evaluation_id=evaluation_id)
