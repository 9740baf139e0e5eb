"""A real worker rides out a Redis outage while grades arrive, and the same process makes
every metric exact afterwards, without a restart.

The worker runs as production runs it (prefork, two pool processes, every part on)
against a redis-server of the test's own, which the test stops and starts again on the
same port. One task is kept running across the outage: the test holds a row lock its
recompute needs. That is the state in which the worker used to exit with kombu's
AttributeError (config/broker.py says why): a task running, its acknowledgement due on a
connection that is gone, and the worker's next BRPOP waiting.
"""

import random
import threading
import time
from pathlib import Path

import pytest
from django.db import connection, transaction

from apps.evaluations.models import Keyword
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.models import KeywordMetric
from apps.scoring.tasks import recompute_marked
from config.celery import app as celery_app
from conftest import restore_broker, service_missing, switch_broker
from tests.factories import make_evaluation, slots_of
from tests.metrics_check import metric_differences
from tests.redis_server import RedisServer
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Long enough for several of the worker's reconnect attempts (2, 4, 6 s apart) to fail.
OUTAGE_SECONDS = 15


@pytest.fixture
def own_redis(postgres):
    if not RedisServer.available():
        service_missing("redis-server (to start a Redis of the test's own)")
    server = RedisServer().start()
    saved = celery_app.conf.broker_url
    switch_broker(server.url(), eager=False)  # grades queue their tasks on this Redis
    yield server
    restore_broker(saved)
    server.close()


class RowLock:
    """Hold FOR UPDATE locks on some rows from a thread of its own (its own connection),
    until released."""

    def __init__(self, queryset) -> None:
        self.queryset = queryset
        self.held = threading.Event()
        self.release = threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        try:
            with transaction.atomic():
                # of=self: the rows themselves, not those of tables the query joins.
                list(self.queryset.select_for_update(of=("self",)))
                self.held.set()
                self.release.wait(120)
        finally:
            connection.close()

    def __enter__(self) -> "RowLock":
        self.thread.start()
        assert self.held.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release.set()
        self.thread.join(10)


def backends_waiting_for_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def publish_until_taken(task, seconds: float) -> None:
    """Publish task() once Redis takes it (the first try after a restart may meet one of
    this process's pooled connections to the Redis that went away)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            task.apply_async()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_a_worker_rides_out_a_redis_outage_and_makes_every_metric_exact_without_restart(
    own_redis, tmp_path: Path
):
    log = tmp_path / "worker.log"
    worker = start_worker(own_redis.url(), "celery", prefork=True, output=log)
    try:
        evaluation = make_evaluation(
            metrics=[("ndcg", 5), ("precision", 5), ("cg", 3)],
            keywords={f"keyword {n:02d}": 5 for n in range(12)},
        )
        slots = slots_of(evaluation)
        by_keyword: dict[int, list[int]] = {}
        for slot in slots:
            by_keyword.setdefault(slot.keyword_id, []).append(slot.id)
        busy, *others = list(by_keyword)
        grades = random.Random(16)

        # Grading before the outage: the worker is up and scores every keyword.
        for keyword_id in by_keyword:
            slot_judge(
                slot_id=by_keyword[keyword_id][0], giver=Giver.recorded(), grade=grades.randrange(4)
            )

        def nothing_waits() -> bool:
            return not Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists()

        assert wait_for(nothing_waits, seconds=60), log.read_text()

        # A task running across the outage: the busy keyword's recompute waits for the
        # metric rows the test holds.
        with RowLock(KeywordMetric.objects.filter(keyword_id=busy)) as lock:
            slot_judge(slot_id=by_keyword[busy][1], giver=Giver.recorded(), grade=3)
            assert wait_for(lambda: backends_waiting_for_a_lock() >= 1, seconds=30)

            own_redis.stop()
            # Grades keep arriving while Redis is down: each is saved, its task is not
            # queued, and its keyword stays marked for the sweep.
            outage_ends = time.monotonic() + OUTAGE_SECONDS
            graded_in_outage = 0
            while time.monotonic() < outage_ends:
                keyword_id = others[graded_in_outage % len(others)]
                slot_id = by_keyword[keyword_id][1 + graded_in_outage // len(others) % 4]
                slot_judge(slot_id=slot_id, giver=Giver.recorded(), grade=grades.randrange(4))
                graded_in_outage += 1
                time.sleep(0.25)
            own_redis.start()
            # The held task finishes after Redis is back; its acknowledgement goes to the
            # connection that was lost.
            lock.release.set()

        assert graded_in_outage > 20
        # What beat sends every minute; the worker takes it once it has reconnected.
        publish_until_taken(recompute_marked, seconds=30)

        def exact_or_worker_gone() -> bool:
            return worker.poll() is not None or not metric_differences(evaluation.id)

        wait_for(exact_or_worker_gone, seconds=90)
        output = log.read_text()
        assert worker.poll() is None, f"the worker exited:\n{output}"
        assert metric_differences(evaluation.id) == [], output
        assert "Unrecoverable error" not in output, output
        assert "Connection to broker lost" in output  # it did see the outage
    finally:
        stop_worker(worker)
