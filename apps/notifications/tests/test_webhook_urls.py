"""A webhook's URL is read at save by the parser that sends to it (httpx, through the
address-safety layer): what it could not send to is refused beside the URL field, the
typed text kept in a visible box; and "Send test" never fails with a 500, even for a URL
stored before these checks."""

import re

import pytest
from django.urls import reverse

from apps.core.secrets import encrypt_secret
from apps.notifications.models import Delivery, Webhook
from tests.factories import client_for

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = [
    # Octal loopback: httpx refuses it, the C resolver would read 127.0.0.1.
    ("http://0177.0.0.1/hook", "Not a URL Relevo can send to: Invalid IPv4 address"),
    ("http://[::1", "Not a URL Relevo can send to"),
    ("http://a b/", "a host name has only letters, digits, '-' and '.'"),
    # Legacy IPv4 spellings the resolver reads without a lookup: loopback all the same.
    ("http://127.1/hook", "127.0.0.1 is a loopback address"),
    ("http://0x7f.0.0.1/hook", "127.0.0.1 is a loopback address"),
    ("http://2130706433/hook", "127.0.0.1 is a loopback address"),
]


def form_data(url):
    return {
        "name": "CI",
        "url": url,
        "events": ["evaluation.finished"],
        "payload_format": "relevo",
        "active": "on",
    }


def url_box(page_text):
    """The URL input as the page renders it."""
    return re.search(r"<input[^>]*name=\"url\"[^>]*>", page_text).group(0)


@pytest.mark.parametrize(("url", "problem"), REFUSED)
def test_a_url_the_sender_cannot_use_is_refused_beside_the_field_and_kept(owner, url, problem):
    page = client_for(owner).post(reverse("notifications:webhook_create"), form_data(url))
    assert page.status_code == 200
    assert not Webhook.objects.exists()
    text = page.content.decode()
    assert problem in text.replace("&#x27;", "'"), text
    box = url_box(text)
    assert 'type="text"' in box
    assert f'value="{url}"' in box.replace("&#x27;", "'")


@pytest.mark.parametrize(("url", "problem"), REFUSED[:3])
def test_changing_a_webhook_to_such_a_url_is_refused_and_the_stored_one_stays(owner, url, problem):
    lead = client_for(owner)
    lead.post(reverse("notifications:webhook_create"), form_data("https://hooks.example.com/x"))
    webhook = Webhook.objects.get()
    page = lead.post(reverse("notifications:webhook_detail", args=[webhook.id]), form_data(url))
    assert page.status_code == 200
    assert problem in page.content.decode().replace("&#x27;", "'")
    webhook.refresh_from_db()
    assert webhook.url_shown == "https://hooks.example.com/…"


@pytest.mark.parametrize("url", ["http://0177.0.0.1/hook", "http://[::1", "http://a b/"])
def test_send_test_to_a_url_stored_before_the_checks_logs_why_instead_of_a_500(owner, url):
    lead = client_for(owner)
    lead.post(reverse("notifications:webhook_create"), form_data("https://hooks.example.com/x"))
    Webhook.objects.update(url_encrypted=encrypt_secret(url))  # as an older version saved it
    webhook = Webhook.objects.get()
    answer = lead.post(reverse("notifications:webhook_test", args=[webhook.id]), follow=True)
    assert answer.status_code == 200
    delivery = Delivery.objects.get()
    assert delivery.last_error.startswith("not a URL Relevo can send to"), delivery.last_error
    assert "Sent a test: not delivered (not a URL Relevo can send to" in answer.content.decode()


def test_the_active_box_says_what_it_does(owner):
    page = client_for(owner).get(reverse("notifications:webhook_create")).content.decode()
    assert "Send events to this URL" in page
    assert "Uncheck to pause" in page
