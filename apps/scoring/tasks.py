"""Celery tasks of the pipeline. They take ids and call a service; nothing else."""

from celery import shared_task

from . import services


@shared_task(name="apps.scoring.tasks.recompute_keyword")
def recompute_keyword(keyword_id: int) -> int:
    return services.keyword_recompute(keyword_id=keyword_id)


@shared_task(name="apps.scoring.tasks.recompute_marked")
def recompute_marked() -> int:
    return services.keywords_recompute_marked()


@shared_task(name="apps.scoring.tasks.recompute_evaluation")
def recompute_evaluation(evaluation_id: int) -> None:
    services.evaluation_recompute(evaluation_id=evaluation_id)
