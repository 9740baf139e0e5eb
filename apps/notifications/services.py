"""A team's webhooks (add, change, remove, a new secret, send a test), each person's
e-mail switches and the team's disagreement level. Every rule is here; pages and the
API only type the input.

A webhook's secret is made by Relevo (a person types passwords, not keys) and returned
once, by webhook_create and secret_renew, for the page to show; after that only its
hint is. The URL is kept encrypted as well: a chat tool's webhook URL is a credential.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Membership, Team, User
from apps.core.errors import InvalidInput
from apps.core.naming import save_with_unique_name
from apps.core.secrets import encrypt_secret, secret_hint
from apps.search.safe_transport import UnusableURL, outbound_url
from apps.search.safety import refused_without_lookup

from . import events
from .models import (
    DEFAULT_DISAGREEMENT_LEVEL,
    SUBSCRIBABLE,
    Delivery,
    EmailNotice,
    PayloadFormat,
    TeamNotifications,
    Webhook,
)

NAME_MAX = 100
URL_MAX = 2000
DISAGREEMENT_LEVEL_MAX = 1_000_000
# The log keeps this many deliveries per webhook; older ones are removed as new ones come.
LOG_KEPT = 200


def webhook_create(
    *, team: Team, created_by: User | None = None, **given: Any
) -> tuple[Webhook, str]:
    """A new webhook and its signing secret (shown once)."""
    values = _webhook_values(given, creating=True)
    webhook = Webhook(team=team, created_by=created_by)
    secret = _apply(webhook, values, new_secret=True)
    _save(webhook)
    return webhook, secret


def webhook_update(*, webhook: Webhook, **given: Any) -> Webhook:
    """Change the fields given; a blank url keeps the stored one (a form shows it empty)."""
    if given.get("url") in ("", None):
        given.pop("url", None)
    values = _webhook_values(given, creating=False)
    _apply(webhook, values, new_secret=False)
    _save(webhook)
    return webhook


def webhook_delete(*, webhook: Webhook) -> None:
    webhook.delete()


def secret_renew(*, webhook: Webhook) -> str:
    """A new signing secret, returned once; the old one signs nothing from now on."""
    secret = _apply(webhook, {}, new_secret=True)
    Webhook.objects.filter(id=webhook.id).update(
        secret_encrypted=webhook.secret_encrypted, secret_hint=webhook.secret_hint
    )
    return secret


@transaction.atomic
def test_send(*, webhook: Webhook, sent_by: User) -> Delivery:
    """The "send test" button: a test event to this webhook alone, active or not."""
    delivery = events.announce_test(webhook, sent_by=sent_by.email)
    log_trim(webhook.id)
    return delivery


def log_trim(webhook_id: int) -> None:
    """Keep the newest LOG_KEPT deliveries of the webhook."""
    kept = Delivery.objects.filter(webhook_id=webhook_id).order_by("-id")[LOG_KEPT : LOG_KEPT + 1]
    oldest_kept = kept.values_list("id", flat=True).first()
    if oldest_kept is not None:
        Delivery.objects.filter(webhook_id=webhook_id, id__lte=oldest_kept).delete()


# --- E-mail switches and the team's level ------------------------------------------------


def email_events_set(*, membership: Membership, events_on: list[str]) -> list[str]:
    """The events this person is e-mailed about in this team, all at once."""
    chosen = _events(events_on, "events")
    with transaction.atomic():
        EmailNotice.objects.filter(membership=membership).exclude(event__in=chosen).delete()
        have = set(
            EmailNotice.objects.filter(membership=membership).values_list("event", flat=True)
        )
        EmailNotice.objects.bulk_create(
            [
                EmailNotice(membership=membership, event=event)
                for event in chosen
                if event not in have
            ]
        )
    return chosen


def email_events_of(membership: Membership) -> list[str]:
    return list(EmailNotice.objects.filter(membership=membership).values_list("event", flat=True))


def disagreement_level_of(team_id: int) -> int:
    settings_row = TeamNotifications.objects.filter(team_id=team_id).first()
    return settings_row.disagreement_level if settings_row else DEFAULT_DISAGREEMENT_LEVEL


def disagreement_level_set(*, team: Team, level: Any) -> int:
    number = _whole_number(level, "disagreement_level", 1, DISAGREEMENT_LEVEL_MAX)
    TeamNotifications.objects.update_or_create(team=team, defaults={"disagreement_level": number})
    return number


# --- Checking what was typed ---------------------------------------------------------------


def _webhook_values(given: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """The checked values; every problem at once, each naming its field."""
    problems: list[str] = []
    unknown = set(given) - {"name", "url", "events", "payload_format", "active"}
    problems += [f"{name}: not a field of a webhook" for name in sorted(unknown)]
    if creating:
        problems += [f"{name}: required" for name in ("name", "url") if not given.get(name)]
    values: dict[str, Any] = {}
    if given.get("name"):
        name = str(given["name"]).strip()
        if len(name) > NAME_MAX:
            problems.append(f"name: at most {NAME_MAX} characters")
        values["name"] = name
    if given.get("url"):
        values["url"] = _url(given["url"], problems)
    if "events" in given:
        try:
            values["events"] = _events(given["events"], "events")
        except InvalidInput as error:
            problems += error.problems
        else:
            if not values["events"]:
                problems.append("events: choose at least one event")
    elif creating:
        problems.append("events: choose at least one event")
    if "payload_format" in given:
        if given["payload_format"] not in PayloadFormat.values:
            problems.append(f"payload_format: one of {', '.join(PayloadFormat.values)}")
        values["payload_format"] = given["payload_format"]
    if "active" in given:
        values["active"] = bool(given["active"])
    if problems:
        raise InvalidInput(problems)
    return values


def _url(value: Any, problems: list[str]) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > URL_MAX:
        problems.append(f"url: at most {URL_MAX} characters")
        return text
    try:
        host = outbound_url(text).host  # read as delivery will read it to send
    except UnusableURL as error:
        problems.append(f"url: {error}")
        return text
    reason = refused_without_lookup(host)
    if reason and not settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES:
        problems.append(
            f"url: {reason}; a receiver on this machine or network needs "
            "WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=1 in the deployment's settings"
        )
    return text


def _events(value: Any, field: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InvalidInput([f"{field}: a list of event names"])
    known = {event.value for event in SUBSCRIBABLE}
    unknown = [v for v in value if v not in known]
    if unknown:
        raise InvalidInput(
            [f"{field}: {unknown[0]!r} is not an event; one of {', '.join(sorted(known))}"]
        )
    return [event.value for event in SUBSCRIBABLE if event.value in value]  # in a fixed order


def _whole_number(value: Any, field: str, low: int, high: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InvalidInput([f"{field}: a whole number"]) from None
    if not low <= number <= high:
        raise InvalidInput([f"{field}: from {low} to {high}"])
    return number


def _apply(webhook: Webhook, values: dict[str, Any], *, new_secret: bool) -> str:
    url = values.pop("url", None)
    if url is not None:
        parts = urlsplit(url)
        webhook.url_encrypted = encrypt_secret(url)
        webhook.url_shown = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/…"[:300]
    for name, value in values.items():
        setattr(webhook, name, value)
    secret = ""
    if new_secret:
        secret = "whsec_" + secrets.token_urlsafe(32)
        webhook.secret_encrypted = encrypt_secret(secret)
        webhook.secret_hint = secret_hint(secret)
    return secret


def _save(webhook: Webhook) -> None:
    save_with_unique_name(
        webhook,
        Webhook.objects.filter(team_id=webhook.team_id, name=webhook.name),
        f"name: the team already has a webhook named {webhook.name!r}",
    )
