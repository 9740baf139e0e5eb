"""Signing in through a real local SAML 2.0 identity provider (pysaml2, tests/
saml_provider.py): Relevo's service-provider metadata served for it to read, the person
provisioned by the same rules as an OpenID Connect sign-in, and every response that fails
a check (signature, audience, recipient, time window, a request this browser did not
make, a replay) refused with a page that says why, nothing made or signed in."""

import httpx
import pytest
from django.test import Client

from apps.accounts.models import Membership, Role, User
from apps.sso.models import IdentityProvider, Protocol, SignOnRule
from apps.sso.saml import MetadataProblem, metadata_entity_id
from tests.factories import make_team
from tests.saml_provider import posted_form, saml_provider  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

SP_ENTITY = "http://testserver/sso/saml/metadata/"
ACS = "http://testserver/sso/saml/acs/"
LOGOUT_SERVICE = "http://testserver/sso/saml/ls/"


@pytest.fixture
def adfs(saml_provider):  # noqa: F811
    saml_provider.register_sp(SP_ENTITY, ACS, LOGOUT_SERVICE)
    metadata = saml_provider.metadata_xml()
    IdentityProvider.objects.create(
        slug="adfs",
        name="ADFS",
        protocol=Protocol.SAML,
        saml_metadata=metadata,
        saml_entity_id=metadata_entity_id(metadata),
    )
    team = make_team("Shop", owner="owner@shop.test")
    SignOnRule.objects.create(team=team, provider="adfs", group="search", role=Role.ADMIN)
    return saml_provider


def signed_in_as(client: Client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(id=user_id).email if user_id else None


def to_relevo(client: Client, idp, person: str, next_url: str = "/evaluations/"):
    """Relevo sends the browser to the provider, which signs `person` in and hands back
    the form it posts to Relevo: (its address, its fields)."""
    idp.auto_user = person
    to_login = client.get(f"/sso/adfs/login/?next={next_url}")
    assert to_login.status_code == 302, to_login.content.decode()
    to_provider = client.get(to_login["Location"])
    assert to_provider.status_code == 302, to_provider.content.decode()
    page = httpx.get(to_provider["Location"])
    assert page.status_code == 200, page.text
    action, fields = posted_form(page.text)
    assert action == ACS
    return fields


def test_a_person_signs_in_and_the_rules_make_them_a_member(adfs):
    adfs.add_user("alice", email="alice@shop.test", groups=["search", "all-staff"])
    client = Client()
    answer = client.post("/sso/saml/acs/", to_relevo(client, adfs, "alice"))
    assert (answer.status_code, answer["Location"]) == (302, "/evaluations/")
    assert signed_in_as(client) == "alice@shop.test"
    membership = Membership.objects.get(user__email="alice@shop.test")
    assert (membership.team.name, membership.role, membership.granted_by_rule) == (
        "Shop",
        Role.ADMIN,
        True,
    )


def test_relevo_serves_its_metadata_for_the_provider_to_read(adfs):
    answer = Client().get("/sso/saml/metadata/")
    text = answer.content.decode()
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/xml")
    assert f'entityID="{SP_ENTITY}"' in text and f'Location="{ACS}"' in text


@pytest.mark.parametrize(
    ("misbehaviour", "said"),
    [
        ("wrong_signature", "signature does not check"),
        ("unsigned", "signature"),
        ("wrong_audience", "audience"),
        ("wrong_recipient", "another address"),
        ("expired", "too old"),
        ("not_yet_valid", "not valid yet"),
        ("wrong_in_response_to", "answers no sign-in this browser began"),
        ("unsolicited", "answers no sign-in this browser began"),
    ],
)
def test_a_response_that_fails_a_check_is_refused_and_nothing_is_made(adfs, misbehaviour, said):
    adfs.add_user("bob", email="bob@shop.test", groups=["search"])
    adfs.misbehave = misbehaviour
    client = Client()
    answer = client.post("/sso/saml/acs/", to_relevo(client, adfs, "bob"))
    text = answer.content.decode()
    assert answer.status_code in (400, 403), (misbehaviour, text)
    assert said in text.replace("&#x27;", "'"), (misbehaviour, text)
    assert signed_in_as(client) is None
    assert not User.objects.filter(email="bob@shop.test").exists()


def test_a_response_posted_again_is_refused(adfs):
    adfs.add_user("carol", email="carol@shop.test", groups=["search"])
    client = Client()
    fields = to_relevo(client, adfs, "carol")
    assert client.post("/sso/saml/acs/", fields).status_code == 302
    client.logout()
    replayed = client.post("/sso/saml/acs/", fields)
    assert replayed.status_code == 403 and signed_in_as(client) is None
    stranger = Client().post("/sso/saml/acs/", fields)
    assert stranger.status_code == 403


def test_a_refusal_at_the_provider_is_said(adfs):
    adfs.add_user("dan", email="dan@shop.test", groups=["search"])
    adfs.deny = True
    client = Client()
    answer = client.post("/sso/saml/acs/", to_relevo(client, adfs, "dan"))
    assert (
        answer.status_code == 403 and "the provider refused the sign-in" in answer.content.decode()
    )


def test_someone_no_rule_maps_is_refused_with_their_groups(adfs):
    adfs.add_user("erin", email="erin@elsewhere.test", groups=["marketing"])
    client = Client()
    answer = client.post("/sso/saml/acs/", to_relevo(client, adfs, "erin"))
    assert answer.status_code == 403
    assert "no team in Relevo has a rule for your groups (marketing)" in answer.content.decode()
    assert not User.objects.filter(email="erin@elsewhere.test").exists()


@pytest.mark.parametrize(
    ("xml", "problem"),
    [
        ("not xml", "not XML that can be read safely"),
        (
            '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
            'entityID="&x;"/>',
            "not XML that can be read safely",
        ),
        (
            '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
            'entityID="https://sp.example"><md:SPSSODescriptor/></md:EntityDescriptor>',
            "describes no identity provider",
        ),
        ("x" * 1_000_001, "longer than 1,000,000 bytes"),
    ],
)
def test_metadata_that_cannot_be_used_is_refused_by_name(xml, problem):
    with pytest.raises(MetadataProblem, match=problem):
        metadata_entity_id(xml)


def test_signing_out_of_relevo_signs_out_at_the_provider_and_comes_back(adfs):
    person = adfs.add_user("fay", email="fay@shop.test", groups=["search"])
    client = Client()
    client.post("/sso/saml/acs/", to_relevo(client, adfs, "fay"))
    assert signed_in_as(client) == "fay@shop.test"

    out = client.post("/accounts/logout/")
    assert out.status_code == 200 and signed_in_as(client) is None
    assert 'content="0;url=http://testserver/sso/saml/sign-out/"' in out.content.decode()
    to_provider = client.get("/sso/saml/sign-out/")
    assert to_provider.status_code == 302
    assert to_provider["Location"].startswith(adfs.base_url + "/slo/redirect?SAMLRequest=")
    back = httpx.get(to_provider["Location"])
    assert adfs.logouts and adfs.logouts[0]["name_id"] == person["name_id"]
    returned = httpx.URL(back.headers["location"])
    assert str(returned).startswith(LOGOUT_SERVICE)
    finished = client.get(returned.path, dict(returned.params))
    assert (finished.status_code, finished["Location"]) == (302, "/accounts/login/")


def test_the_sign_out_address_does_nothing_for_someone_still_signed_in(adfs):
    adfs.add_user("gus", email="gus@shop.test", groups=["search"])
    client = Client()
    client.post("/sso/saml/acs/", to_relevo(client, adfs, "gus"))
    answer = client.get("/sso/saml/sign-out/")  # a link on another site, say
    assert answer["Location"] == "/accounts/login/" and not adfs.logouts
    assert signed_in_as(client) == "gus@shop.test"


@pytest.mark.parametrize("junk", ["", "not base64 at all %%%", "PHhtbD4=", "A" * 100_000])
def test_a_response_that_is_not_saml_is_refused_with_a_page_not_a_crash(adfs, junk):
    answer = Client().post("/sso/saml/acs/", {"SAMLResponse": junk})
    assert answer.status_code in (400, 403)
    assert Client().post("/sso/saml/acs/", {}).status_code == 400


def test_next_leading_out_of_relevo_is_not_followed_after_a_saml_sign_in(adfs):
    adfs.add_user("hal", email="hal@shop.test", groups=["search"])
    client = Client()
    fields = to_relevo(client, adfs, "hal", next_url="https://evil.example/steal")
    answer = client.post("/sso/saml/acs/", fields)
    assert answer.status_code == 302 and answer["Location"] == "/"
