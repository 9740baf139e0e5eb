"""Webhooks, end to end: a lead adds one on its page, an event happens, and a real local
receiver gets the body signed with HMAC-SHA256 under the webhook's secret, after two
answers of 500 that the delivery survives by trying again later; the log says so.
Another team's webhooks do not exist; bad input names its field; the secret and the
URL are never stored readable."""

import json
import re
import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.lifecycle.steps import evaluation_finish_now
from apps.notifications import services
from apps.notifications.delivery import MAX_ATTEMPTS, delivery_attempt
from apps.notifications.events import announce
from apps.notifications.models import Delivery, DeliveryStatus, Event, Webhook
from apps.notifications.tasks import send_due_deliveries
from tests.factories import client_for, make_evaluation
from tests.webhook_receiver import WebhookReceiver

# Deliveries are sent once their event commits, as in production.
pytestmark = pytest.mark.django_db(transaction=True)

RETRY_SECONDS = 0.05


@pytest.fixture
def receiver(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True  # the receiver is on loopback
    settings.WEBHOOK_RETRY_SECONDS = RETRY_SECONDS
    with WebhookReceiver(fail_first=2) as server:
        yield server


def hook(owner, receiver, name, **more):
    """A webhook of the owner's team to the receiver, for evaluation.finished; and its
    secret."""
    team = owner.memberships.get().team
    return services.webhook_create(
        team=team, name=name, url=receiver.url, events=["evaluation.finished"], **more
    )


def add_on_the_page(client, receiver, **fields):
    """The lead's form; returns the webhook and the secret the page showed once."""
    data = {
        "name": "CI",
        "url": receiver.url,
        "events": ["evaluation.finished"],
        "payload_format": "relevo",
        "active": "on",
        **fields,
    }
    page = client.post(reverse("notifications:webhook_create"), data)
    assert page.status_code == 200, page.content
    secret = re.search(r"<code>(whsec_[\w-]+)</code>", page.content.decode()).group(1)
    return Webhook.objects.get(name=data["name"]), secret


def test_an_event_reaches_the_receiver_signed_after_two_failed_tries(owner, receiver):
    lead = client_for(owner)
    webhook, receiver.secret = add_on_the_page(lead, receiver)
    evaluation = make_evaluation(team=webhook.team, keywords={"red shoes": 2})

    evaluation_finish_now(evaluation=evaluation)  # the first try, at the commit: a 500
    delivery = Delivery.objects.get(webhook=webhook)
    assert (delivery.attempts, delivery.status, delivery.last_status_code) == (1, "pending", 500)
    assert delivery.next_attempt_at > timezone.now()

    for _ in range(2):  # what beat's sweep does each minute, once the wait is over
        time.sleep(RETRY_SECONDS * 4**delivery.attempts)
        send_due_deliveries()
        delivery.refresh_from_db()

    assert (delivery.attempts, delivery.status, delivery.last_status_code) == (3, "delivered", 200)
    assert [r.answered for r in receiver.received] == [500, 500, 200]
    assert all(r.signed_right for r in receiver.received)
    bodies = {r.body for r in receiver.received}
    assert len(bodies) == 1, "every try sends the same bytes"
    sent = receiver.delivered()[0]
    assert sent.headers["X-Relevo-Event"] == "evaluation.finished"
    assert sent.json["event"] == "evaluation.finished"
    assert sent.json["delivery"] == delivery.id
    assert sent.json["data"]["evaluation"] == {"id": evaluation.id, "name": evaluation.name}
    assert sent.json["url"].endswith(reverse("insights:evaluation_detail", args=[evaluation.id]))

    log = lead.get(reverse("notifications:webhook_detail", args=[webhook.id])).content.decode()
    assert "Delivered" in log and "HTTP 200" in log


def test_the_waits_between_tries_grow_fourfold(owner, receiver, settings):
    settings.WEBHOOK_RETRY_SECONDS = 30
    receiver.fail_first = 10
    webhook, receiver.secret = hook(owner, receiver, "Slow")
    before = timezone.now()
    delivery = services.test_send(webhook=webhook, sent_by=owner)  # the first try
    waits = []
    while True:
        delivery.refresh_from_db()
        if delivery.next_attempt_at is None:
            break
        waits.append(round((delivery.next_attempt_at - before).total_seconds() / 30))
        before = timezone.now()
        delivery_attempt(delivery_id=delivery.id, now=delivery.next_attempt_at)
    # Tried at once, then 30 s, 2, 8, 32 and 128 min later; then given up.
    assert waits == [1, 4, 16, 64, 256]
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, MAX_ATTEMPTS)
    assert len(receiver.received) == MAX_ATTEMPTS


def test_a_delivery_is_not_sent_before_its_time_nor_twice_at_once(owner, receiver):
    receiver.fail_first = 1
    webhook, receiver.secret = hook(owner, receiver, "Once")
    delivery = services.test_send(webhook=webhook, sent_by=owner)  # a 500: waits now
    assert delivery_attempt(delivery_id=delivery.id) is None, "not due yet"
    later = timezone.now() + timedelta(minutes=1)
    assert delivery_attempt(delivery_id=delivery.id, now=later).status == "delivered"
    assert delivery_attempt(delivery_id=delivery.id, now=later) is None, "delivered once"
    assert len(receiver.received) == 2


def test_send_test_on_the_page_shows_the_answer(owner, receiver):
    receiver.fail_first = 0
    lead = client_for(owner)
    webhook, receiver.secret = add_on_the_page(lead, receiver)
    page = lead.post(reverse("notifications:webhook_test", args=[webhook.id]), follow=True)
    assert "Sent a test: delivered (HTTP 200)" in page.content.decode()
    [sent] = receiver.delivered()
    assert sent.json["event"] == "test" and sent.signed_right


def test_a_new_secret_signs_from_then_on(owner, receiver):
    receiver.fail_first = 0
    lead = client_for(owner)
    webhook, old = add_on_the_page(lead, receiver)
    page = lead.post(reverse("notifications:secret_renew", args=[webhook.id])).content.decode()
    new = re.search(r"<code>(whsec_[\w-]+)</code>", page).group(1)
    assert new != old
    receiver.secret = new
    services.test_send(webhook=webhook, sent_by=owner)
    assert receiver.received[-1].signed_right


def test_the_slack_payload_is_a_text_message(owner, receiver):
    receiver.fail_first = 0
    webhook, receiver.secret = hook(owner, receiver, "Chat", payload_format="slack")
    announce(
        team_id=webhook.team_id,
        event=Event.EVALUATION_FINISHED,
        summary="Shoes <beta> & co finished",
        path="/evaluations/7/",
    )
    [sent] = receiver.delivered()
    assert set(sent.json) == {"text"}
    assert "Shoes &lt;beta&gt; &amp; co finished" in sent.json["text"]
    assert "<http://127.0.0.1:8000/evaluations/7/|Open in Relevo>" in sent.json["text"]


def test_only_webhooks_listening_for_the_event_and_switched_on_hear_it(owner, receiver):
    receiver.fail_first = 0
    team = owner.memberships.get().team
    for name, events, active in [
        ("finished", ["evaluation.finished"], True),
        ("regressions", ["regression.found"], True),
        ("off", ["evaluation.finished"], False),
    ]:
        services.webhook_create(
            team=team, name=name, url=receiver.url, events=events, active=active
        )
    announce(team_id=team.id, event=Event.EVALUATION_FINISHED, summary="done")
    assert list(Delivery.objects.values_list("webhook__name", flat=True)) == ["finished"]


def test_neither_the_url_nor_the_secret_is_logged(owner, receiver, caplog):
    receiver.fail_first = 1
    webhook, secret = hook(owner, receiver, "Quiet")
    with caplog.at_level("DEBUG", logger="apps"):
        services.test_send(webhook=webhook, sent_by=owner)
    assert len(receiver.received) == 1
    assert "token=abc" not in caplog.text and secret not in caplog.text


def test_secret_and_url_are_stored_encrypted_and_shown_only_as_hints(owner, receiver):
    lead = client_for(owner)
    webhook, secret = add_on_the_page(lead, receiver)
    row = Webhook.objects.values().get(id=webhook.id)
    stored = json.dumps(row, default=str)
    assert secret not in stored and "token=abc" not in stored
    page = lead.get(reverse("notifications:webhook_detail", args=[webhook.id])).content.decode()
    assert secret not in page and "token=abc" not in page
    assert webhook.url_shown in page


def test_a_receiver_on_a_private_address_is_refused_unless_allowed(owner, receiver, settings):
    team = owner.memberships.get().team
    webhook, _ = services.webhook_create(
        team=team, name="Inside", url=receiver.url, events=["evaluation.finished"]
    )
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    delivery = services.test_send(webhook=webhook, sent_by=owner)
    delivery.refresh_from_db()
    assert delivery.last_error.startswith("address refused: 127.0.0.1 is a loopback address")
    assert receiver.received == []
    with pytest.raises(Exception, match="url: '127.0.0.1' is a loopback address|loopback"):
        services.webhook_create(
            team=team, name="Other", url=receiver.url, events=["evaluation.finished"]
        )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"url": "ftp://example.com/x"}, "URL: Must be an http:// or https:// URL with a host."),
        ({"url": "https://example.com/" + "x" * 2000}, "At most 2000 characters."),
        ({"events": []}, "Choose at least one event."),
        ({"name": "x" * 101}, "At most 100 characters."),
    ],
)
def test_bad_input_is_refused_beside_its_field(owner, fields, problem):
    data = {"name": "CI", "url": "https://hooks.example.com/x", "payload_format": "relevo"}
    data.update({"events": ["evaluation.finished"], **fields})
    page = client_for(owner).post(reverse("notifications:webhook_create"), data)
    assert page.status_code == 200
    assert not Webhook.objects.exists()
    text = page.content.decode()
    assert problem.split(": ")[-1].rstrip(".") in text, text


def test_an_unknown_event_or_a_taken_name_is_refused(owner):
    team = owner.memberships.get().team
    with pytest.raises(Exception, match="events: 'build.done' is not an event"):
        services.webhook_create(
            team=team, name="A", url="https://example.com/", events=["build.done"]
        )
    services.webhook_create(
        team=team, name="A", url="https://example.com/", events=["regression.found"]
    )
    with pytest.raises(Exception, match="name: the team already has a webhook named 'A'"):
        services.webhook_create(
            team=team, name="A", url="https://example.com/", events=["regression.found"]
        )


def test_another_teams_webhook_does_not_exist(owner, outsider, receiver):
    webhook, _ = hook(owner, receiver, "Mine")
    stranger = client_for(outsider)
    for name in ("webhook_detail", "webhook_test", "secret_renew", "webhook_delete"):
        answer = stranger.post(reverse(f"notifications:{name}", args=[webhook.id]))
        assert answer.status_code == 404, name
    assert Webhook.objects.filter(id=webhook.id).exists() and not Delivery.objects.exists()


def test_a_grader_cannot_manage_webhooks_but_sets_their_own_emails(evaluator):
    grader = client_for(evaluator)
    assert grader.get(reverse("notifications:webhook_create")).status_code == 403
    page = grader.get(reverse("notifications:overview"))
    assert page.status_code == 200 and b"webhook-table" not in page.content


def test_the_log_keeps_the_newest_deliveries(owner, receiver, monkeypatch):
    receiver.fail_first = 0
    monkeypatch.setattr(services, "LOG_KEPT", 3)
    webhook, receiver.secret = hook(owner, receiver, "Log")
    sent = [services.test_send(webhook=webhook, sent_by=owner).id for _ in range(5)]
    assert list(Delivery.objects.values_list("id", flat=True)) == sent[:1:-1]
