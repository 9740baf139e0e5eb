"""Scheduled runs on real parts: a real `celery beat` reads the schedules from
PostgreSQL and a real worker on Redis runs them. Time is controlled by the schedule's
next time: set three days back, as if beat had been down since, it makes exactly one run,
whose keywords the worker runs against a real search server; once graded, beat's next
tick compares it and a webhook is told. A beat restarted later finds the schedule where
the database keeps it."""

import pytest
from django.utils import timezone

from apps.evaluations.models import Evaluation, Status
from apps.evaluations.services import keywords_add
from apps.judging.judgements import Giver, slot_judge
from apps.notifications import services as notifications
from apps.notifications.models import Delivery
from apps.schedules import services
from apps.schedules.models import RunState, Schedule, ScheduledRun
from tests.factories import make_evaluation, make_grader, make_search_model, make_team, slots_of
from tests.worker import start_beat, start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

FAST = {"SCHEDULES_CHECK_SECONDS": "1", "SEARCH_ALLOW_PRIVATE_ADDRESSES": "1"}


def test_beat_runs_a_missed_schedule_once_and_compares_the_run(
    postgres, real_broker, search_server, tmp_path
):
    broker_url, queue = real_broker
    team = make_team()
    grader = make_grader(team)
    setup = make_evaluation(
        team=team,
        keywords={},
        metrics=[("precision", 5)],
        scale="binary",
        start=False,
        search_model=make_search_model(team, search_server.base_url),
    )
    keywords_add(evaluation=setup, texts=["red shoes", "blue hat"])
    schedule = services.schedule_create(
        team=team, name="Nightly", source=setup.id, cron="0 6 * * *"
    )
    notifications.webhook_create(
        team=team,
        name="CI",
        url="https://hooks.example.invalid/x",
        events=["schedule.run_compared"],
    )
    three_days_ago = timezone.now() - timezone.timedelta(days=3)
    Schedule.objects.filter(id=schedule.id).update(next_run_at=three_days_ago)

    worker = start_worker(broker_url, queue, extra_env=FAST)
    beat = start_beat(
        broker_url, queue, tmp_path / "beat-schedule", output=tmp_path / "beat.log", extra_env=FAST
    )
    try:

        def opened() -> bool:
            run = ScheduledRun.objects.select_related("evaluation").first()
            return run is not None and run.evaluation.status == Status.ACTIVE

        if not wait_for(opened, seconds=45):
            pytest.fail(
                f"no run opened in 45 s; beat said:\n{(tmp_path / 'beat.log').read_text()}\n"
                f"the worker said:\n{stop_worker(worker)}"
            )
        [run] = ScheduledRun.objects.all()
        evaluation = run.evaluation
        assert evaluation.keywords.count() == 2
        schedule.refresh_from_db()
        assert schedule.next_run_at > timezone.now(), "the missed times collapsed into one run"

        for slot in slots_of(evaluation):
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)

        def compared() -> bool:
            return ScheduledRun.objects.filter(id=run.id, state=RunState.COMPARED).exists()

        if not wait_for(compared, seconds=30):
            pytest.fail(f"not compared in 30 s; beat said:\n{(tmp_path / 'beat.log').read_text()}")
        assert ScheduledRun.objects.count() == 1, "one run, not one per missed time"
        assert Evaluation.objects.get(id=evaluation.id).status == Status.FINISHED
        assert Delivery.objects.filter(event="schedule.run_compared").count() == 1

        # Beat stops, its next time passes while it is down, and a new beat (no schedule
        # file of its own) reads the schedule from the database and runs it.
        beat.terminate()
        beat.wait(timeout=10)
        Schedule.objects.filter(id=schedule.id).update(next_run_at=timezone.now())
        beat = start_beat(
            broker_url, queue, tmp_path / "new-beat", output=tmp_path / "beat2.log", extra_env=FAST
        )
        if not wait_for(lambda: ScheduledRun.objects.count() == 2, seconds=30):
            pytest.fail(
                f"the new beat ran nothing; it said:\n{(tmp_path / 'beat2.log').read_text()}"
            )
        second = ScheduledRun.objects.order_by("-id").first()
        assert second.previous_id == evaluation.id, "compared, when done, with the first run"
    finally:
        beat.terminate()
        beat.wait(timeout=10)
        stop_worker(worker)
