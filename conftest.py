"""Test set-up shared by every app.

Tests that need a real service (PostgreSQL, Redis, Chromium) skip with a visible reason
on a bare machine. CI sets RELEVO_REQUIRE_SERVICES=1, which turns those skips into
failures, so nothing is silently left out there.
"""

import os
import socket
import uuid
from urllib.parse import urlparse

import pytest
from django.conf import settings as django_settings

from apps.core import queueing
from config.celery import app as celery_app

REQUIRE_SERVICES = os.environ.get("RELEVO_REQUIRE_SERVICES") == "1"
# What the environment said before any test switched brokers (see switch_broker).
ORIGINAL_BROKER_URL = os.environ.get("CELERY_BROKER_URL")


def service_missing(reason: str) -> None:
    """Skip (bare machine) or fail (CI) because a service the test needs is missing."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required service missing: {reason}", pytrace=False)
    pytest.skip(f"service missing: {reason}")


def port_answers(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), 1
        ):
            return True
    except OSError:
        return False


@pytest.fixture(autouse=True)
def tasks_run_in_process():
    """Unless a test asks for a real broker, queued tasks run right after the commit."""
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


@pytest.fixture
def postgres(db):
    from django.db import connection

    if connection.vendor != "postgresql":
        service_missing("PostgreSQL (set DATABASE_URL=postgres://...)")
    return connection


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("RELEVO_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    if not port_answers(url, 6379):
        service_missing(f"Redis at {url}")
    return url


def switch_broker(url: str, *, eager: bool, queue: str = "", pipeline_queue: str = "") -> None:
    """Point this process's task publishing at another broker (or back in-process): the
    pipeline's tasks to `pipeline_queue`, the others to `queue` (unnamed: the settings')."""
    celery_app.conf.task_always_eager = eager
    # Celery's settings take attribute assignment as item assignment; its type stubs
    # allow only the item form for broker_url.
    celery_app.conf["broker_url"] = url
    # Celery prefers the CELERY_BROKER_URL environment variable (CI sets it) to its
    # configuration, so the variable has to follow too.
    os.environ["CELERY_BROKER_URL"] = url
    celery_app.conf.task_default_queue = queue or django_settings.CELERY_TASK_DEFAULT_QUEUE
    # config.celery.route_task reads it as each task is published.
    celery_app.conf.pipeline_queue = pipeline_queue or django_settings.CELERY_PIPELINE_QUEUE
    # Connections and producers are pooled per app; drop them so the next publish
    # connects to the new URL. Celery has no public call for this (close() also
    # deregisters the app) and its type stubs leave out these private attributes.
    celery_app._pool = None  # type: ignore[attr-defined]
    celery_app.amqp._producer_pool = None  # type: ignore[attr-defined]
    # Forget any earlier failure so this broker is tried at once.
    queueing.broker_failure_forget()


def restore_broker(saved_url: str) -> None:
    switch_broker(saved_url, eager=True)
    if ORIGINAL_BROKER_URL is None:
        os.environ.pop("CELERY_BROKER_URL", None)
    else:
        os.environ["CELERY_BROKER_URL"] = ORIGINAL_BROKER_URL


@pytest.fixture
def real_broker(redis_url):
    """Queued tasks go to Redis for a real worker, instead of running in-process.

    Yields (url, queue). The queue's name is unique to this run, and so is the pipeline's
    (`queue`-pipeline, which tests.worker.start_worker reads too), so test runs sharing
    one Redis never take each other's tasks.
    """
    saved = celery_app.conf.broker_url
    queue = f"relevo-test-{uuid.uuid4().hex[:12]}"
    pipeline_queue = f"{queue}-pipeline"
    switch_broker(redis_url, eager=False, queue=queue, pipeline_queue=pipeline_queue)
    yield redis_url, queue
    restore_broker(saved)
    import redis

    redis.Redis.from_url(redis_url).delete(queue, pipeline_queue)  # what no worker read


@pytest.fixture
def broker_down():
    """Queued tasks are published to a port where nothing listens."""
    saved = celery_app.conf.broker_url
    switch_broker("redis://127.0.0.1:9/0", eager=False)
    yield
    restore_broker(saved)


# --- The cast: team A's owner, admin and evaluator, and a lead of team B ---------------


@pytest.fixture(autouse=True)
def fresh_throttles():
    """Every test starts with no request counted (apps/core/ratelimit.py: the counts live
    in this process's memory, across tests). Log-in lock-outs are database rows, which
    each test's transaction or flush removes."""
    from apps.core import ratelimit

    ratelimit.clear()


@pytest.fixture(autouse=True)
def rate_limits_of_their_own(settings):
    """AI judges' learned rate limits live in Redis by provider account (a local fake
    provider's address): a test that scripts a 429 would hold back the next tests on the
    same server. They are shared only in the tests of the limits themselves
    (apps/judges/tests/test_rate_limits.py) and in a real worker's own process."""
    settings.AI_JUDGES_SHARED_RATE_LIMITS = False


@pytest.fixture
def steady_rate_windows(monkeypatch):
    """The rate windows stand still: a test's requests all fall in one minute, hour and
    day, however long they take. (Counts are kept in fixed windows; a test that happened
    to straddle a minute's edge would see its count start again and fail by chance.)"""
    from apps.core import ratelimit

    # Half past a whole day since the epoch: mid-minute, mid-hour and mid-day.
    pinned = 20_000 * 86_400 + 43_200 + 1_800 + 30
    monkeypatch.setattr(ratelimit, "_now", lambda: float(pinned))


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests log people in by the hundred; a slow hash only makes the suite slow."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def team_a():
    from tests.factories import make_team

    return make_team("Team A", owner="owner@a.test")


@pytest.fixture
def owner(team_a):
    from apps.accounts.models import User

    return User.objects.get(email="owner@a.test")


@pytest.fixture
def admin(team_a):
    from tests.factories import make_grader

    return make_grader(team_a, "admin@a.test", role="admin")


@pytest.fixture
def evaluator(team_a):
    from tests.factories import make_grader

    return make_grader(team_a, "evaluator@a.test")


@pytest.fixture
def team_b():
    from tests.factories import make_team

    return make_team("Team B", owner="outsider@b.test")


@pytest.fixture
def outsider(team_b):
    """The owner of team B: a lead, but of another team."""
    from apps.accounts.models import User

    return User.objects.get(email="outsider@b.test")


@pytest.fixture
def search_server(settings):
    """A real search system on 127.0.0.1 (tests/search_server.py), with loopback allowed
    for search endpoints as the issue asks of tests."""
    from tests.search_server import SearchServer

    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = True
    settings.SEARCH_RETRY_BACKOFF_SECONDS = 0.01
    server = SearchServer().start()
    yield server
    server.stop()


@pytest.fixture
def celery_worker_process(postgres, real_broker):
    """A real `celery worker` subprocess on Redis, reading and writing the test database."""
    from tests.worker import start_worker, stop_worker

    broker_url, queue = real_broker
    worker = start_worker(broker_url, queue)
    yield worker
    stop_worker(worker)
