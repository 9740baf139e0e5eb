"""A real `celery worker` subprocess on Redis for tests of the pipeline and of starts."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.db import connection

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


def start_worker(broker_url: str, queue: str) -> subprocess.Popen[bytes]:
    """A worker reading and writing the test database, taking tasks from `queue` only.

    Search endpoints on loopback are allowed, as in the tests that start evaluations.
    """
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_test_database(),
        "CELERY_BROKER_URL": broker_url,
        "SEARCH_ALLOW_PRIVATE_ADDRESSES": "1",
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            f"--queues={queue}",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def stop_worker(worker: subprocess.Popen[bytes]) -> str:
    """Stop the worker; returns what it printed."""
    worker.terminate()
    try:
        return worker.communicate(timeout=10)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        worker.kill()
        return worker.communicate()[0].decode(errors="replace")
