"""Sending one delivery: one attempt, through the address-safety layer, signed; on
failure the next attempt is set later and later (backoff), until MAX_ATTEMPTS.

An attempt first takes the delivery with a conditional UPDATE that moves its next
attempt a lease ahead, so the task queued at the event and the sweep that finds it due
never send it twice at once; the call itself runs outside any transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx2 as httpx
from django.conf import settings
from django.utils import timezone

from apps.core.secrets import SecretUnreadable, decrypt_secret
from apps.search.safe_transport import AddressRefused, UnusableURL, outbound_url, safe_http_client

from .models import Delivery, DeliveryStatus
from .signing import SIGNATURE_HEADER, signature

logger = logging.getLogger(__name__)

# Attempts in all (the first and five retries), WEBHOOK_RETRY_SECONDS × 4^n apart: with
# the default 30 s, retries after 30 s, 2 min, 8 min, 32 min and 2 h 8 min.
MAX_ATTEMPTS = 6
BACKOFF_FACTOR = 4
# While an attempt is under way the delivery is not due: its call ends (timeout) well
# before this lease does.
ATTEMPT_LEASE = timedelta(minutes=5)
# What is read of the receiver's answer: its status matters, its body does not.
ANSWER_MAX_BYTES = 16_000
USER_AGENT = "Relevo-Webhooks/1"


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    status_code: int | None = None
    error: str = ""


def backoff(attempts_made: int) -> timedelta:
    """How long after attempt number `attempts_made` (1, 2, …) the next one is made."""
    seconds = settings.WEBHOOK_RETRY_SECONDS * BACKOFF_FACTOR ** (attempts_made - 1)
    return timedelta(seconds=seconds)


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> Delivery | None:
    """Make the delivery's next attempt if it is due and nobody else is making it.
    Returns the delivery as it stands after, or None when there was nothing to do."""
    now = now or timezone.now()
    taken = Delivery.objects.filter(
        id=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    ).update(next_attempt_at=now + ATTEMPT_LEASE)
    if not taken:
        return None
    delivery = Delivery.objects.select_related("webhook").get(id=delivery_id)
    outcome = _send(delivery)
    attempts = delivery.attempts + 1
    changes: dict[str, object] = {
        "attempts": attempts,
        "last_status_code": outcome.status_code,
        "last_error": outcome.error[:500],
    }
    if outcome.delivered:
        changes.update(
            status=DeliveryStatus.DELIVERED, delivered_at=timezone.now(), next_attempt_at=None
        )
    elif attempts >= MAX_ATTEMPTS:
        changes.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
    else:
        changes.update(next_attempt_at=timezone.now() + backoff(attempts))
    Delivery.objects.filter(id=delivery_id).update(**changes)
    delivery.refresh_from_db()
    return delivery


def _send(delivery: Delivery) -> Outcome:
    webhook = delivery.webhook
    try:
        secret = decrypt_secret(webhook.secret_encrypted)
        url = decrypt_secret(webhook.url_encrypted)
    except SecretUnreadable as error:
        return Outcome(False, error=str(error))
    try:
        outbound_url(url)  # one stored before the form read URLs as the sender does
    except UnusableURL as error:
        return Outcome(False, error=str(error))
    body = delivery.body.encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Relevo-Event": delivery.event,
        "X-Relevo-Delivery": str(delivery.id),
        SIGNATURE_HEADER: signature(secret, body),
    }
    client = safe_http_client(
        timeout_s=settings.WEBHOOK_TIMEOUT_SECONDS,
        allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES,
        max_bytes=ANSWER_MAX_BYTES,
    )
    try:
        with client:
            response = client.post(url, content=body, headers=headers)
            response.read()
    except AddressRefused as error:
        return Outcome(False, error=f"address refused: {error}")
    except httpx.TimeoutException:
        return Outcome(False, error=f"no answer within {settings.WEBHOOK_TIMEOUT_SECONDS} s")
    except httpx.HTTPError as error:
        # Never the URL's query (it may hold a token): the error's kind and message.
        return Outcome(False, error=f"{type(error).__name__}: {error}")
    except OSError as error:  # the name did not resolve
        return Outcome(False, error=f"could not connect: {error}")
    if 200 <= response.status_code < 300:
        return Outcome(True, response.status_code)
    if 300 <= response.status_code < 400:
        return Outcome(
            False, response.status_code, "answered a redirect; webhooks do not follow redirects"
        )
    return Outcome(False, response.status_code, f"answered HTTP {response.status_code}")
