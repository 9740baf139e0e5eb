"""Webhooks on real parts: an evaluation finishes in this process, a Celery worker on
Redis sends the delivery to a real local receiver that checks the signature and answers
500 twice, and the worker's own retries (queued with their backoff, no beat needed)
deliver it on the third try."""

import pytest

from apps.lifecycle.steps import evaluation_finish_now
from apps.notifications import services
from apps.notifications.models import Delivery, DeliveryStatus
from tests.factories import make_evaluation, make_team
from tests.webhook_receiver import WebhookReceiver
from tests.worker import start_worker, stop_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_real_worker_delivers_after_two_failures_with_its_backoff(
    postgres, real_broker, settings
):
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True  # the webhook's check, in this process
    broker_url, queue = real_broker
    worker = start_worker(
        broker_url,
        queue,
        extra_env={"WEBHOOKS_ALLOW_PRIVATE_ADDRESSES": "1", "WEBHOOK_RETRY_SECONDS": "0.5"},
    )
    try:
        with WebhookReceiver(fail_first=2) as receiver:
            team = make_team()
            webhook, receiver.secret = services.webhook_create(
                team=team, name="CI", url=receiver.url, events=["evaluation.finished"]
            )
            evaluation_finish_now(evaluation=make_evaluation(team=team))

            def delivered() -> bool:
                return Delivery.objects.filter(status=DeliveryStatus.DELIVERED).exists()

            if not wait_for(delivered, seconds=30):
                pytest.fail(f"not delivered in 30 s; the worker said:\n{stop_worker(worker)}")
            answered = [r.answered for r in receiver.received]
    finally:
        stop_worker(worker)
    delivery = Delivery.objects.get(webhook=webhook)
    assert answered == [500, 500, 200]
    assert delivery.attempts == 3 and delivery.last_status_code == 200
    # The waits were the backoff's: 0.5 s, then 2 s.
    assert (delivery.delivered_at - delivery.created_at).total_seconds() >= 2.5
