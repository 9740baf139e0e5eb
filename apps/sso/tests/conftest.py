import httpx
import pytest
from django.core.cache import cache
from django.test import Client

from apps.core.secrets import encrypt_secret
from apps.sso.models import IdentityProvider

CLIENT_ID = "relevo"
CLIENT_SECRET = "a-client-secret-9f2c"
CALLBACK = "http://testserver/sso/okta/callback/"


@pytest.fixture
def idp(settings, db):
    """A real OpenID Connect provider on 127.0.0.1 (tests/oidc_provider.py), set up in
    Relevo as "Okta", its secret encrypted as the admin keeps it."""
    from tests.oidc_provider import start_oidc_provider

    settings.SSO_ALLOW_PRIVATE_ADDRESSES = True
    cache.clear()
    provider = start_oidc_provider()
    provider.register_client(CLIENT_ID, CLIENT_SECRET, CALLBACK)
    IdentityProvider.objects.create(
        slug="okta",
        name="Okta",
        issuer=provider.issuer,
        client_id=CLIENT_ID,
        client_secret=encrypt_secret(CLIENT_SECRET),
        secret_hint=CLIENT_SECRET[-4:],
    )
    yield provider
    provider.stop()


def sign_in(idp, person: str, *, client: Client | None = None, next_url: str = ""):
    """The whole way: Relevo sends the browser to the provider, the provider signs
    `person` in and sends it back. Answers Relevo's last answer and the client."""
    client = client or Client()
    idp.auto_user = person
    query = f"?next={next_url}" if next_url else ""
    to_provider = client.get(f"/sso/okta/login/{query}")
    assert to_provider.status_code == 302, to_provider.content.decode()
    back = httpx.get(to_provider["Location"])
    assert back.status_code == 302, back.text
    callback = httpx.URL(back.headers["location"])
    assert callback.path == "/sso/okta/callback/"
    return client.get(callback.path, dict(callback.params)), client
