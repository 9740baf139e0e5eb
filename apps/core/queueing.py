"""Queueing Celery tasks so that a broker that is down never fails a write.

Every piece of follow-up work (a keyword's recompute, an evaluation's keyword run) is
queued through here, after the data it works on is committed:

    queue_after_commit(recompute_evaluation, evaluation.id)

The data is what matters; the task only brings derived numbers up to date, and the
periodic sweeps find whatever a task that never got queued left undone (keywords stay
`needs_scoring`: apps.scoring.tasks.recompute_marked; fetches stay `fetching`:
apps.lifecycle.tasks.resume_stalled_fetches). So when the broker (Redis) cannot be
reached, queueing logs a warning and returns: the request that saved the data answers
normally instead of raising after the commit.

Publishing fails fast (CELERY_TASK_PUBLISH_RETRY = False and short socket timeouts in
config/settings.py), and after one failure this process stops asking the broker for
BROKER_BACKOFF_SECONDS, so a burst of grades does not wait on a dead broker one by one.
"""

import logging
import time
from typing import Any

from django.db import transaction
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What publishing raises when the broker is unreachable or refuses: kombu wraps the
# transport's connection errors in its OperationalError; the others are what the Redis
# client or the socket raise when they get through unwrapped.
BROKER_ERRORS: tuple[type[BaseException], ...] = (KombuOperationalError, RedisError, OSError)

# After a failed publish this process leaves tasks to the sweeps for this long.
BROKER_BACKOFF_SECONDS = 15.0
_broker_unavailable_until = 0.0


def queue_after_commit(task: Any, *args: Any, **kwargs: Any) -> None:
    """Queue task(*args, **kwargs) once the current transaction commits (at once when
    there is none), tolerating a broker that is down. Use this for every task a write
    queues: a task queued before the commit could run before its data is visible, and
    one queued from a transaction that rolls back would work on data that never was."""
    transaction.on_commit(lambda: queue_now(task, *args, **kwargs))


def queue_now(task: Any, *args: Any, **kwargs: Any) -> bool:
    """Queue task(*args, **kwargs) now; False when the broker could not take it (logged).

    For code that runs outside a request's transaction: periodic tasks, workers."""
    return _publish(task, args, kwargs)


def queue_in(seconds: float, task: Any, *args: Any, **kwargs: Any) -> bool:
    """Queue task(*args, **kwargs) to run in `seconds` (a worker looking again later)."""
    return _publish(task, args, kwargs, countdown=seconds)


def broker_recently_down() -> bool:
    """Whether a publish failed within BROKER_BACKOFF_SECONDS (tasks go to the sweeps)."""
    return time.monotonic() < _broker_unavailable_until


def broker_failure_forget() -> None:
    """Try the broker at the next publish, whatever failed before (tests switch brokers)."""
    global _broker_unavailable_until
    _broker_unavailable_until = 0.0


def _publish(
    task: Any, args: tuple[Any, ...], kwargs: dict[str, Any], countdown: float | None = None
) -> bool:
    global _broker_unavailable_until
    if task.app.conf.task_always_eager:
        # No broker: the task runs here and now, and its own errors are bugs to see
        # (CELERY_TASK_EAGER_PROPAGATES), not a broker to tolerate.
        task.apply_async(args, kwargs, countdown=countdown)
        return True
    if time.monotonic() < _broker_unavailable_until:
        logger.debug("broker recently down; %s%r left to the sweep", task.name, args)
        return False
    try:
        task.apply_async(args, kwargs, countdown=countdown)
    except BROKER_ERRORS:
        _broker_unavailable_until = time.monotonic() + BROKER_BACKOFF_SECONDS
        logger.warning(
            "could not queue %s%r; the sweep will do its work, and queueing pauses for %.0f s",
            task.name,
            args,
            BROKER_BACKOFF_SECONDS,
            exc_info=True,
        )
        return False
    return True
