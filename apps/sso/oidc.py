"""OpenID Connect's authorization code flow with PKCE, as a relying party.

Every call to the provider (its discovery document, its keys, the token and userinfo
endpoints) goes through the address-safety layer (apps/search/safe_transport.py),
bounded in time and size. The ID token's signature and claims are checked with joserfc:
signed by a key the provider publishes (never "none", never a shared secret), issued by
the provider, for this client, not expired, and carrying the nonce this sign-in sent.
Anything wrong raises SignInRefused, whose message the failure page shows.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx2 as httpx
from django.conf import settings
from django.core.cache import cache
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from apps.search.safe_transport import (
    AddressRefused,
    CompressedAnswer,
    ResponseTooLarge,
    safe_http_client,
)

from .providers import Provider

MAX_ANSWER_BYTES = 512 * 1024  # a discovery document, a key set, a token answer
DISCOVERY_SECONDS = 3600
KEYS_SECONDS = 600
CLOCK_LEEWAY_SECONDS = 60
# Asymmetric signatures only: a token signed with the client's secret ("HS256") could be
# made by anyone who holds that secret, and "none" by anyone at all.
SIGNATURE_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"]


class SignInRefused(Exception):
    """The sign-in cannot go on; the message says why, for the person and the logs."""


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str
    end_session_endpoint: str


@dataclass(frozen=True)
class Pending:
    """What a sign-in keeps between the redirect to the provider and its way back."""

    state: str
    nonce: str
    code_verifier: str


def discovery_of(provider: Provider) -> Discovery:
    key = f"sso:discovery:{_digest(provider.issuer)}"
    known = cache.get(key)
    if isinstance(known, Discovery):
        return known
    document = _get_json(f"{provider.issuer}/.well-known/openid-configuration", "discovery")
    if document.get("issuer") != provider.issuer:
        raise SignInRefused(
            f"the provider's discovery document names the issuer {document.get('issuer')!r}, "
            f"not {provider.issuer!r}"
        )
    found = Discovery(
        issuer=provider.issuer,
        authorization_endpoint=_url(document, "authorization_endpoint", required=True),
        token_endpoint=_url(document, "token_endpoint", required=True),
        jwks_uri=_url(document, "jwks_uri", required=True),
        userinfo_endpoint=_url(document, "userinfo_endpoint"),
        end_session_endpoint=_url(document, "end_session_endpoint"),
    )
    cache.set(key, found, DISCOVERY_SECONDS)
    return found


def authorization(
    provider: Provider, discovery: Discovery, redirect_uri: str
) -> tuple[str, Pending]:
    """The provider's sign-in URL for this sign-in, and what to keep until it returns."""
    pending = Pending(
        state=secrets.token_urlsafe(32),
        nonce=secrets.token_urlsafe(32),
        code_verifier=secrets.token_urlsafe(64),
    )
    query = {
        "response_type": "code",
        "client_id": provider.client_id,
        "redirect_uri": redirect_uri,
        "scope": provider.scopes,
        "state": pending.state,
        "nonce": pending.nonce,
        "code_challenge": _challenge(pending.code_verifier),
        "code_challenge_method": "S256",
    }
    separator = "&" if "?" in discovery.authorization_endpoint else "?"
    return f"{discovery.authorization_endpoint}{separator}{urlencode(query)}", pending


def signed_in_claims(
    provider: Provider, discovery: Discovery, *, code: str, pending: Pending, redirect_uri: str
) -> tuple[dict[str, Any], str]:
    """The code exchanged for tokens; the ID token's claims checked, with the userinfo
    endpoint's added when the provider has one; and the ID token itself (its sign-out
    wants it back)."""
    answer = _post_json(
        discovery.token_endpoint,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": pending.code_verifier,
        },
        auth=(provider.client_id, provider.client_secret),
    )
    id_token = answer.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise SignInRefused("the provider's token answer holds no ID token")
    claims = id_token_claims(provider, discovery, id_token, nonce=pending.nonce)
    access_token = answer.get("access_token")
    if discovery.userinfo_endpoint and isinstance(access_token, str) and access_token:
        claims = {**_userinfo(discovery, access_token, claims["sub"]), **claims}
    return claims, id_token


def id_token_claims(
    provider: Provider, discovery: Discovery, id_token: str, *, nonce: str
) -> dict[str, Any]:
    if len(id_token) > MAX_ANSWER_BYTES:
        raise SignInRefused("the ID token is too long")
    try:
        token = _decoded(discovery, id_token, refresh=False)
    except SignInRefused:
        token = _decoded(discovery, id_token, refresh=True)  # the provider rotated its keys
    claims = dict(token.claims)
    registry = jwt.JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY_SECONDS,
        iss={"essential": True, "value": provider.issuer},
        aud={"essential": True, "value": provider.client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as error:
        raise SignInRefused(f"the ID token's claims are wrong: {_claim_problem(error)}") from None
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != provider.client_id:
        raise SignInRefused(
            "the ID token is meant for several clients, and not authorized for this one"
        )
    if not isinstance(claims["sub"], str) or not 0 < len(claims["sub"]) <= 255:
        raise SignInRefused("the ID token's subject is not a text of 1 to 255 characters")
    return claims


def sign_out_url(discovery: Discovery, *, id_token: str, come_back_to: str) -> str:
    """Where a person signs out at the provider too, coming back to `come_back_to`."""
    if not discovery.end_session_endpoint:
        return ""
    query = urlencode({"id_token_hint": id_token, "post_logout_redirect_uri": come_back_to})
    separator = "&" if "?" in discovery.end_session_endpoint else "?"
    return f"{discovery.end_session_endpoint}{separator}{query}"


def _decoded(discovery: Discovery, id_token: str, *, refresh: bool) -> jwt.Token:
    try:
        return jwt.decode(id_token, _key_set(discovery, refresh=refresh), SIGNATURE_ALGORITHMS)
    except JoseError as error:
        raise SignInRefused(
            f"the ID token's signature does not check against the provider's keys ({error.error})"
        ) from None
    except ValueError as error:
        raise SignInRefused(f"the ID token cannot be read: {error}") from None


def _key_set(discovery: Discovery, *, refresh: bool) -> KeySet:
    key = f"sso:keys:{_digest(discovery.jwks_uri)}"
    document = None if refresh else cache.get(key)
    if not isinstance(document, dict):
        document = _get_json(discovery.jwks_uri, "key set")
        cache.set(key, document, KEYS_SECONDS)
    try:
        return KeySet.import_key_set(document)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError) as error:
        raise SignInRefused(f"the provider's key set cannot be read: {error}") from None


def _userinfo(discovery: Discovery, access_token: str, subject: str) -> dict[str, Any]:
    answer = _get_json(
        discovery.userinfo_endpoint, "userinfo", headers={"Authorization": f"Bearer {access_token}"}
    )
    if answer.get("sub") != subject:
        raise SignInRefused("the userinfo endpoint answered for another subject")
    return answer


def _get_json(url: str, what: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return _call("GET", url, what, headers=headers)


def _post_json(url: str, form: dict[str, str], auth: tuple[str, str]) -> dict[str, Any]:
    return _call("POST", url, "token", form=form, auth=auth)


def _call(
    method: str,
    url: str,
    what: str,
    *,
    headers: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
    auth: tuple[str, str] | None = None,
) -> dict[str, Any]:
    client = safe_http_client(
        timeout_s=settings.SSO_TIMEOUT_SECONDS,
        allow_private=settings.SSO_ALLOW_PRIVATE_ADDRESSES,
        max_bytes=MAX_ANSWER_BYTES,
    )
    try:
        with client:
            response = client.request(
                method,
                url,
                headers={"Accept": "application/json", **(headers or {})},
                data=form,
                auth=auth,
            )
            body = response.read()
    except AddressRefused as error:
        raise SignInRefused(f"the provider's {what} address is refused: {error}") from None
    except (ResponseTooLarge, CompressedAnswer) as error:
        raise SignInRefused(f"the provider's {what} answer is refused: {error}") from None
    except httpx.HTTPError as error:
        raise SignInRefused(f"the provider's {what} endpoint did not answer: {error}") from None
    if response.status_code != 200:
        raise SignInRefused(
            f"the provider's {what} endpoint answered {response.status_code}" + _oauth_error(body)
        )
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise SignInRefused(f"the provider's {what} answer is not JSON") from None
    if not isinstance(document, dict):
        raise SignInRefused(f"the provider's {what} answer is not a JSON object")
    return document


def _oauth_error(body: bytes) -> str:
    """An OAuth error answer's code, e.g. ": invalid_grant"; else nothing."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError, RecursionError):
        return ""
    return f": {error[:100]}" if isinstance(error, str) else ""


def _url(document: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = document.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise SignInRefused(f"the provider's discovery document has no usable {name}")
    return value[:2000]


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _claim_problem(error: JoseError) -> str:
    return error.description or error.error


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]
