"""A real OpenID Connect identity provider on 127.0.0.1 for tests of single sign-on.

It speaks the authorization code flow with PKCE (S256) the way a real provider does, so
the real client code can be pointed at ``provider.issuer`` and discover everything else:

- ``/.well-known/openid-configuration``: the discovery document;
- ``/jwks``: the public RSA key ID tokens are signed with (RS256);
- ``/authorize``: a sign-in page with one button per user (``auto_user`` skips it and
  redirects at once, ``deny`` redirects with ``error=access_denied``);
- ``/token``: trades a one-time code, its redirect_uri and PKCE verifier, and the client's
  credentials (HTTP Basic or in the body) for an access token and an ID token;
- ``/userinfo``: the user's claims for a Bearer access token;
- ``/logout``: records the call in ``logouts`` and redirects back.

Tests register clients and users, then script failures: ``misbehave`` spoils one aspect of
the ID tokens issued (see MISBEHAVIOURS), ``delay_seconds`` slows every answer. Every
request is recorded as (method, path) in ``requests``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any, TypedDict
from urllib.parse import unquote_plus, urlencode, urlsplit, urlunsplit

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.form_server import Answer, FormHandler, Refused, page, redirect

MAX_BODY_BYTES = 64 * 1024
TOKEN_LIFETIME_SECONDS = 300
# Each one changes a single aspect of the ID tokens the provider issues.
MISBEHAVIOURS = (
    "wrong_signature",  # signed by another RSA key that carries the published kid
    "wrong_audience",
    "wrong_issuer",
    "expired",  # iat and exp an hour earlier
    "wrong_nonce",
    "no_nonce",
    "alg_none",  # unsigned
    "hs256",  # signed with the client secret instead of the published key
)


class Client(TypedDict):
    secret: str
    redirect_uri: str


class User(TypedDict):
    sub: str
    email: str
    email_verified: bool
    name: str
    groups: list[str]


@dataclass
class Grant:
    """What a one-time code stands for, as /authorize issued it."""

    client_id: str
    redirect_uri: str
    nonce: str | None
    code_challenge: str
    user: str
    used: bool = False


class OidcProvider(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.clients: dict[str, Client] = {}
        self.users: dict[str, User] = {}
        self.auto_user: str | None = None
        self.deny = False
        self.misbehave: str | None = None
        self.groups_claim = "groups"
        self.delay_seconds = 0.0
        self.requests: list[tuple[str, str]] = []
        self.logouts: list[dict[str, str]] = []
        self.kid = f"relevo-test-{secrets.token_hex(4)}"
        self.signing_key = RSAKey.generate_key(
            2048, parameters={"kid": self.kid, "alg": "RS256", "use": "sig"}
        )
        self._impostor_key: RSAKey | None = None
        self._codes: dict[str, Grant] = {}
        self._access_tokens: dict[str, str] = {}  # access token -> user key
        self._lock = threading.Lock()
        # A short poll lets stop() return at once rather than after half a second.
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, path: str) -> str:
        return self.issuer + path

    def start(self) -> OidcProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)

    def register_client(self, client_id: str, secret: str, redirect_uri: str) -> None:
        self.clients[client_id] = {"secret": secret, "redirect_uri": redirect_uri}

    def add_user(
        self,
        key: str,
        email: str,
        groups: list[str] | None = None,
        email_verified: bool = True,
        name: str | None = None,
        sub: str | None = None,
    ) -> User:
        user: User = {
            # Stable across runs, as a real provider's subject is for one account.
            "sub": sub or "sub-" + hashlib.sha256(key.encode()).hexdigest()[:16],
            "email": email,
            "email_verified": email_verified,
            "name": name if name is not None else key.title(),
            "groups": list(groups or []),
        }
        self.users[key] = user
        return user

    def discovery(self) -> dict[str, object]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.url("/authorize"),
            "token_endpoint": self.url("/token"),
            "userinfo_endpoint": self.url("/userinfo"),
            "jwks_uri": self.url("/jwks"),
            "end_session_endpoint": self.url("/logout"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile", "groups"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }

    def jwks(self) -> dict[str, object]:
        return {"keys": [self.signing_key.as_dict(private=False)]}

    def record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    def record_logout(self, query: dict[str, str]) -> None:
        with self._lock:
            self.logouts.append(dict(query))

    def issue_code(self, grant: Grant) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = grant
        return code

    def redeem_code(self, code: str, client_id: str) -> Grant | None:
        """The code's grant, once: a code is spent by its first presentation, as real
        providers do, whether or not the rest of the request holds."""
        with self._lock:
            grant = self._codes.get(code)
            if grant is None or grant.used or grant.client_id != client_id:
                return None
            grant.used = True
            return grant

    def issue_access_token(self, user: str) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._access_tokens[token] = user
        return token

    def user_for_access_token(self, token: str) -> User | None:
        with self._lock:
            key = self._access_tokens.get(token)
        return self.users.get(key) if key is not None else None

    def user_claims(self, user: User) -> dict[str, object]:
        return {
            "sub": user["sub"],
            "email": user["email"],
            "email_verified": user["email_verified"],
            "name": user["name"],
            self.groups_claim: list(user["groups"]),
        }

    def id_token(self, grant: Grant) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": grant.client_id,
            "exp": now + TOKEN_LIFETIME_SECONDS,
            "iat": now,
            **self.user_claims(self.users[grant.user]),
        }
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        header = {"alg": "RS256", "kid": self.kid}
        key = self.signing_key
        misbehave = self.misbehave
        if misbehave is not None and misbehave not in MISBEHAVIOURS:
            raise ValueError(f"unknown misbehaviour {misbehave!r}; one of {MISBEHAVIOURS}")
        if misbehave == "wrong_signature":
            key = self.impostor_key()
        elif misbehave == "wrong_audience":
            claims["aud"] = "another-client"
        elif misbehave == "wrong_issuer":
            claims["iss"] = "http://impostor.invalid"
        elif misbehave == "expired":
            claims["iat"] -= 3600
            claims["exp"] -= 3600
        elif misbehave == "wrong_nonce":
            claims["nonce"] = "not-the-nonce-" + secrets.token_hex(4)
        elif misbehave == "no_nonce":
            claims.pop("nonce", None)
        elif misbehave == "alg_none":
            return _compact({**header, "alg": "none"}, claims, lambda _signing_input: b"")
        elif misbehave == "hs256":
            secret = self.clients[grant.client_id]["secret"].encode()
            return _compact(
                {**header, "alg": "HS256"},
                claims,
                lambda signing_input: hmac.new(secret, signing_input, hashlib.sha256).digest(),
            )
        return jwt.encode(header, claims, key)

    def impostor_key(self) -> RSAKey:
        """Another RSA key under the published kid: a client that trusts the kid alone
        would take its signature."""
        with self._lock:
            if self._impostor_key is None:
                self._impostor_key = RSAKey.generate_key(
                    2048, parameters={"kid": self.kid, "alg": "RS256", "use": "sig"}
                )
            return self._impostor_key


def start_oidc_provider() -> OidcProvider:
    return OidcProvider().start()


@pytest.fixture
def oidc_provider() -> Iterator[OidcProvider]:
    """A real OpenID Connect provider on 127.0.0.1, with no client or user yet."""
    provider = start_oidc_provider()
    yield provider
    provider.stop()


JSON = "application/json"
AUTHORIZE_PARAMETERS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "nonce",
    "code_challenge",
    "code_challenge_method",
)


class _Handler(FormHandler):
    server: OidcProvider
    max_body_bytes = MAX_BODY_BYTES

    def route(self, path: str, query: dict[str, str], form: dict[str, str]) -> Answer:
        if path == "/.well-known/openid-configuration":
            return _json(200, self.server.discovery())
        if path == "/jwks":
            return _json(200, self.server.jwks())
        if path == "/authorize":
            return self._authorize(form if self.command == "POST" else query)
        if path == "/token":
            if self.command != "POST":
                return _json(405, {"error": "invalid_request"}, {"Allow": "POST"})
            return self._token(form)
        if path == "/userinfo":
            return self._userinfo()
        if path == "/logout":
            return self._logout(query)
        return 404, b"no such page", "text/plain", {}

    def _authorize(self, params: dict[str, str]) -> Answer:
        provider = self.server
        client_id = params.get("client_id", "")
        redirect_uri = params.get("redirect_uri", "")
        client = provider.clients.get(client_id)
        # Until the redirect_uri is known to be the client's, errors stay on this page.
        if client is None:
            return page(400, "Unknown client", f"No client is registered as {client_id!r}.")
        if redirect_uri != client["redirect_uri"]:
            return page(
                400,
                "Wrong redirect_uri",
                f"redirect_uri {redirect_uri!r} is not the one registered for "
                f"{client_id!r} ({client['redirect_uri']!r}).",
            )
        state = params.get("state")
        if params.get("response_type") != "code":
            return _redirect_error(redirect_uri, "unsupported_response_type", state)
        if not params.get("code_challenge") or params.get("code_challenge_method") != "S256":
            return _redirect_error(
                redirect_uri, "invalid_request", state, "PKCE with code_challenge_method S256"
            )
        if provider.deny:
            return _redirect_error(redirect_uri, "access_denied", state, "The user said no")
        user = params.get("user") if self.command == "POST" else provider.auto_user
        if user is None:
            return _sign_in_page(provider, params)
        if user not in provider.users:
            return page(400, "Unknown user", f"No user is called {user!r}.")
        grant = Grant(
            client_id=client_id,
            redirect_uri=redirect_uri,
            nonce=params.get("nonce"),
            code_challenge=params["code_challenge"],
            user=user,
        )
        answer = {"code": provider.issue_code(grant)}
        if state is not None:
            answer["state"] = state
        return redirect(_with_query(redirect_uri, answer))

    def _token(self, form: dict[str, str]) -> Answer:
        provider = self.server
        client_id = self._authenticated_client(form)
        if form.get("grant_type") != "authorization_code":
            return _json(400, {"error": "unsupported_grant_type"})
        grant = provider.redeem_code(form.get("code", ""), client_id)
        if grant is None:
            return _invalid_grant("the code is unknown, used, or another client's")
        if form.get("redirect_uri") != grant.redirect_uri:
            return _invalid_grant("redirect_uri differs from the authorization request's")
        verifier = form.get("code_verifier", "")
        if not verifier or _s256(verifier) != grant.code_challenge:
            return _invalid_grant("code_verifier does not match the code_challenge")
        return _json(
            200,
            {
                "access_token": provider.issue_access_token(grant.user),
                "token_type": "Bearer",
                "expires_in": TOKEN_LIFETIME_SECONDS,
                "id_token": provider.id_token(grant),
            },
        )

    def _authenticated_client(self, form: dict[str, str]) -> str:
        """The client_id whose secret came with the request (Basic or in the body)."""
        authorization = self.headers.get("Authorization", "")
        if authorization.startswith("Basic "):
            try:
                decoded = base64.b64decode(authorization[6:], validate=True).decode()
                # RFC 6749 2.3.1: each half is form-encoded before being joined.
                client_id, secret = (unquote_plus(half) for half in decoded.split(":", 1))
            except ValueError:
                client_id, secret = "", ""
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        client = self.server.clients.get(client_id)
        if client is None or not hmac.compare_digest(client["secret"], secret):
            raise Refused(*_json(401, {"error": "invalid_client"}, {"WWW-Authenticate": "Basic"}))
        return client_id

    def _userinfo(self) -> Answer:
        authorization = self.headers.get("Authorization", "")
        token = authorization[7:] if authorization.startswith("Bearer ") else ""
        user = self.server.user_for_access_token(token)
        if user is None:
            return _json(
                401,
                {"error": "invalid_token"},
                {"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return _json(200, self.server.user_claims(user))

    def _logout(self, query: dict[str, str]) -> Answer:
        self.server.record_logout(query)
        back = query.get("post_logout_redirect_uri")
        if not back:
            return page(200, "Signed out", "You are signed out of the identity provider.")
        state = query.get("state")
        return redirect(_with_query(back, {"state": state} if state is not None else {}))


def _sign_in_page(provider: OidcProvider, params: dict[str, str]) -> Answer:
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(params[name])}">'
        for name in AUTHORIZE_PARAMETERS
        if name in params
    )
    forms = "".join(
        f'<form method="post" action="/authorize">{hidden}'
        f'<button type="submit" name="user" value="{html.escape(key)}">'
        f"Sign in as {html.escape(user['email'])}</button></form>"
        for key, user in provider.users.items()
    )
    return page(200, "Sign in", "Choose who you are.", forms)


def _json(status: int, payload: object, headers: dict[str, str] | None = None) -> Answer:
    return status, json.dumps(payload).encode(), JSON, headers or {}


def _invalid_grant(description: str) -> Answer:
    return _json(400, {"error": "invalid_grant", "error_description": description})


def _redirect_error(
    redirect_uri: str, error: str, state: str | None, description: str | None = None
) -> Answer:
    params = {"error": error}
    if description:
        params["error_description"] = description
    if state is not None:
        params["state"] = state
    return redirect(_with_query(redirect_uri, params))


def _with_query(url: str, params: dict[str, str]) -> str:
    """The url with params added to whatever query it already has."""
    parts = urlsplit(url)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    return urlunsplit(parts._replace(query=query))


def _s256(code_verifier: str) -> str:
    return _b64url(hashlib.sha256(code_verifier.encode("ascii", "replace")).digest())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _compact(header: dict[str, str], claims: dict[str, Any], sign: Callable[[bytes], bytes]) -> str:
    """A JWS in compact form, signed by hand: for the algorithms a provider must not use."""
    header = {"typ": "JWT", **header}
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    return f"{signing_input}.{_b64url(sign(signing_input.encode()))}"
