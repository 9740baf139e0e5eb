"""Celery tasks of evaluations. They take ids and call a service; nothing else."""

from celery import Task, shared_task

from apps.core.queueing import queue_in, queue_now

from . import fetching

# When another evaluation is calling the same endpoint, look again after this long.
ENDPOINT_BUSY_RETRY_SECONDS = 5


@shared_task(name="apps.lifecycle.tasks.fetch_evaluation", bind=True)
def fetch_evaluation(self: Task, evaluation_id: int) -> str:
    outcome = fetching.evaluation_fetch(evaluation_id=evaluation_id)
    if outcome == "endpoint busy" and not self.request.is_eager:
        # If the broker cannot take it, resume_stalled_fetches starts the run later.
        queue_in(ENDPOINT_BUSY_RETRY_SECONDS, self, evaluation_id)
    return outcome


@shared_task(name="apps.lifecycle.tasks.resume_stalled_fetches")
def resume_stalled_fetches() -> int:
    """Beat: start a runner for every evaluation whose keyword run has none."""
    stalled = fetching.stalled_fetches()
    for evaluation_id in stalled:
        queue_now(fetch_evaluation, evaluation_id)
    return len(stalled)
