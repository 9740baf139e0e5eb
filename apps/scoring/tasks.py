"""Celery tasks of the pipeline: one a use case, each named as the service it runs
(services.py) and taking ids. Which of them a change queues, and how, is chosen in one
place: pipeline.start_recompute.

A task that runs out of rounds (services.MAX_ROUNDS_PER_TASK) while grades still land
queues itself again at once, so one busy keyword never holds a worker for long.
"""

from celery import shared_task

from apps.core.queueing import queue_now

from . import services
from .gathering import gathering_begin, gathering_end


@shared_task(name="apps.scoring.tasks.recompute_keywords")
def recompute_keywords(keyword_ids: list[int]) -> int:
    rounds, _scored = services.recompute_keywords(keyword_ids=keyword_ids)
    if rounds >= services.MAX_ROUNDS_PER_TASK:
        for keyword_id in keyword_ids:
            if services.keyword_is_marked(keyword_id=keyword_id):
                # The grades that marked it queued no task (this one was pending).
                queue_now(recompute_keywords, [keyword_id])
                break  # its task takes the evaluation's other marked keywords along
    return rounds


@shared_task(name="apps.scoring.tasks.recompute_gathered")
def recompute_gathered(evaluation_id: int) -> int:
    gathering_end(evaluation_id)  # before reading what is marked: gathering.py says why
    rounds, scored = services.recompute_gathered(evaluation_id=evaluation_id)
    if rounds >= services.MAX_ROUNDS_PER_TASK and gathering_begin(evaluation_id):
        queue_now(recompute_gathered, evaluation_id)
    return scored


@shared_task(name="apps.scoring.tasks.recompute_marked")
def recompute_marked() -> int:
    return services.recompute_marked()


@shared_task(name="apps.scoring.tasks.recompute_evaluation")
def recompute_evaluation(evaluation_id: int) -> None:
    services.recompute_evaluation(evaluation_id=evaluation_id)


# The name one keyword's recompute was queued under before recompute_keywords took one
# keyword too: messages a broker still holds run as before.
@shared_task(name="apps.scoring.tasks.recompute_keyword")
def _recompute_keyword_queued_earlier(keyword_id: int) -> int:
    return recompute_keywords([keyword_id])
