"""With the broker down a try is made all the same and waits; beat's sweep starts its run
once the broker is back, and a runner that died leaves its lease to lapse first."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.tries.models import Try, TryState
from apps.tries.running import stalled_tries
from apps.tries.starting import TryRequest, try_start
from apps.tries.tasks import resume_stalled_tries
from conftest import switch_broker

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_try_made_while_the_broker_is_down_is_run_by_the_sweep(team_a, tuned_model, broker_down):
    attempt = try_start(team=team_a, user=None, asked=TryRequest(model="Tuned", queries=["a"]))
    assert Try.objects.get(id=attempt.id).state == TryState.QUEUED
    assert stalled_tries() == []  # a try just made is given time for its own task

    Try.objects.filter(id=attempt.id).update(created_at=timezone.now() - timedelta(seconds=11))
    assert stalled_tries() == [attempt.id]
    switch_broker("memory://", eager=True)  # the broker is back (tasks run in-process)
    assert resume_stalled_tries() == 1
    assert Try.objects.get(id=attempt.id).state == TryState.DONE


def test_a_runner_holding_a_live_lease_is_left_alone(team_a, tuned_model):
    attempt = try_start(team=team_a, user=None, asked=TryRequest(model="Tuned", queries=["a"]))
    Try.objects.filter(id=attempt.id).update(
        state=TryState.RUNNING,
        created_at=timezone.now() - timedelta(minutes=5),
        run_lease_until=timezone.now() + timedelta(seconds=30),
    )
    assert stalled_tries() == []
    Try.objects.filter(id=attempt.id).update(run_lease_until=timezone.now() - timedelta(seconds=1))
    assert stalled_tries() == [attempt.id]
