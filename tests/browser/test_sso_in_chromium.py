"""A person signs in with their company identity in Chromium: the log-in page's button
takes them to a real local OpenID Connect or SAML provider, they choose their account
there and land in Relevo as a member of the team their group maps to; signing out of an
OpenID Connect sign-in signs them out at the provider too. Someone no rule maps is shown
why, and stays signed out."""

import shutil

import pytest
from playwright.sync_api import expect

from apps.accounts.models import Role
from apps.core.secrets import encrypt_secret
from apps.sso.models import IdentityProvider, Protocol, SignOnRule
from apps.sso.saml import metadata_entity_id
from conftest import service_missing
from tests.factories import make_team
from tests.oidc_provider import start_oidc_provider

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def keycloak(live_server, settings):
    settings.SSO_ALLOW_PRIVATE_ADDRESSES = True
    provider = start_oidc_provider()
    provider.register_client("relevo", "client-secret", f"{live_server.url}/sso/keycloak/callback/")
    IdentityProvider.objects.create(
        slug="keycloak",
        name="Keycloak",
        issuer=provider.issuer,
        client_id="relevo",
        client_secret=encrypt_secret("client-secret"),
    )
    yield provider
    provider.stop()


def test_a_person_signs_in_with_the_provider_and_out_again(live_server, page, screenshot, keycloak):
    team = make_team("Shop", owner="owner@shop.test")
    SignOnRule.objects.create(team=team, provider="keycloak", group="search-leads", role=Role.ADMIN)
    keycloak.add_user("alice", email="alice@shop.test", groups=["search-leads"], name="Alice")

    page.goto(f"{live_server.url}/accounts/login/")
    screenshot("log-in-page")
    page.get_by_role("link", name="Sign in with Keycloak").click()
    page.get_by_role("button", name="Sign in as alice@shop.test").click()

    expect(page.get_by_role("link", name="Dashboard").first).to_be_visible()
    page.goto(f"{live_server.url}/team/members/")
    expect(page.get_by_role("row", name="alice@shop.test")).to_contain_text("by sign-on rule")
    screenshot("signed-in")

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in to Relevo")).to_be_visible()
    assert keycloak.logouts and keycloak.logouts[0]["id_token_hint"]


def test_someone_no_rule_maps_sees_why_and_is_not_signed_in(
    live_server, page, screenshot, keycloak
):
    make_team("Shop", owner="owner@shop.test")
    keycloak.add_user("bob", email="bob@elsewhere.test", groups=["marketing"])

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Sign in with Keycloak").click()
    page.get_by_role("button", name="Sign in as bob@elsewhere.test").click()

    refusal = page.get_by_test_id("sso-refused")
    expect(refusal).to_contain_text("no team in Relevo has a rule for your groups (marketing)")
    screenshot("refused")
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Log in to Relevo")).to_be_visible()


@pytest.fixture
def shibboleth(live_server):
    """A real local SAML identity provider (pysaml2); Relevo is reached at 127.0.0.1, the
    provider's host, as a plain-http deployment must be: same site, or the sign-in's
    cookie does not travel with the provider's post."""
    from tests.saml_provider import start_saml_provider

    if not shutil.which("xmlsec1"):
        service_missing("xmlsec1 (apt-get install xmlsec1) for SAML signatures")
    relevo = live_server.url.replace("localhost", "127.0.0.1")
    provider = start_saml_provider()
    provider.register_sp(f"{relevo}/sso/saml/metadata/", f"{relevo}/sso/saml/acs/")
    metadata = provider.metadata_xml()
    IdentityProvider.objects.create(
        slug="shibboleth",
        name="Shibboleth",
        protocol=Protocol.SAML,
        saml_metadata=metadata,
        saml_entity_id=metadata_entity_id(metadata),
    )
    yield provider, relevo
    provider.stop()


def test_a_person_signs_in_through_a_saml_provider(page, screenshot, shibboleth):
    provider, relevo = shibboleth
    team = make_team("Shop", owner="owner@shop.test")
    SignOnRule.objects.create(team=team, provider="shibboleth", group="search", role=Role.ADMIN)
    provider.add_user("carol", email="carol@shop.test", groups=["search"], name="Carol")

    page.goto(f"{relevo}/accounts/login/?next=/team/members/")
    page.get_by_role("link", name="Sign in with Shibboleth").click()
    page.get_by_role("button", name="Sign in as carol@shop.test").click()

    expect(page.get_by_role("heading", name="Members of Shop")).to_be_visible()
    expect(page.get_by_role("row", name="carol@shop.test")).to_contain_text("by sign-on rule")
    screenshot("signed-in-through-saml")
