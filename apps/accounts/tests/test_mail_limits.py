"""Mail sent on request is limited: password resets per target address and per
client address, with the same neutral page either way; invitations per inviter and per
team, refused with a message."""

import pytest
from django.core import mail
from django.test import Client

from apps.accounts import services
from apps.accounts.models import Invitation
from apps.core.errors import RateLimited
from tests.factories import client_for, make_team

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("steady_rate_windows")]


def ask_reset(client: Client, email: str):
    return client.post("/accounts/password-reset/", {"email": email})


# --- Password reset ----------------------------------------------------------------------


def test_password_resets_for_one_address_beyond_the_limit_send_nothing_but_look_the_same(
    team_a, owner
):
    client = Client()

    answers = [ask_reset(client, "owner@a.test") for _ in range(10)]

    assert len(mail.outbox) == 3  # THROTTLE_PASSWORD_RESET_PER_EMAIL's default: 3/hour
    assert {(a.status_code, a.url) for a in answers} == {(302, "/accounts/password-reset/sent/")}
    assert "Check your email" in client.get(answers[-1].url).content.decode()


def test_the_limit_per_address_counts_every_way_of_writing_it(team_a, owner):
    for email in ["owner@a.test", "Owner@A.test", " OWNER@a.test", "owner@a.test"]:
        ask_reset(Client(REMOTE_ADDR="198.51.100.7"), email)

    assert len(mail.outbox) == 3


def test_one_client_asking_for_many_addresses_is_stopped_at_its_own_limit(settings, team_a):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "password_reset_address": "4/hour"}
    for n in range(6):
        services.user_get_or_create(email=f"person{n}@a.test", password="Some-password-1")
    client = Client(REMOTE_ADDR="203.0.113.9")

    answers = [ask_reset(client, f"person{n}@a.test") for n in range(6)]

    assert [m.to for m in mail.outbox] == [[f"person{n}@a.test"] for n in range(4)]
    assert {a.status_code for a in answers} == {302}
    # Another client is not held back by that one.
    ask_reset(Client(REMOTE_ADDR="198.51.100.7"), "person5@a.test")
    assert mail.outbox[-1].to == ["person5@a.test"]


def test_resets_for_an_unknown_address_send_nothing_and_are_answered_the_same(team_a):
    answers = [ask_reset(Client(), "nobody@a.test") for _ in range(5)]

    assert mail.outbox == []
    assert {(a.status_code, a.url) for a in answers} == {(302, "/accounts/password-reset/sent/")}


# --- Invitations -------------------------------------------------------------------------


def invite(client: Client, n: int):
    return client.post("/team/members/", {"email": f"new{n}@a.test", "role": "evaluator"})


def test_invitations_beyond_the_inviters_limit_are_refused_with_a_message(settings, team_a, owner):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "invitations_inviter": "3/hour"}
    client = client_for(owner)

    sent = [invite(client, n) for n in range(3)]
    refused = invite(client, 3)

    assert [r.status_code for r in sent] == [302, 302, 302]
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many invitations were sent lately: try again in" in page
    assert len(mail.outbox) == 3
    assert not Invitation.objects.filter(email="new3@a.test").exists()


def test_invitations_beyond_the_teams_limit_are_refused_whoever_sends_them(
    settings, team_a, owner, admin
):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "invitations_team": "4/day"}
    for n in range(2):
        invite(client_for(owner), n)
        invite(client_for(admin), 10 + n)

    refused = invite(client_for(admin), 20)

    assert refused.status_code == 429
    assert "Too many invitations" in refused.content.decode()
    assert len(mail.outbox) == 4
    # Another team has its own count.
    other = make_team("Team C", owner="lead@c.test")
    services.invitation_create(team=other, email="x@c.test", role="evaluator", invited_by=None)


def test_an_invitation_refused_for_its_input_does_not_count(settings, team_a, owner, evaluator):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "invitations_inviter": "1/hour"}
    client = client_for(owner)

    client.post("/team/members/", {"email": "evaluator@a.test", "role": "evaluator"})
    client.post("/team/members/", {"email": "not an address", "role": "evaluator"})

    assert invite(client, 1).status_code == 302


def test_the_service_raises_rate_limited_with_the_wait(settings, team_a, owner):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "invitations_inviter": "1/hour"}
    services.invitation_create(team=team_a, email="a@a.test", role="evaluator", invited_by=owner)

    with pytest.raises(RateLimited) as refused:
        services.invitation_create(
            team=team_a, email="b@a.test", role="evaluator", invited_by=owner
        )

    assert 0 < refused.value.retry_after <= 3600
