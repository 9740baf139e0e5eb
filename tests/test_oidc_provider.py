"""The local OpenID Connect provider behaves as a real one does for a client driving it."""

import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import KeySet, OctKey

from tests.oidc_provider import OidcProvider, oidc_provider  # noqa: F401 (the fixture)

CLIENT_ID = "relevo"
SECRET = "client-secret-for-tests"
REDIRECT_URI = "http://testserver/sso/callback/"


@pytest.fixture
def provider(oidc_provider: OidcProvider) -> OidcProvider:  # noqa: F811
    oidc_provider.register_client(CLIENT_ID, SECRET, REDIRECT_URI)
    oidc_provider.add_user("alice", email="alice@example.com", groups=["relevo-leads"])
    oidc_provider.add_user("bob", email="bob@example.com", email_verified=False)
    oidc_provider.auto_user = "alice"
    return oidc_provider


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize(provider: OidcProvider, challenge: str, **overrides: str) -> httpx.Response:
    params = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email profile groups",
        "state": "state-1",
        "nonce": "nonce-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        **overrides,
    }
    return httpx.get(provider.url("/authorize"), params=params)


def redirect_query(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(REDIRECT_URI)
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def code_for(provider: OidcProvider) -> tuple[str, str]:
    verifier, challenge = pkce()
    return redirect_query(authorize(provider, challenge))["code"], verifier


def exchange(provider: OidcProvider, code: str, verifier: str, **overrides: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier,
        **overrides,
    }
    return httpx.post(provider.url("/token"), data=form, auth=(CLIENT_ID, SECRET))


def tokens(provider: OidcProvider) -> dict[str, str]:
    response = exchange(provider, *code_for(provider))
    assert response.status_code == 200, response.text
    return response.json()


def published_keys(provider: OidcProvider) -> KeySet:
    return KeySet.import_key_set(httpx.get(provider.url("/jwks")).json())


def verified_claims(provider: OidcProvider, id_token: str) -> dict[str, Any]:
    return jwt.decode(id_token, published_keys(provider), algorithms=["RS256"]).claims


def unverified(id_token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    header, claims = (
        json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        for part in id_token.split(".")[:2]
    )
    return header, claims


def test_discovery_names_every_endpoint_under_the_issuer(provider):
    document = httpx.get(provider.url("/.well-known/openid-configuration")).json()

    assert document["issuer"] == provider.issuer
    assert not provider.issuer.endswith("/")
    assert document["authorization_endpoint"] == provider.issuer + "/authorize"
    assert document["token_endpoint"] == provider.issuer + "/token"
    assert document["userinfo_endpoint"] == provider.issuer + "/userinfo"
    assert document["jwks_uri"] == provider.issuer + "/jwks"
    assert document["end_session_endpoint"] == provider.issuer + "/logout"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["id_token_signing_alg_values_supported"] == ["RS256"]


def test_jwks_publishes_the_signing_key_without_its_private_parts(provider):
    (key,) = httpx.get(provider.url("/jwks")).json()["keys"]

    assert (key["kty"], key["alg"], key["use"], key["kid"]) == ("RSA", "RS256", "sig", provider.kid)
    assert "d" not in key


def test_code_flow_with_pkce_gives_an_id_token_signed_by_the_published_key(provider):
    verifier, challenge = pkce()
    answer = redirect_query(authorize(provider, challenge))
    assert answer["state"] == "state-1"

    response = exchange(provider, answer["code"], verifier)

    assert response.status_code == 200
    body = response.json()
    assert (body["token_type"], body["expires_in"]) == ("Bearer", 300)
    claims = verified_claims(provider, body["id_token"])
    assert claims["iss"] == provider.issuer
    assert claims["aud"] == CLIENT_ID
    assert claims["sub"] == provider.users["alice"]["sub"]
    assert claims["nonce"] == "nonce-1"
    assert claims["email"] == "alice@example.com"
    assert claims["email_verified"] is True
    assert claims["groups"] == ["relevo-leads"]
    assert claims["iat"] <= time.time() < claims["exp"] == claims["iat"] + 300


def test_a_user_keeps_one_subject_across_sign_ins(provider):
    first = verified_claims(provider, tokens(provider)["id_token"])
    second = verified_claims(provider, tokens(provider)["id_token"])

    assert first["sub"] == second["sub"]


def test_groups_go_under_the_claim_name_the_test_chooses(provider):
    provider.groups_claim = "roles"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert claims["roles"] == ["relevo-leads"]
    assert "groups" not in claims


def test_client_may_authenticate_with_its_secret_in_the_body(provider):
    code, verifier = code_for(provider)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier,
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
    }

    assert httpx.post(provider.url("/token"), data=form).status_code == 200


def test_a_wrong_client_secret_is_invalid_client(provider):
    code, verifier = code_for(provider)
    form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}

    response = httpx.post(provider.url("/token"), data=form, auth=(CLIENT_ID, "guess"))

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


def test_a_wrong_code_verifier_is_invalid_grant(provider):
    code, _verifier = code_for(provider)

    response = exchange(provider, code, pkce()[0])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_a_code_used_twice_is_invalid_grant(provider):
    code, verifier = code_for(provider)
    assert exchange(provider, code, verifier).status_code == 200

    response = exchange(provider, code, verifier)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_a_code_redeemed_with_another_redirect_uri_is_invalid_grant(provider):
    code, verifier = code_for(provider)

    response = exchange(provider, code, verifier, redirect_uri="http://evil.example/cb")

    assert response.json()["error"] == "invalid_grant"


def test_authorize_with_another_redirect_uri_is_a_400_naming_it(provider):
    response = authorize(provider, pkce()[1], redirect_uri="http://evil.example/cb")

    assert response.status_code == 400
    assert "redirect_uri" in response.text
    assert "http://evil.example/cb" in response.text


def test_authorize_for_an_unknown_client_is_a_400_naming_it(provider):
    response = authorize(provider, pkce()[1], client_id="stranger")

    assert response.status_code == 400
    assert "stranger" in response.text


def test_authorize_without_an_s256_challenge_redirects_with_invalid_request(provider):
    response = authorize(provider, pkce()[1], code_challenge_method="plain")

    assert redirect_query(response)["error"] == "invalid_request"


def test_deny_redirects_with_access_denied_and_the_state(provider):
    provider.deny = True

    answer = redirect_query(authorize(provider, pkce()[1]))

    assert answer["error"] == "access_denied"
    assert answer["error_description"]
    assert answer["state"] == "state-1"
    assert "code" not in answer


def test_sign_in_page_lists_the_users_and_its_post_redirects_with_a_code(provider):
    provider.auto_user = None
    verifier, challenge = pkce()

    page = authorize(provider, challenge)

    assert page.status_code == 200
    assert "Sign in as alice@example.com" in page.text
    assert "Sign in as bob@example.com" in page.text
    assert f'name="code_challenge" value="{challenge}"' in page.text
    form = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "state": "state-1",
        "nonce": "nonce-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "user": "bob",
    }
    answer = redirect_query(httpx.post(provider.url("/authorize"), data=form))
    assert answer["state"] == "state-1"
    body = exchange(provider, answer["code"], verifier).json()
    assert verified_claims(provider, body["id_token"])["email"] == "bob@example.com"


def test_userinfo_answers_for_the_access_token(provider):
    access_token = tokens(provider)["access_token"]

    response = httpx.get(
        provider.url("/userinfo"), headers={"Authorization": f"Bearer {access_token}"}
    )

    assert response.status_code == 200
    assert response.json() == {
        "sub": provider.users["alice"]["sub"],
        "email": "alice@example.com",
        "email_verified": True,
        "name": "Alice",
        "groups": ["relevo-leads"],
    }


def test_userinfo_refuses_an_unknown_token(provider):
    response = httpx.get(provider.url("/userinfo"), headers={"Authorization": "Bearer made-up"})

    assert response.status_code == 401
    assert httpx.get(provider.url("/userinfo")).status_code == 401


def test_logout_records_the_call_and_redirects_back_with_the_state(provider):
    params = {
        "id_token_hint": "the-id-token",
        "post_logout_redirect_uri": "http://testserver/signed-out/",
        "state": "bye",
    }

    response = httpx.get(provider.url("/logout"), params=params)

    assert response.status_code == 302
    assert response.headers["location"] == "http://testserver/signed-out/?state=bye"
    assert provider.logouts == [params]


def test_logout_without_a_way_back_shows_signed_out(provider):
    response = httpx.get(provider.url("/logout"))

    assert response.status_code == 200
    assert "Signed out" in response.text
    assert provider.logouts == [{}]


def test_every_request_is_recorded_by_method_and_path(provider):
    tokens(provider)

    assert provider.requests == [("GET", "/authorize"), ("POST", "/token")]


def test_a_body_over_64_kb_is_refused_with_413(provider):
    response = httpx.post(provider.url("/token"), content=b"x" * (64 * 1024 + 1))

    assert response.status_code == 413


def test_delay_seconds_slows_every_answer(provider):
    provider.delay_seconds = 0.3
    started = time.monotonic()

    httpx.get(provider.url("/jwks"))

    assert time.monotonic() - started >= 0.3


def test_wrong_signature_fails_against_the_published_key_under_the_same_kid(provider):
    provider.misbehave = "wrong_signature"
    id_token = tokens(provider)["id_token"]

    assert unverified(id_token)[0]["kid"] == provider.kid
    with pytest.raises(BadSignatureError):
        verified_claims(provider, id_token)


def test_wrong_audience_names_another_client(provider):
    provider.misbehave = "wrong_audience"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert claims["aud"] != CLIENT_ID
    assert claims["iss"] == provider.issuer


def test_wrong_issuer_names_another_issuer(provider):
    provider.misbehave = "wrong_issuer"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert claims["iss"] != provider.issuer
    assert claims["aud"] == CLIENT_ID


def test_expired_token_was_issued_and_expired_an_hour_ago(provider):
    provider.misbehave = "expired"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert claims["exp"] < time.time() - 3000
    assert claims["iat"] < time.time() - 3500


def test_wrong_nonce_carries_another_nonce(provider):
    provider.misbehave = "wrong_nonce"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert claims["nonce"] != "nonce-1"


def test_no_nonce_leaves_the_nonce_out(provider):
    provider.misbehave = "no_nonce"

    claims = verified_claims(provider, tokens(provider)["id_token"])

    assert "nonce" not in claims
    assert claims["aud"] == CLIENT_ID


def test_alg_none_is_an_unsigned_token_the_published_key_refuses(provider):
    provider.misbehave = "alg_none"
    id_token = tokens(provider)["id_token"]

    header, claims = unverified(id_token)
    assert header["alg"] == "none"
    assert id_token.endswith(".")
    assert claims["nonce"] == "nonce-1"
    with pytest.raises(JoseError):
        verified_claims(provider, id_token)


def test_hs256_is_signed_with_the_client_secret_and_refused_as_rs256(provider):
    provider.misbehave = "hs256"
    id_token = tokens(provider)["id_token"]

    assert unverified(id_token)[0]["alg"] == "HS256"
    with pytest.raises(JoseError):
        verified_claims(provider, id_token)
    secret = OctKey.import_key(SECRET)
    assert jwt.decode(id_token, secret, algorithms=["HS256"]).claims["aud"] == CLIENT_ID
