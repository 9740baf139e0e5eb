"""Announcing an event to a team: a delivery for each of its webhooks that listens for
it, an e-mail to each member who switched that event on.

    announce(team_id=…, event=Event.EVALUATION_FINISHED, summary="…", path="/…", data={…})

Call it inside the transaction that made the event happen: the deliveries are written
with it (an event that rolls back is never told) and sent after the commit, on a worker.
A broker that is down loses nothing: the deliveries wait in the database for the sweep
(tasks.send_due_deliveries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Team
from apps.core.queueing import queue_after_commit

from .models import Delivery, EmailNotice, Event, Standing, Webhook
from .payloads import Announcement, body_for
from .tasks import deliver, send_email


@dataclass(frozen=True)
class Audience:
    """Who hears an event in a team: its listening webhooks, the addresses to e-mail."""

    webhooks: list[Webhook]
    recipients: list[str]

    def __bool__(self) -> bool:
        return bool(self.webhooks or self.recipients)


def audience(*, team_id: int, event: Event) -> Audience:
    """Two reads; an event nobody hears costs no more (its content need not be built)."""
    hooks = Webhook.objects.filter(team_id=team_id, active=True)
    recipients = EmailNotice.objects.filter(
        membership__team_id=team_id, event=event.value, membership__user__is_active=True
    ).values_list("membership__user__email", flat=True)
    return Audience([h for h in hooks if event.value in h.events], sorted(recipients))


def announce(
    *,
    team_id: int,
    event: Event,
    summary: str,
    path: str = "",
    data: dict[str, Any] | None = None,
    heard_by: Audience | None = None,
) -> list[Delivery]:
    """Tell the team (`heard_by`: its audience, when the caller read it already): returns
    the deliveries written (the e-mails go on a worker)."""
    heard_by = heard_by if heard_by is not None else audience(team_id=team_id, event=event)
    if not heard_by:
        return []
    announcement = _announcement(team_id, event, summary, path, data or {})
    deliveries = [deliveries_write(hook, announcement) for hook in heard_by.webhooks]
    if heard_by.recipients:
        text = _text(announcement)
        queue_after_commit(send_email, heard_by.recipients, _subject(announcement), text)
    return deliveries


def announce_test(webhook: Webhook, *, sent_by: str) -> Delivery:
    """The webhook's "send test": one delivery of a test event to it alone."""
    announcement = _announcement(
        webhook.team_id,
        Event.TEST,
        f"A test of the webhook {webhook.name}, sent by {sent_by}.",
        "",
        {"webhook": webhook.name},
    )
    return deliveries_write(webhook, announcement)


def deliveries_write(webhook: Webhook, announcement: Announcement) -> Delivery:
    """The delivery row with its body (which names the row, hence two writes), sent
    after the commit."""
    now = timezone.now()
    delivery = Delivery.objects.create(
        webhook=webhook, event=announcement.event, body="", next_attempt_at=now
    )
    sent_at = now.isoformat().replace("+00:00", "Z")
    body = body_for(webhook.payload_format, announcement, delivery=delivery.id, sent_at=sent_at)
    delivery.body = body.decode("utf-8")
    Delivery.objects.filter(id=delivery.id).update(body=delivery.body)
    queue_after_commit(deliver, delivery.id)
    return delivery


def site_link(path: str) -> str:
    """An absolute link to a page of Relevo, for a message read outside it."""
    return f"{settings.SITE_URL.rstrip('/')}{path}" if path else ""


def _announcement(
    team_id: int, event: Event, summary: str, path: str, data: dict[str, Any]
) -> Announcement:
    team_name = Team.objects.values_list("name", flat=True).get(id=team_id)
    return Announcement(
        event=event.value, team=team_name, summary=summary, url=site_link(path), data=data
    )


def _subject(announcement: Announcement) -> str:
    label = Event(announcement.event).label
    return f"[Relevo · {announcement.team}] {label}"


def _text(announcement: Announcement) -> str:
    lines = [announcement.summary]
    if announcement.url:
        lines += ["", announcement.url]
    lines += [
        "",
        "You receive this because you switched this notification on in Relevo "
        f"(Team › Notifications): {site_link('/notifications/')}",
    ]
    return "\n".join(lines)


def announce_once(*, key: str, team_id: int, event: Event, **told: Any) -> bool:
    """announce(), unless the team was told about `key` and it has not cleared since
    (condition_cleared). True when told now. Two callers at once tell it once: the
    second's row breaks the unique key and its announcement rolls back with it."""
    try:
        with transaction.atomic():
            Standing.objects.create(team_id=team_id, key=key)
            announce(team_id=team_id, event=event, **told)
    except IntegrityError:
        return False
    return True


def condition_cleared(*, key: str, team_id: int) -> None:
    """The condition no longer holds: the next time it does, the team is told again."""
    Standing.objects.filter(team_id=team_id, key=key).delete()


def teams_listening(event: Event) -> set[int]:
    """The teams where a webhook or a person hears `event`."""
    teams = {
        team_id
        for team_id, subscribed in Webhook.objects.filter(active=True).values_list(
            "team_id", "events"
        )
        if event.value in subscribed
    }
    teams.update(
        EmailNotice.objects.filter(event=event.value).values_list("membership__team_id", flat=True)
    )
    return teams
