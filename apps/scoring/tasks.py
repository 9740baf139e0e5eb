"""Celery tasks of the pipeline, and the functions that queue them (pipeline.py calls
those after its commit). The tasks take ids and call a service; nothing else."""

from celery import current_app, shared_task
from django.conf import settings

from apps.core.queueing import queue_in, queue_now

from . import services
from .gathering import gathering_begin, gathering_end


def queue_recompute(*, evaluation_id: int, keyword_ids: list[int]) -> None:
    """Queue the recompute of keywords of the evaluation whose first change since they
    were scored just committed. With a broker, one task gathers the evaluation's changes
    for PIPELINE_GATHER_SECONDS (gathering.py); without one, tasks run here and now."""
    gather = settings.PIPELINE_GATHER_SECONDS
    if current_app.conf.task_always_eager or gather <= 0:
        if len(keyword_ids) == 1:
            queue_keyword_recompute(keyword_id=keyword_ids[0])
        else:
            queue_keywords_recompute(keyword_ids=keyword_ids)
    elif gathering_begin(evaluation_id):
        queue_in(gather, recompute_gathered, evaluation_id)


def queue_keyword_recompute(*, keyword_id: int) -> None:
    """Queue the keyword's recompute; a broker that cannot be reached is logged, never
    raised (apps.core.queueing), and the keyword stays marked for the sweep."""
    queue_now(recompute_keyword, keyword_id)


def queue_keywords_recompute(*, keyword_ids: list[int]) -> None:
    """Queue one recompute of several keywords of one evaluation, tolerating a broker
    that is down (the keywords stay marked for the sweep)."""
    queue_now(recompute_keywords, keyword_ids)


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


@shared_task(name="apps.scoring.tasks.recompute_keywords")
def recompute_keywords(keyword_ids: list[int]) -> int:
    rounds, _scored = services.keywords_recompute(keyword_ids=keyword_ids)
    if rounds >= services.MAX_ROUNDS_PER_TASK:
        for keyword_id in keyword_ids:
            if services.keyword_is_marked(keyword_id=keyword_id):
                queue_keyword_recompute(keyword_id=keyword_id)  # see recompute_keyword
                break  # its task takes the evaluation's other marked keywords along
    return rounds


@shared_task(name="apps.scoring.tasks.recompute_gathered")
def recompute_gathered(evaluation_id: int) -> int:
    gathering_end(evaluation_id)  # before reading what is marked: gathering.py says why
    rounds, scored = services.evaluation_marks_recompute(evaluation_id=evaluation_id)
    if rounds >= services.MAX_ROUNDS_PER_TASK and gathering_begin(evaluation_id):
        queue_now(recompute_gathered, evaluation_id)  # out of rounds: a fresh task goes on
    return scored


@shared_task(name="apps.scoring.tasks.recompute_marked")
def recompute_marked() -> int:
    return services.keywords_recompute_marked()


@shared_task(name="apps.scoring.tasks.recompute_evaluation")
def recompute_evaluation(evaluation_id: int) -> None:
    services.evaluation_recompute(evaluation_id=evaluation_id)
