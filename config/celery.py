"""The Celery application. Settings come from Django's settings with the CELERY_ prefix."""

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("relevo")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The metrics pipeline's tasks, by the name prefix they share (apps/scoring/tasks.py).
PIPELINE_TASKS = "apps.scoring.tasks."


def route_task(name: str, *args: Any, **kwargs: Any) -> dict[str, str] | None:
    """The pipeline's tasks to CELERY_PIPELINE_QUEUE (config/settings.py says why), the
    others to the default queue. Read when each task is published, so a test that gives
    its run queues of its own (conftest.switch_broker) needs nothing else."""
    if name.startswith(PIPELINE_TASKS):
        return {"queue": app.conf.pipeline_queue}
    return None
