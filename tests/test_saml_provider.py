"""The local SAML 2.0 identity provider behaves as a real one does for pysaml2's own
service provider driving it."""

import shutil
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.response import StatusAuthnFailed, UnsolicitedResponse
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID
from saml2.sigver import SignatureError
from saml2.validate import ResponseLifetimeExceed, ToEarly

from tests.saml_provider import SamlProvider, posted_form, saml_provider  # noqa: F401 (the fixture)

SP_ENTITY_ID = "http://testserver/saml/metadata/"
ACS_URL = "http://testserver/saml/acs/"
SLO_URL = "http://testserver/saml/ls/"


@pytest.fixture
def provider(saml_provider: SamlProvider) -> SamlProvider:  # noqa: F811
    saml_provider.register_sp(SP_ENTITY_ID, ACS_URL, slo_url=SLO_URL)
    saml_provider.add_user("alice", "alice@example.com", groups=["relevo-leads", "search"])
    saml_provider.add_user("bob", "bob@example.com")
    saml_provider.auto_user = "alice"
    return saml_provider


def service_provider(provider: SamlProvider, entity_id: str = SP_ENTITY_ID) -> Saml2Client:
    config = SPConfig()
    config.load(
        {
            "entityid": entity_id,
            "xmlsec_binary": shutil.which("xmlsec1"),
            "metadata": {"inline": [provider.metadata_xml()]},
            # The provider's attribute names are in none of pysaml2's maps.
            "allow_unknown_attributes": True,
            "service": {
                "sp": {
                    "endpoints": {
                        "assertion_consumer_service": [(ACS_URL, BINDING_HTTP_POST)],
                        "single_logout_service": [(SLO_URL, BINDING_HTTP_REDIRECT)],
                    },
                    "name_id_format": NAMEID_FORMAT_PERSISTENT,
                    "want_assertions_signed": True,
                    "want_response_signed": True,
                    "allow_unsolicited": False,
                }
            },
        }
    )
    return Saml2Client(config)


def sign_in_redirect(client: Saml2Client, provider: SamlProvider) -> tuple[str, httpx.Response]:
    """The SP's AuthnRequest sent over HTTP-Redirect: its id and the provider's answer."""
    request_id, info = client.prepare_for_authenticate(
        entityid=provider.entity_id, relay_state="/after", binding=BINDING_HTTP_REDIRECT
    )
    location = dict(info["headers"])["Location"]
    assert location.startswith(provider.url("/sso/redirect?SAMLRequest="))
    return request_id, httpx.get(location)


def saml_response(page: httpx.Response) -> str:
    assert page.status_code == 200, page.text
    action, fields = posted_form(page.text)
    assert action == ACS_URL
    return fields["SAMLResponse"]


def parsed(client: Saml2Client, response: str, request_id: str):
    return client.parse_authn_request_response(
        response, BINDING_HTTP_POST, outstanding={request_id: "/"}
    )


def signed_in(provider: SamlProvider):
    client = service_provider(provider)
    request_id, page = sign_in_redirect(client, provider)
    return parsed(client, saml_response(page), request_id)


def test_metadata_publishes_the_entity_id_certificate_and_endpoints(provider):
    metadata = httpx.get(provider.url("/metadata"))

    assert metadata.status_code == 200
    assert metadata.text == provider.metadata_xml()
    assert f'entityID="{provider.base_url}/metadata"' in metadata.text
    assert "X509Certificate" in metadata.text
    for path, binding in [
        ("/sso/redirect", BINDING_HTTP_REDIRECT),
        ("/sso/post", BINDING_HTTP_POST),
        ("/slo/redirect", BINDING_HTTP_REDIRECT),
    ]:
        assert f'Binding="{binding}" Location="{provider.url(path)}"' in metadata.text


def test_a_redirect_sign_in_gives_the_users_name_id_and_attributes(provider):
    client = service_provider(provider)
    request_id, page = sign_in_redirect(client, provider)
    _action, fields = posted_form(page.text)
    response = parsed(client, fields["SAMLResponse"], request_id)

    assert fields["RelayState"] == "/after"
    assert response.name_id.format == NAMEID_FORMAT_PERSISTENT
    assert response.name_id.text == provider.users["alice"]["name_id"]
    assert response.ava == {
        "email": ["alice@example.com"],
        "groups": ["relevo-leads", "search"],
        "displayName": ["Alice"],
    }
    assert response.in_response_to == request_id
    assert response.assertion.conditions.audience_restriction[0].audience[0].text == SP_ENTITY_ID
    assert "<script>" in page.text and ">Continue</button>" in page.text


def test_a_post_sign_in_is_answered_as_well(provider):
    client = service_provider(provider)
    request_id, info = client.prepare_for_authenticate(
        entityid=provider.entity_id, relay_state="/after", binding=BINDING_HTTP_POST
    )
    action, fields = posted_form(info["data"])
    assert action == provider.url("/sso/post")

    response = parsed(client, saml_response(httpx.post(action, data=fields)), request_id)

    assert response.ava["email"] == ["alice@example.com"]


def test_the_user_picker_lists_users_and_choosing_one_posts_their_response(provider):
    provider.auto_user = None
    client = service_provider(provider)
    request_id, page = sign_in_redirect(client, provider)

    assert "Sign in as alice@example.com" in page.text
    assert "Sign in as bob@example.com" in page.text
    action, fields = posted_form(page.text)
    assert action == "/sso/choose"
    assert fields["request_id"] == request_id
    chosen = httpx.post(provider.url(action), data={**fields, "user": "bob"})
    response = parsed(client, saml_response(chosen), request_id)
    assert response.ava["email"] == ["bob@example.com"]
    assert response.ava["groups"] == []
    assert posted_form(chosen.text)[1]["RelayState"] == "/after"


def test_every_response_carries_a_fresh_assertion_id(provider):
    assert signed_in(provider).assertion.id != signed_in(provider).assertion.id


@pytest.mark.parametrize(
    ("misbehaviour", "refusal", "saying"),
    [
        ("wrong_signature", SignatureError, "Failed to verify signature"),
        ("unsigned", SignatureError, "Signature missing for response"),
        ("expired", ResponseLifetimeExceed, "too old"),
        ("not_yet_valid", ToEarly, "Can't use response yet"),
        ("wrong_in_response_to", UnsolicitedResponse, "Unsolicited response: id-"),
        ("unsolicited", UnsolicitedResponse, "Unsolicited response: None"),
    ],
)
def test_pysaml2_refuses_each_misbehaviour(provider, misbehaviour, refusal, saying):
    provider.misbehave = misbehaviour

    with pytest.raises(refusal, match=saying):
        signed_in(provider)


def test_a_response_for_another_audience_is_refused(provider):
    provider.misbehave = "wrong_audience"

    with pytest.raises(Exception, match="AudienceRestrictions conditions not satisfied"):
        signed_in(provider)


def test_a_response_for_another_recipient_yields_no_assertion(provider):
    """pysaml2 raises nothing for a Destination not its own: it logs it and leaves the
    response without an assertion, so an SP must check that one came. (It checks the
    Recipient only when the caller passes conv_info, which djangosaml2 does not.)"""
    provider.misbehave = "wrong_recipient"

    response = signed_in(provider)

    assert response.assertion is None and response.name_id is None
    with pytest.raises(Exception, match="not valid"):
        response.session_info()


def test_a_denied_sign_in_is_a_status_error(provider):
    provider.deny = True

    with pytest.raises(StatusAuthnFailed, match="The user did not sign in"):
        signed_in(provider)


def test_pysaml2_takes_the_same_response_twice(provider):
    """pysaml2 keeps no record of the assertions it took: a replayed Response parses again
    while its request id is outstanding. The SP must drop the request id after use (as
    djangosaml2 does) and keep assertion ids until they expire."""
    client = service_provider(provider)
    request_id, page = sign_in_redirect(client, provider)
    response = saml_response(page)

    first, second = parsed(client, response, request_id), parsed(client, response, request_id)

    assert first.assertion.id == second.assertion.id
    with pytest.raises(UnsolicitedResponse):
        client.parse_authn_request_response(response, BINDING_HTTP_POST, outstanding={})


def test_a_request_from_an_unregistered_sp_is_refused(provider):
    client = service_provider(provider, entity_id="http://stranger.example/metadata")

    _request_id, page = sign_in_redirect(client, provider)

    assert page.status_code == 400
    assert "http://stranger.example/metadata" in page.text


def test_single_logout_records_the_request_and_redirects_with_a_logout_response(provider):
    client = service_provider(provider)
    name_id = NameID(format=NAMEID_FORMAT_PERSISTENT, text=provider.users["alice"]["name_id"])
    _request_id, request = client.create_logout_request(
        provider.url("/slo/redirect"), provider.entity_id, name_id=name_id, sign=False
    )
    info = client.apply_binding(
        BINDING_HTTP_REDIRECT, str(request), provider.url("/slo/redirect"), relay_state="/bye"
    )

    answer = httpx.get(dict(info["headers"])["Location"])

    assert provider.logouts == [
        {"issuer": SP_ENTITY_ID, "name_id": provider.users["alice"]["name_id"]}
    ]
    assert answer.status_code == 302
    back = urlsplit(answer.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == SLO_URL
    query = {name: values[0] for name, values in parse_qs(back.query).items()}
    assert query["RelayState"] == "/bye" and "Signature" in query
    logout_response = client.parse_logout_request_response(
        query["SAMLResponse"], BINDING_HTTP_REDIRECT
    )
    assert logout_response.status_ok()


def test_requests_are_recorded_and_bodies_are_bounded(provider):
    too_big = httpx.post(provider.url("/sso/post"), content=b"x" * (1024 * 1024 + 1))

    assert too_big.status_code == 413
    assert provider.requests == [("POST", "/sso/post")]
