"""The metrics pipeline's tasks have a queue of their own (CELERY_PIPELINE_QUEUE), so they
never wait behind an AI judge's lanes; every other task goes to the default queue, and a
worker started without --queues reads both."""

import os
import subprocess
import sys

import pytest

from apps.judges.tasks import judge_lane, resume_stalled_runs
from apps.lifecycle.tasks import fetch_evaluation, resume_stalled_fetches
from apps.scoring.tasks import (
    recompute_evaluation,
    recompute_gathered,
    recompute_keywords,
    recompute_marked,
)
from config.celery import app as celery_app
from config.tests.test_settings import PROJECT, SETUP

PIPELINE_TASKS = [recompute_keywords, recompute_gathered, recompute_evaluation, recompute_marked]
OTHER_TASKS = [judge_lane, resume_stalled_runs, fetch_evaluation, resume_stalled_fetches]


def queue_of(task) -> str:
    return celery_app.amqp.router.route({}, task.name)["queue"].name


@pytest.mark.parametrize("task", PIPELINE_TASKS, ids=lambda task: task.name)
def test_the_pipelines_tasks_go_to_the_pipeline_queue(task):
    assert queue_of(task) == celery_app.conf.pipeline_queue


@pytest.mark.parametrize("task", OTHER_TASKS, ids=lambda task: task.name)
def test_other_tasks_go_to_the_default_queue(task):
    assert queue_of(task) == celery_app.conf.task_default_queue


def test_the_two_queues_are_apart(settings):
    assert settings.CELERY_PIPELINE_QUEUE != settings.CELERY_TASK_DEFAULT_QUEUE


def test_the_route_is_read_when_a_task_is_published():
    # Tests give each run queues of their own by changing the app's configuration.
    saved = celery_app.conf.pipeline_queue
    celery_app.conf.pipeline_queue = "a-run-of-its-own"
    try:
        assert queue_of(recompute_keywords) == "a-run-of-its-own"
    finally:
        celery_app.conf.pipeline_queue = saved


def test_a_worker_without_queues_given_reads_both_named_in_the_environment():
    script = (
        f"{SETUP}; from config.celery import app; "
        "print(sorted(app.amqp.Queues(app.conf.task_queues).consume_from))"
    )
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CELERY_TASK_DEFAULT_QUEUE": "lanes",
        "CELERY_PIPELINE_QUEUE": "metrics",
    }

    printed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout

    assert printed.strip() == "['lanes', 'metrics']"
