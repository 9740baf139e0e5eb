"""Celery tasks of tries. They take ids and call a service; nothing else."""

from celery import shared_task

from apps.core.queueing import queue_now

from .running import stalled_tries, try_run


@shared_task(name="apps.tries.tasks.run_try")
def run_try(try_id: int) -> str:
    return try_run(try_id=try_id)


@shared_task(name="apps.tries.tasks.resume_stalled_tries")
def resume_stalled_tries() -> int:
    """Beat: start a runner for every try whose run has none."""
    stalled = stalled_tries()
    for try_id in stalled:
        queue_now(run_try, try_id)
    return len(stalled)
