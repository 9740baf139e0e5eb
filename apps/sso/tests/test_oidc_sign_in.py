"""Signing in through a real local OpenID Connect provider: the account made at the first
sign-in, memberships that follow the provider's groups at every sign-in, and every
refusal answered by a page that says why, with nothing made or signed in."""

import html
import re

import httpx
import pytest
from django.test import Client

from apps.accounts.models import Membership, Role, User
from apps.accounts.services import invitation_create
from apps.sso.models import SignOnRule, SsoIdentity
from tests.factories import make_grader, make_team

from .conftest import sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(idp):
    team = make_team("Shop", owner="owner@shop.test")
    SignOnRule.objects.create(team=team, provider="okta", group="search", role=Role.EVALUATOR)
    SignOnRule.objects.create(team=team, provider="okta", group="search-leads", role=Role.ADMIN)
    return team


def signed_in_as(client: Client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(id=user_id).email if user_id else None


def test_a_first_sign_in_makes_the_account_and_the_rules_make_it_a_member(idp, shop):
    idp.add_user("alice", email="alice@shop.test", groups=["search", "other"], name="Alice")

    answer, client = sign_in(idp, "alice", next_url="/evaluations/")

    assert (answer.status_code, answer["Location"]) == (302, "/evaluations/")
    assert signed_in_as(client) == "alice@shop.test"
    alice = User.objects.get(email="alice@shop.test")
    assert not alice.has_usable_password() and alice.first_name == "Alice"
    membership = Membership.objects.get(user=alice)
    assert (membership.team, membership.role, membership.granted_by_rule) == (
        shop,
        Role.EVALUATOR,
        True,
    )
    identity = SsoIdentity.objects.get(user=alice)
    assert (identity.provider, identity.groups) == ("okta", ["other", "search"])
    # The code was exchanged with PKCE, the keys and the userinfo read from the provider.
    assert ("POST", "/token") in idp.requests and ("GET", "/jwks") in idp.requests


def test_the_highest_role_wins_and_the_memberships_follow_the_groups_at_every_sign_in(idp, shop):
    idp.add_user("bob", email="bob@shop.test", groups=["search", "search-leads"])
    sign_in(idp, "bob")
    bob = User.objects.get(email="bob@shop.test")
    assert Membership.objects.get(user=bob).role == Role.ADMIN

    idp.users["bob"]["groups"] = ["search"]
    sign_in(idp, "bob")
    assert Membership.objects.get(user=bob).role == Role.EVALUATOR

    other = make_team("Other")
    Membership.objects.create(team=other, user=bob, role=Role.EVALUATOR)  # invited by hand
    idp.users["bob"]["groups"] = ["search", "nothing-to-do-with-relevo"]
    SignOnRule.objects.filter(group="search").delete()
    sign_in(idp, "bob")
    assert list(Membership.objects.filter(user=bob).values_list("team__name", flat=True)) == [
        "Other"
    ]


def test_a_later_sign_in_finds_the_person_by_subject_whatever_their_address_becomes(idp, shop):
    idp.add_user("carol", email="carol@shop.test", groups=["search"])
    sign_in(idp, "carol")
    idp.users["carol"]["email"] = "carol.new@shop.test"
    _answer, client = sign_in(idp, "carol")
    assert signed_in_as(client) == "carol@shop.test"
    assert User.objects.filter(email__startswith="carol").count() == 1


def test_an_existing_account_is_linked_only_when_the_provider_verified_the_address(idp, shop):
    grader = make_grader(shop, "dana@shop.test")
    idp.add_user("dana", email="Dana@shop.test", groups=[], email_verified=False)
    answer, client = sign_in(idp, "dana")
    assert answer.status_code == 403 and signed_in_as(client) is None
    assert "does not say it verified that address" in answer.content.decode()
    assert not SsoIdentity.objects.exists()

    idp.users["dana"]["email_verified"] = True
    answer, client = sign_in(idp, "dana")
    assert signed_in_as(client) == "dana@shop.test"
    assert SsoIdentity.objects.get().user == grader
    # Her membership was made by hand: the rules (none of her groups) leave it alone.
    assert Membership.objects.get(user=grader).granted_by_rule is False


def test_an_open_invitation_to_the_verified_address_is_accepted_at_the_sign_in(idp, shop):
    owner = User.objects.get(email="owner@shop.test")
    invitation_create(team=shop, email="erin@shop.test", role=Role.ADMIN, invited_by=owner)
    idp.add_user("erin", email="erin@shop.test", groups=[])
    answer, client = sign_in(idp, "erin")
    assert answer.status_code == 302 and signed_in_as(client) == "erin@shop.test"
    membership = Membership.objects.get(user__email="erin@shop.test")
    assert (membership.role, membership.granted_by_rule) == (Role.ADMIN, False)


def test_someone_the_rules_give_no_team_is_refused_with_the_groups_the_provider_sent(idp, shop):
    idp.add_user("frank", email="frank@elsewhere.test", groups=["marketing", "all-staff"])
    answer, client = sign_in(idp, "frank")
    page = answer.content.decode()
    assert answer.status_code == 403 and signed_in_as(client) is None
    assert "no team in Relevo has a rule for your groups (all-staff, marketing)" in page
    assert not User.objects.filter(email="frank@elsewhere.test").exists()


@pytest.mark.parametrize(
    ("misbehaviour", "said"),
    [
        ("wrong_signature", "signature does not check against the provider&#x27;s keys"),
        ("alg_none", "signature does not check"),
        ("hs256", "signature does not check"),
        ("wrong_audience", "Invalid claim: &#x27;aud&#x27;"),
        ("wrong_issuer", "Invalid claim: &#x27;iss&#x27;"),
        ("expired", "The token is expired"),
        ("wrong_nonce", "Invalid claim: &#x27;nonce&#x27;"),
        ("no_nonce", "nonce"),
    ],
)
def test_a_token_that_fails_a_check_is_refused_and_nothing_is_made(idp, shop, misbehaviour, said):
    idp.add_user("gina", email="gina@shop.test", groups=["search"])
    idp.misbehave = misbehaviour
    answer, client = sign_in(idp, "gina")
    assert answer.status_code == 403, misbehaviour
    assert said in answer.content.decode(), answer.content.decode()
    assert signed_in_as(client) is None
    assert not User.objects.filter(email="gina@shop.test").exists()


def test_a_state_works_once_and_a_stranger_state_not_at_all(idp, shop):
    idp.add_user("hugo", email="hugo@shop.test", groups=["search"])
    client = Client()
    idp.auto_user = "hugo"
    back = httpx.get(client.get("/sso/okta/login/")["Location"])
    callback = httpx.URL(back.headers["location"])
    assert client.get(callback.path, dict(callback.params)).status_code == 302
    client.logout()
    replayed = client.get(callback.path, dict(callback.params))
    assert replayed.status_code == 403
    assert "used already or too old" in replayed.content.decode()
    forged = Client().get(callback.path, {"state": "made-up", "code": "x"})
    assert forged.status_code == 403


def test_next_leading_out_of_relevo_is_not_followed(idp, shop):
    idp.add_user("ivy", email="ivy@shop.test", groups=["search"])
    answer, _client = sign_in(idp, "ivy", next_url="https://evil.example/steal")
    assert answer["Location"] == "/"


def test_a_refusal_at_the_provider_is_said_on_the_page(idp, shop):
    idp.add_user("jo", email="jo@shop.test", groups=["search"])
    idp.deny = True
    answer, client = sign_in(idp, "jo")
    assert answer.status_code == 403 and signed_in_as(client) is None
    assert "the provider refused" in answer.content.decode()


def test_a_provider_on_a_private_address_is_refused_unless_allowed(idp, shop, settings):
    settings.SSO_ALLOW_PRIVATE_ADDRESSES = False
    answer = Client().get("/sso/okta/login/")
    assert answer.status_code == 502
    assert "address is refused" in answer.content.decode()


def test_signing_out_signs_out_at_the_provider_too(idp, shop):
    idp.add_user("kim", email="kim@shop.test", groups=["search"])
    _answer, client = sign_in(idp, "kim")
    out = client.post("/accounts/logout/")
    assert out.status_code == 200 and signed_in_as(client) is None
    at_provider = re.search(r'content="0;url=([^"]+)"', out.content.decode()).group(1)
    at_provider = html.unescape(at_provider)
    assert at_provider.startswith(idp.url("/logout?"))
    followed = httpx.get(at_provider)
    assert followed.headers["location"] == "http://testserver/accounts/login/"
    assert idp.logouts and idp.logouts[0]["id_token_hint"]


def test_an_unknown_provider_answers_a_page_not_a_crash(idp):
    assert Client().get("/sso/nobody/login/").status_code == 404
    assert Client().get("/sso/nobody/callback/?state=x&code=y").status_code == 404


def test_a_provider_from_the_environment_signs_people_in_with_its_secret_kept_there(idp, settings):
    settings.SSO_OIDC_ISSUER = idp.issuer
    settings.SSO_OIDC_CLIENT_ID = "from-env"
    settings.SSO_OIDC_CLIENT_SECRET = "env-secret-value"
    settings.SSO_OIDC_NAME = "Company login"
    idp.register_client("from-env", "env-secret-value", "http://testserver/sso/oidc/callback/")
    team = make_team("Env")
    SignOnRule.objects.create(team=team, provider="oidc", group="search", role=Role.EVALUATOR)
    idp.add_user("lee", email="lee@env.test", groups=["search"])

    assert "Sign in with Company login" in Client().get("/accounts/login/").content.decode()
    client = Client()
    idp.auto_user = "lee"
    back = httpx.get(client.get("/sso/oidc/login/")["Location"])
    callback = httpx.URL(back.headers["location"])
    answer = client.get(callback.path, dict(callback.params))
    assert answer.status_code == 302 and signed_in_as(client) == "lee@env.test"
