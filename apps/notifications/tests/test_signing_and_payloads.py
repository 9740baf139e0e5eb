"""The signature a receiver checks and the bodies it reads, worked by hand."""

import hashlib
import hmac
import json

import pytest

from apps.notifications.payloads import MAX_BODY_BYTES, Announcement, body_for
from apps.notifications.signing import signature, signature_matches

SECRET = "whsec_example"
BODY = b'{"event":"test"}'


def test_the_signature_is_hmac_sha256_of_the_body_in_hex():
    expected = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    assert signature(SECRET, BODY) == f"sha256={expected}"


def test_a_changed_body_or_another_secret_does_not_match():
    header = signature(SECRET, BODY)
    assert signature_matches(SECRET, BODY, header)
    assert not signature_matches(SECRET, BODY + b" ", header)
    assert not signature_matches("whsec_other", BODY, header)
    assert not signature_matches(SECRET, BODY, "")


ANNOUNCEMENT = Announcement(
    event="evaluation.finished",
    team="Search",
    summary="Shoes finished",
    url="https://relevo.example/evaluations/4/",
    data={"graded": 10},
)


def test_relevos_body_carries_the_event_the_delivery_and_the_data():
    body = json.loads(body_for("relevo", ANNOUNCEMENT, delivery=17, sent_at="2026-11-27T16:00:00Z"))
    assert body == {
        "event": "evaluation.finished",
        "delivery": 17,
        "sent_at": "2026-11-27T16:00:00Z",
        "team": "Search",
        "summary": "Shoes finished",
        "url": "https://relevo.example/evaluations/4/",
        "data": {"graded": 10},
    }


def test_the_slack_body_is_one_text_with_its_link():
    body = json.loads(body_for("slack", ANNOUNCEMENT, delivery=17, sent_at=""))
    assert body == {
        "text": "*Relevo · Search*: Shoes finished "
        "<https://relevo.example/evaluations/4/|Open in Relevo>"
    }


def test_a_body_is_bounded():
    huge = Announcement(event="test", team="T", summary="x" * MAX_BODY_BYTES)
    with pytest.raises(ValueError, match="at most 64000 bytes"):
        body_for("relevo", huge, delivery=1, sent_at="")
