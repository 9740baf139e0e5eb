"""apps.core.queueing: tasks are queued after the commit, and a broker that is down is
logged and left to the sweeps, quickly, instead of failing the write that queued them."""

import logging
import time

import pytest
from django.db import transaction

from apps.core import queueing
from config.celery import app as celery_app

ran: list[int] = []


@celery_app.task(name="apps.core.tests.test_queueing.remember")
def remember(number: int) -> None:
    ran.append(number)


@celery_app.task(name="apps.core.tests.test_queueing.broken")
def broken(number: int) -> None:
    raise ValueError(f"a bug in the task ({number})")


@pytest.fixture(autouse=True)
def nothing_ran_yet():
    ran.clear()


@pytest.mark.django_db(transaction=True)
def test_a_task_is_queued_when_the_transaction_commits_and_never_when_it_rolls_back():
    with transaction.atomic():
        queueing.queue_after_commit(remember, 1)
        assert ran == []  # its data is not visible to a worker yet
    assert ran == [1]

    with pytest.raises(RuntimeError), transaction.atomic():
        queueing.queue_after_commit(remember, 2)
        raise RuntimeError("the write fails")
    assert ran == [1]


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_the_commit_succeeds_quickly_and_later_tasks_are_not_tried(
    broker_down, caplog
):
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="apps.core.queueing"):
        with transaction.atomic():
            queueing.queue_after_commit(remember, 1)
        assert queueing.queue_now(remember, 2) is False
        assert queueing.queue_in(5, remember, 3) is False

    assert time.monotonic() - started < 2
    # One attempt reached for the broker; the others were left to the sweeps at once.
    assert [r.getMessage() for r in caplog.records] == [
        "could not queue apps.core.tests.test_queueing.remember(1,); the sweep will do its "
        "work, and queueing pauses for 15 s"
    ]
    assert queueing._broker_unavailable_until > time.monotonic()

    queueing.broker_failure_forget()
    assert queueing._broker_unavailable_until == 0.0


def test_in_process_a_tasks_own_error_is_not_taken_for_a_broker_that_is_down():
    """Without a broker (development, tests) the task runs at once; its bugs show."""
    with pytest.raises(ValueError, match="a bug in the task"):
        queueing.queue_now(broken, 1)
    assert queueing._broker_unavailable_until == 0.0
