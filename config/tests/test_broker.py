"""The broker settings that let a worker outlive a Redis outage (config/broker.py): the
fixed transport for Redis URLs, and no cap on reconnect attempts. Each check starts
Django afresh in a subprocess, since settings read the environment once."""

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
SHOW = (
    "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; "
    "django.setup(); from config.celery import app; "
    "print(type(app.connection_for_write().transport).__name__, "
    "app.conf.broker_connection_max_retries)"
)


def transport_and_retries(broker_url: str | None) -> str:
    env = {key: value for key, value in os.environ.items() if key != "CELERY_BROKER_URL"}
    if broker_url is not None:
        env["CELERY_BROKER_URL"] = broker_url
    done = subprocess.run(
        [sys.executable, "-c", SHOW], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[-2]  # the last line printed


def test_a_redis_broker_uses_the_fixed_transport_and_retries_without_a_cap():
    # No connection is made: the transport is only chosen.
    assert transport_and_retries("redis://127.0.0.1:9/0") == "RedisTransport None"


def test_without_a_broker_tasks_stay_in_memory_and_kombu_picks_the_transport():
    assert transport_and_retries(None) == "Transport None"
