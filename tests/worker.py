"""A real `celery worker` subprocess on Redis for tests of the pipeline and of starts."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.db import connection

from config.celery import app as celery_app

ROOT = Path(__file__).resolve().parent.parent


def database_url_of_test_database() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def wait_for(predicate: Callable[[], bool], *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def start_worker(
    broker_url: str,
    queue: str,
    *,
    prefork: bool = False,
    output: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """A worker reading and writing the test database, taking tasks from `queue` and the
    pipeline's from the queue this process sends them to (conftest.switch_broker's), as
    every deployed worker reads both.

    Search endpoints and AI judges on loopback are allowed, as in the tests that start
    evaluations and runs; `extra_env` adds settings (a shorter SLOT_LOCK_SECONDS).

    By default a lean one: the solo pool, without gossip, mingle and heartbeat. With
    `prefork`, the worker production runs (docker-compose.yml): two pool processes, every
    part on. `output`: a file for what it prints, instead of a pipe that a long test
    would fill (a worker whose pipe is full stops).
    """
    pipeline_queue = celery_app.conf.pipeline_queue
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_test_database(),
        "CELERY_BROKER_URL": broker_url,
        # What the worker queues comes back to it.
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_PIPELINE_QUEUE": pipeline_queue,
        "SEARCH_ALLOW_PRIVATE_ADDRESSES": "1",
        "AI_JUDGES_ALLOW_PRIVATE_ADDRESSES": "1",  # the tests' model server is on loopback
        **(extra_env or {}),
    }
    queues = f"--queues={queue},{pipeline_queue}"
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", queues]
    if prefork:
        command += ["--concurrency=2", "--loglevel=INFO"]
    else:
        command += [
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
    log = None if output is None else output.open("wb")
    try:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE if log is None else log,
            stderr=subprocess.STDOUT,
        )
    finally:
        if log is not None:
            log.close()  # the worker has its own copy of the file


def start_beat(
    broker_url: str,
    queue: str,
    schedule_file: Path,
    *,
    output: Path,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """A real `celery beat`, as docker-compose.yml runs it, sending its periodic tasks to
    this test's queues (start_worker's worker takes them). Its schedule file lives in the
    test's own directory; `extra_env` sets a faster tick (SCHEDULES_CHECK_SECONDS)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_test_database(),
        "CELERY_BROKER_URL": broker_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_PIPELINE_QUEUE": celery_app.conf.pipeline_queue,
        **(extra_env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "beat",
        "--loglevel=INFO",
        f"--schedule={schedule_file}",
        f"--pidfile={schedule_file}.pid",
    ]
    with output.open("wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop_worker(worker: subprocess.Popen[bytes]) -> str:
    """Stop the worker; returns what it printed (nothing when it printed to a file)."""
    worker.terminate()
    try:
        printed = worker.communicate(timeout=10)[0]
    except subprocess.TimeoutExpired:
        worker.kill()
        printed = worker.communicate()[0]
    return (printed or b"").decode(errors="replace")
