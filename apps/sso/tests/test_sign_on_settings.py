"""What owners and administrators set: the team's sign-on rules and its "single sign-on
only" switch (which refuses members' passwords, never the owner's, and leaves API
tokens working), and an identity provider whose secret is kept encrypted."""

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.api_tokens import api_token_create
from apps.accounts.models import Role, User
from apps.core.secrets import decrypt_secret
from apps.sso.models import IdentityProvider, SignOnRule
from tests.factories import client_for, make_grader, make_team

from .conftest import sign_in

pytestmark = pytest.mark.django_db

SIGN_ON = reverse("sso:sign_on")
PASSWORD = "A-long-password-42"


def test_the_owner_writes_a_rule_and_the_page_says_nobody_has_matched_it_yet(idp, team_a, owner):
    page = client_for(owner).post(
        SIGN_ON,
        {"rule-provider": "okta", "rule-group": " search-team ", "rule-role": Role.ADMIN},
        follow=True,
    )
    text = page.content.decode()
    assert "Members of search-team now join as Admin." in text
    assert "nobody has signed in with this group yet" in text
    rule = SignOnRule.objects.get()
    assert (rule.team, rule.group, rule.role, rule.created_by) == (
        team_a,
        "search-team",
        Role.ADMIN,
        owner,
    )

    idp.add_user("alice", email="alice@a.test", groups=["search-team"])
    sign_in(idp, "alice")
    text = client_for(owner).get(SIGN_ON).content.decode()
    assert "nobody has signed in with this group yet" not in text
    assert "1 member of the team joined through a rule." in text


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"rule-provider": "nope", "rule-group": "g", "rule-role": "evaluator"}, "provider"),
        ({"rule-provider": "okta", "rule-group": "", "rule-role": "evaluator"}, "group"),
        ({"rule-provider": "okta", "rule-group": "g", "rule-role": "owner"}, "role"),
        ({"rule-provider": "okta", "rule-group": "x" * 300, "rule-role": "evaluator"}, "group"),
    ],
)
def test_a_bad_rule_is_named_beside_its_field_and_nothing_is_saved(idp, owner, fields, problem):
    page = client_for(owner).post(SIGN_ON, fields)
    assert page.status_code == 200
    assert f'id="id_rule-{problem}_error"' in page.content.decode()
    assert not SignOnRule.objects.exists()


def test_the_same_group_twice_is_refused_by_name(idp, team_a, owner):
    SignOnRule.objects.create(team=team_a, provider="okta", group="search")
    page = client_for(owner).post(
        SIGN_ON, {"rule-provider": "okta", "rule-group": "search", "rule-role": "evaluator"}
    )
    assert "The team has a rule for &#x27;search&#x27; already." in page.content.decode()


def test_a_lead_reads_the_rules_and_cannot_change_them_and_a_grader_sees_nothing(
    idp, team_a, evaluator
):
    lead = make_grader(team_a, "lead@a.test", role=Role.ADMIN)
    rule = SignOnRule.objects.create(team=team_a, provider="okta", group="search")
    assert "search" in client_for(lead).get(SIGN_ON).content.decode()
    refused = client_for(lead).post(
        SIGN_ON, {"rule-provider": "okta", "rule-group": "more", "rule-role": "evaluator"}
    )
    assert refused.status_code == 403
    delete = reverse("sso:rule_delete", args=[rule.id])
    assert client_for(lead).post(delete).status_code == 403
    assert client_for(evaluator).get(SIGN_ON).status_code == 403
    assert SignOnRule.objects.count() == 1


def test_another_teams_rule_answers_404(idp, team_a, team_b, owner):
    theirs = SignOnRule.objects.create(team=team_b, provider="okta", group="search")
    answer = client_for(owner).post(reverse("sso:rule_delete", args=[theirs.id]))
    assert answer.status_code == 404 and SignOnRule.objects.filter(id=theirs.id).exists()


def test_a_deleted_rule_takes_its_members_away_at_their_next_sign_in(idp, team_a, owner):
    rule = SignOnRule.objects.create(team=team_a, provider="okta", group="search")
    idp.add_user("bob", email="bob@a.test", groups=["search"])
    sign_in(idp, "bob")
    assert team_a.memberships.filter(user__email="bob@a.test").exists()
    client_for(owner).post(reverse("sso:rule_delete", args=[rule.id]))
    answer, _client = sign_in(idp, "bob")
    assert answer.status_code == 403  # no team left for him
    assert not team_a.memberships.filter(user__email="bob@a.test").exists()


def test_single_sign_on_only_refuses_members_passwords_but_not_the_owners(idp, team_a, owner):
    member = make_grader(team_a, "member@a.test")
    for person in (owner, member):
        person.set_password(PASSWORD)
        person.save()
    client_for(owner).post(SIGN_ON, {"sso_required": "on"})
    team_a.refresh_from_db()
    assert team_a.sso_required

    login = reverse("accounts:login")
    refused = Client().post(login, {"username": "member@a.test", "password": PASSWORD})
    text = refused.content.decode()
    assert refused.status_code == 200
    assert "Team A signs in with single sign-on: use its button below." in text
    assert "Sign in with Okta" in text
    allowed = Client().post(login, {"username": "owner@a.test", "password": PASSWORD})
    assert allowed.status_code == 302


def test_single_sign_on_only_leaves_api_tokens_working(idp, team_a, owner):
    team_a.sso_required = True
    team_a.save()
    _token, secret = api_token_create(team=team_a, name="ci")
    answer = Client().get("/api/v1/evaluations/", headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200


def test_single_sign_on_only_needs_a_provider_first(team_a, owner):
    page = client_for(owner).post(SIGN_ON, {"sso_required": "on"})
    assert "No identity provider is set up for Relevo yet." in page.content.decode()
    team_a.refresh_from_db()
    assert not team_a.sso_required


def test_the_admin_keeps_a_providers_secret_encrypted_and_shows_only_its_end(db):
    root = User.objects.create_superuser("root@relevo.test", PASSWORD)
    admin = client_for(root)
    answer = admin.post(
        "/admin/sso/identityprovider/add/",
        {
            "slug": "keycloak",
            "name": "Keycloak",
            "protocol": "oidc",
            "email_attribute": "email",
            "issuer": "https://id.example.test/realms/shop",
            "client_id": "relevo",
            "new_client_secret": "very-secret-value-1234",
            "scopes": "openid email profile",
            "groups_claim": "groups",
            "enabled": "on",
        },
    )
    assert answer.status_code == 302, answer.content.decode()
    provider = IdentityProvider.objects.get()
    assert "very-secret" not in provider.client_secret
    assert decrypt_secret(provider.client_secret) == "very-secret-value-1234"
    assert provider.secret_hint == "1234"
    listing = admin.get(f"/admin/sso/identityprovider/{provider.id}/change/").content.decode()
    assert "very-secret-value" not in listing


def test_the_log_in_page_offers_each_provider(idp):
    text = Client().get(reverse("accounts:login") + "?next=/library/").content.decode()
    assert 'href="/sso/okta/login/?next=/library/"' in text
    assert "Sign in with Okta" in text
    make_team("Quiet")  # no provider named in the environment: only the admin's
