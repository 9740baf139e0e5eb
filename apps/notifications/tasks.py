"""Celery tasks of notifications. They take ids and call a service; nothing else."""

from celery import Task, shared_task
from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from apps.core.queueing import queue_in, queue_now

from .delivery import delivery_attempt
from .models import Delivery, DeliveryStatus

# The sweep queues at most this many due deliveries a minute (a receiver down for a day
# has a backlog; the next minute takes the next ones).
SWEEP_BATCH = 500


@shared_task(name="apps.notifications.tasks.deliver", bind=True)
def deliver(self: Task, delivery_id: int) -> str:
    delivery = delivery_attempt(delivery_id=delivery_id)
    if delivery is None:
        return "not due"
    due = delivery.next_attempt_at
    if delivery.status == DeliveryStatus.PENDING and due is not None and not self.request.is_eager:
        # The retry, at its time; if the broker cannot take it, the sweep sends it.
        wait = (due - timezone.now()).total_seconds()
        queue_in(max(wait, 0.0), self, delivery_id)
    return delivery.status


@shared_task(name="apps.notifications.tasks.send_due_deliveries")
def send_due_deliveries() -> int:
    """Beat: every delivery whose attempt is due and not under way (a retry whose task
    was lost, a delivery written while the broker was down)."""
    due = list(
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now())
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:SWEEP_BATCH]
    )
    for delivery_id in due:
        queue_now(deliver, delivery_id)
    return len(due)


@shared_task(name="apps.notifications.tasks.send_email")
def send_email(recipients: list[str], subject: str, text: str) -> int:
    """One message to each recipient (none sees the others' addresses)."""
    sent = 0
    for address in recipients:
        sent += send_mail(subject, text, settings.DEFAULT_FROM_EMAIL, [address])
    return sent
