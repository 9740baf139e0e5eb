"""Gathering an evaluation's changed keywords into one recompute.

A round of scoring costs about the same for one keyword as for forty (its statements,
the evaluation's lock, the means and history it moves: bench/README.md), and
an AI judge or a busy team changes many keywords a second. So, with a broker, the first
change of an evaluation's keywords queues one task to run in PIPELINE_GATHER_SECONDS,
and the changes that come while it waits queue nothing: it scores every keyword of the
evaluation marked by then (services.recompute_gathered).

Which evaluation has a task waiting is a key in the broker's Redis, set if absent (one
writer wins) and deleted by the task as it starts, before it reads what is marked: a
change after that delete queues the next task, a change before it is read by this one.
The key expires soon after the task was due, so a task that was lost, or a key left by
another database, holds nothing back for long (a lost mark is the sweep's, as always).
When Redis cannot be asked (or publishing failed a moment ago: apps.core.queueing), the
change queues its task as if none were waiting, and queueing leaves it to the sweep.
"""

from __future__ import annotations

import contextlib
import os

import redis
from celery import current_app
from django.conf import settings

from apps.core.queueing import broker_recently_down

# How long a waiting task's key outlives the moment the task was due.
KEY_GRACE_S = 2.0

_clients: dict[tuple[int, str], redis.Redis] = {}


def gathering_begin(evaluation_id: int) -> bool:
    """True when no recompute of the evaluation is waiting: the caller queues one."""
    if broker_recently_down():
        return True
    ttl_ms = int((settings.PIPELINE_GATHER_SECONDS + KEY_GRACE_S) * 1000)
    try:
        return bool(_redis().set(_key(evaluation_id), "1", nx=True, px=ttl_ms))
    except (redis.RedisError, ValueError):  # ValueError: a broker that is not Redis
        return True


def gathering_end(evaluation_id: int) -> None:
    """The waiting recompute starts: changes from now on queue the next one."""
    with contextlib.suppress(redis.RedisError, ValueError):  # else the key expires by itself
        _redis().delete(_key(evaluation_id))


def _key(evaluation_id: int) -> str:
    # The pipeline's queue names the deployment (tests and benches run queues of their own).
    return f"relevo:scoring:gathering:{current_app.conf.pipeline_queue}:{evaluation_id}"


def _redis() -> redis.Redis:
    """This process's client of the broker's Redis (a forked worker makes its own); it
    waits for an answer no longer than a grade may wait for it."""
    url = current_app.conf.broker_url
    client = _clients.get((os.getpid(), url))
    if client is None:
        client = redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.25)
        _clients.clear()
        _clients[(os.getpid(), url)] = client
    return client
