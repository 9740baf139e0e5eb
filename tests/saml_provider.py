"""A real SAML 2.0 identity provider on 127.0.0.1 for tests of single sign-on.

pysaml2's own identity provider (``saml2.server.Server``) reads the requests and writes the
answers, signed by the ``xmlsec1`` binary with a key and self-signed certificate made at
start, so a service provider pointed at ``provider.metadata_url`` meets what a real one
sends:

- ``/metadata``: the provider's metadata (entity id, signing certificate, endpoints);
- ``/sso/redirect`` (HTTP-Redirect) and ``/sso/post`` (HTTP-POST): take an AuthnRequest from
  a registered service provider and show one button per user; ``auto_user`` skips the page.
  AuthnRequest signatures are not checked;
- ``/sso/choose``: the button's target; answers a page whose form posts a signed Response
  to the service provider's assertion consumer service, submitted at once by a script;
- ``/slo/redirect``: records a LogoutRequest in ``logouts`` and redirects to the service
  provider's logout URL with a LogoutResponse (or says "Signed out" when it has none).

Assertions carry a persistent NameID and the attributes ``email``, ``groups`` (several
values) and ``displayName`` under those names (unspecified name format: a pysaml2 service
provider keeps them only with ``allow_unknown_attributes``).

Tests register the service provider and users, then script failures: ``misbehave`` spoils
one aspect of the Responses (see MISBEHAVIOURS), ``deny`` answers AuthnFailed. Every request
is recorded as (method, path) in ``requests``. ``posted_form`` reads an answer page back.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypedDict
from xml.sax.saxutils import quoteattr

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, class_name, samlp
from saml2.authn_context import PASSWORDPROTECTEDTRANSPORT
from saml2.config import IdPConfig
from saml2.metadata import entity_descriptor, metadata_tostring_fix
from saml2.saml import (
    NAME_FORMAT_UNSPECIFIED,
    NAMEID_FORMAT_PERSISTENT,
    Attribute,
    AttributeStatement,
    AttributeValue,
    NameID,
)
from saml2.server import Server
from saml2.sigver import pre_signature_part
from saml2.time_util import in_a_while
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from conftest import service_missing
from tests.form_server import Answer, FormHandler, Refused, page, redirect

MAX_BODY_BYTES = 1024 * 1024
ASSERTION_LIFETIME_MINUTES = 5
LIFETIME = {"minutes": ASSERTION_LIFETIME_MINUTES}  # of assertions, in pysaml2's policy terms
# Each one changes a single aspect of the Responses the provider issues.
MISBEHAVIOURS = (
    "wrong_signature",  # signed by another key, whose certificate the metadata does not hold
    "unsigned",  # neither the Response nor its Assertion signed
    "wrong_audience",
    "wrong_recipient",  # Destination and Recipient another service's address
    "expired",  # the conditions and the subject confirmation ended an hour ago
    "not_yet_valid",  # the conditions begin an hour from now
    "wrong_in_response_to",  # an id no request had
    "unsolicited",  # no InResponseTo at all
)
ANOTHER_SP = "https://another-service.example"
SAML_METADATA = "urn:oasis:names:tc:SAML:2.0:metadata"
SAML_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"


@dataclass(frozen=True)
class ServiceProvider:
    entity_id: str
    acs_url: str
    slo_url: str | None

    def metadata_xml(self) -> str:
        """Just what the identity provider needs to answer it: where Responses go, where
        logouts return, the NameID format."""
        logout = (
            f"<md:SingleLogoutService Binding={quoteattr(BINDING_HTTP_REDIRECT)}"
            f" Location={quoteattr(self.slo_url)}/>"
            if self.slo_url
            else ""
        )
        return (
            f'<md:EntityDescriptor xmlns:md="{SAML_METADATA}" entityID={quoteattr(self.entity_id)}>'
            f'<md:SPSSODescriptor protocolSupportEnumeration="{SAML_PROTOCOL}"'
            ' AuthnRequestsSigned="false" WantAssertionsSigned="true">'
            f"{logout}<md:NameIDFormat>{NAMEID_FORMAT_PERSISTENT}</md:NameIDFormat>"
            f"<md:AssertionConsumerService Binding={quoteattr(BINDING_HTTP_POST)}"
            f' Location={quoteattr(self.acs_url)} index="0" isDefault="true"/>'
            "</md:SPSSODescriptor></md:EntityDescriptor>"
        )


class User(TypedDict):
    name_id: str
    email: str
    name: str
    groups: list[str]


@dataclass(frozen=True)
class SignIn:
    """An AuthnRequest as the provider read it: what its Response must answer."""

    request_id: str | None
    sp: ServiceProvider
    relay_state: str | None


@dataclass(frozen=True)
class KeyPair:
    key_file: str
    cert_file: str

    def certificate_base64(self) -> str:
        """The certificate's DER in base64, as a signature's KeyInfo carries it."""
        pem = Path(self.cert_file).read_text()
        return "".join(line for line in pem.splitlines() if "-----" not in line)


class SamlProvider(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.sps: dict[str, ServiceProvider] = {}
        self.users: dict[str, User] = {}
        self.auto_user: str | None = None
        self.deny = False
        self.misbehave: str | None = None
        self.requests: list[tuple[str, str]] = []
        self.logouts: list[dict[str, str]] = []
        self._directory = Path(tempfile.mkdtemp(prefix="relevo-saml-idp-"))
        self.keys = _new_key_pair(self._directory, "idp")
        self._impostor_keys: KeyPair | None = None
        # pysaml2's Server is not known to be thread-safe; one message at a time.
        self._lock = threading.RLock()
        self._server = self._new_server()
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def entity_id(self) -> str:
        return self.url("/metadata")

    @property
    def metadata_url(self) -> str:
        return self.url("/metadata")

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> SamlProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)
        shutil.rmtree(self._directory, ignore_errors=True)

    def register_sp(self, entity_id: str, acs_url: str, slo_url: str | None = None) -> None:
        with self._lock:
            self.sps[entity_id] = ServiceProvider(entity_id, acs_url, slo_url)
            self._server = self._new_server()

    def add_user(
        self,
        key: str,
        email: str,
        groups: list[str] | None = None,
        name: str | None = None,
        name_id: str | None = None,
    ) -> User:
        user: User = {
            # Stable across runs, as a real provider's persistent id is for one account.
            "name_id": name_id or "pid-" + hashlib.sha256(key.encode()).hexdigest()[:24],
            "email": email,
            "name": name if name is not None else key.title(),
            "groups": list(groups or []),
        }
        self.users[key] = user
        return user

    def metadata_xml(self) -> str:
        with self._lock:
            descriptor = entity_descriptor(self._server.config)
        xml = metadata_tostring_fix(descriptor, {"xs": "http://www.w3.org/2001/XMLSchema"})
        return xml.decode() if isinstance(xml, bytes) else xml

    def record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    def read_authn_request(self, encoded: str, binding: str, relay_state: str | None) -> SignIn:
        with self._lock:
            try:
                request = self._server.parse_authn_request(encoded, binding)
            except Exception as error:
                raise Refused(*page(400, "Unreadable AuthnRequest", str(error))) from None
        if request is None:
            raise Refused(*page(400, "Unreadable AuthnRequest", "pysaml2 refused it."))
        message = request.message
        sp = self.registered_sp(message.issuer.text if message.issuer is not None else None)
        acs_url = message.assertion_consumer_service_url
        if acs_url and acs_url != sp.acs_url:
            raise Refused(
                *page(
                    400,
                    "Unknown AssertionConsumerServiceURL",
                    f"{acs_url!r} is not the one registered for {sp.entity_id!r} ({sp.acs_url!r}).",
                )
            )
        return SignIn(request_id=message.id, sp=sp, relay_state=relay_state)

    def response_xml(self, sign_in: SignIn, user_key: str | None) -> str:
        """The signed Response to the sign-in for the user (AuthnFailed when ``deny``)."""
        misbehave = self.misbehave
        if misbehave is not None and misbehave not in MISBEHAVIOURS:
            raise ValueError(f"unknown misbehaviour {misbehave!r}; one of {MISBEHAVIOURS}")
        with self._lock:
            if self.deny or user_key is None:
                response = self._server.create_error_response(
                    sign_in.request_id,
                    sign_in.sp.acs_url,
                    (samlp.STATUS_AUTHN_FAILED, "The user did not sign in"),
                    sign=False,
                )
                return self._signed(response, None, misbehave)
            user = self.users[user_key]
            response = self._server.create_authn_response(
                identity={},
                in_response_to=sign_in.request_id,
                destination=sign_in.sp.acs_url,
                sp_entity_id=sign_in.sp.entity_id,
                name_id=NameID(
                    format=NAMEID_FORMAT_PERSISTENT,
                    name_qualifier=self.entity_id,
                    sp_name_qualifier=sign_in.sp.entity_id,
                    text=user["name_id"],
                ),
                authn={"class_ref": PASSWORDPROTECTEDTRANSPORT},
                sign_response=False,
                sign_assertion=False,
            )
            assertion = response.assertion
            assertion.attribute_statement = [_attribute_statement(user)]
            _spoil(response, assertion, misbehave)
            return self._signed(response, assertion, misbehave)

    def log_out(self, query: dict[str, str]) -> Answer:
        relay_state = query.get("RelayState")
        with self._lock:
            try:
                request = self._server.parse_logout_request(
                    query.get("SAMLRequest", ""), BINDING_HTTP_REDIRECT
                )
            except Exception as error:
                return page(400, "Unreadable LogoutRequest", str(error))
            if request is None:
                return page(400, "Unreadable LogoutRequest", "pysaml2 refused it.")
            message = request.message
            issuer = message.issuer.text if message.issuer is not None else ""
            sp = self.registered_sp(issuer)
            name_id = message.name_id.text if message.name_id is not None else ""
            self.logouts.append({"issuer": issuer, "name_id": name_id})
            if not sp.slo_url:
                return page(200, "Signed out", "You are signed out of the identity provider.")
            response = self._server.create_logout_response(
                message, [BINDING_HTTP_REDIRECT], sign=False
            )
            # The HTTP-Redirect binding signs the query rather than the XML.
            binding = self._server.apply_binding(
                BINDING_HTTP_REDIRECT,
                str(response),
                destination=sp.slo_url,
                relay_state=relay_state or "",
                response=True,
                sign=True,
                sigalg=SIG_RSA_SHA256,
            )
        return redirect(dict(binding["headers"])["Location"])

    def registered_sp(self, entity_id: str | None) -> ServiceProvider:
        sp = self.sps.get(entity_id or "")
        if sp is None:
            raise Refused(
                *page(400, "Unknown service provider", f"No SP is registered as {entity_id!r}.")
            )
        return sp

    def _signed(self, response: Any, assertion: Any, misbehave: str | None) -> str:
        """The Response as XML, its Assertion signed first, then the Response around it."""
        if misbehave == "unsigned":
            return str(response)
        keys = self._impostor() if misbehave == "wrong_signature" else self.keys
        certificate = keys.certificate_base64()
        parts = [assertion, response] if assertion is not None else [response]
        for number, part in enumerate(parts, 1):
            part.signature = pre_signature_part(
                part.id, certificate, number, digest_alg=DIGEST_SHA256, sign_alg=SIG_RSA_SHA256
            )
        xml = response.to_string().decode()
        for part in parts:
            xml = self._server.sec.sign_statement(
                xml, class_name(part), key_file=keys.key_file, node_id=part.id
            )
        return xml

    def _impostor(self) -> KeyPair:
        if self._impostor_keys is None:
            self._impostor_keys = _new_key_pair(self._directory, "impostor")
        return self._impostor_keys

    def _new_server(self) -> Server:
        config = IdPConfig()
        config.load(
            {
                "entityid": self.entity_id,
                "xmlsec_binary": shutil.which("xmlsec1"),
                "key_file": self.keys.key_file,
                "cert_file": self.keys.cert_file,
                "metadata": {"inline": [sp.metadata_xml() for sp in self.sps.values()]},
                "service": {
                    "idp": {
                        "name": "Relevo test identity provider",
                        "endpoints": {
                            "single_sign_on_service": [
                                (self.url("/sso/redirect"), BINDING_HTTP_REDIRECT),
                                (self.url("/sso/post"), BINDING_HTTP_POST),
                            ],
                            "single_logout_service": [
                                (self.url("/slo/redirect"), BINDING_HTTP_REDIRECT),
                            ],
                        },
                        "name_id_format": [NAMEID_FORMAT_PERSISTENT],
                        "policy": {
                            "default": {"lifetime": {"minutes": ASSERTION_LIFETIME_MINUTES}}
                        },
                        "want_authn_requests_signed": False,
                    }
                },
            }
        )
        return Server(config=config)


def start_saml_provider() -> SamlProvider:
    return SamlProvider().start()


@pytest.fixture
def saml_provider() -> Iterator[SamlProvider]:
    """A real SAML 2.0 identity provider on 127.0.0.1, with no SP or user yet."""
    if shutil.which("xmlsec1") is None:
        service_missing("xmlsec1 (apt-get install xmlsec1) for SAML signatures")
    provider = start_saml_provider()
    yield provider
    provider.stop()


def posted_form(page: str) -> tuple[str, dict[str, str]]:
    """The first form of an answer page: where it posts, and its fields' names and values."""
    parser = _FormReader()
    parser.feed(page)
    if parser.action is None:
        raise ValueError("the page holds no form")
    return parser.action, parser.fields


def _new_key_pair(directory: Path, name: str) -> KeyPair:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Relevo test IdP ({name})")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    key_file, cert_file = directory / f"{name}.key", directory / f"{name}.crt"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return KeyPair(str(key_file), str(cert_file))


def _attribute_statement(user: User) -> AttributeStatement:
    """email, groups and displayName under those very names, as many real providers send
    custom attributes: pysaml2 on the SP side keeps them only with allow_unknown_attributes
    (no attribute map of its own names groups)."""
    values = {"email": [user["email"]], "groups": user["groups"], "displayName": [user["name"]]}
    return AttributeStatement(
        attribute=[
            Attribute(
                name=name,
                name_format=NAME_FORMAT_UNSPECIFIED,
                attribute_value=[_string_value(value) for value in listed],
            )
            for name, listed in values.items()
        ]
    )


def _string_value(text: str) -> AttributeValue:
    value = AttributeValue()
    value.set_text(text)  # also types it xs:string
    return value


def _spoil(response: Any, assertion: Any, misbehave: str | None) -> None:
    confirmation = assertion.subject.subject_confirmation[0].subject_confirmation_data
    conditions = assertion.conditions
    if misbehave == "wrong_audience":
        conditions.audience_restriction[0].audience[0].text = ANOTHER_SP + "/metadata"
    elif misbehave == "wrong_recipient":
        response.destination = confirmation.recipient = ANOTHER_SP + "/acs"
    elif misbehave == "expired":
        conditions.not_before = in_a_while(minutes=-60 - ASSERTION_LIFETIME_MINUTES)
        conditions.not_on_or_after = confirmation.not_on_or_after = in_a_while(minutes=-60)
    elif misbehave == "not_yet_valid":
        conditions.not_before = in_a_while(minutes=60)
        conditions.not_on_or_after = in_a_while(minutes=60 + ASSERTION_LIFETIME_MINUTES)
    elif misbehave == "wrong_in_response_to":
        response.in_response_to = confirmation.in_response_to = "id-" + secrets.token_hex(16)
    elif misbehave == "unsolicited":
        response.in_response_to = confirmation.in_response_to = None


SIGN_IN_FIELDS = ("request_id", "sp", "acs_url", "relay_state")


class _Handler(FormHandler):
    server: SamlProvider
    max_body_bytes = MAX_BODY_BYTES

    def route(self, path: str, query: dict[str, str], form: dict[str, str]) -> Answer:
        provider = self.server
        if path == "/metadata":
            return 200, provider.metadata_xml().encode(), "application/samlmetadata+xml", {}
        if path == "/sso/redirect":
            return self._sign_in(query, BINDING_HTTP_REDIRECT)
        if path == "/sso/post":
            if self.command != "POST":
                return 405, b"POST only", "text/plain", {"Allow": "POST"}
            return self._sign_in(form, BINDING_HTTP_POST)
        if path == "/sso/choose":
            if self.command != "POST":
                return 405, b"POST only", "text/plain", {"Allow": "POST"}
            return self._choose(form)
        if path == "/slo/redirect":
            return provider.log_out(query)
        return 404, b"no such page", "text/plain", {}

    def _sign_in(self, params: dict[str, str], binding: str) -> Answer:
        provider = self.server
        if "SAMLRequest" not in params:
            return page(400, "No SAMLRequest", "The request carries no SAMLRequest.")
        sign_in = provider.read_authn_request(
            params["SAMLRequest"], binding, params.get("RelayState")
        )
        if provider.deny:
            return _auto_submit_page(sign_in, provider.response_xml(sign_in, None))
        if provider.auto_user is not None:
            return _auto_submit_page(sign_in, provider.response_xml(sign_in, provider.auto_user))
        return _choose_page(provider, sign_in)

    def _choose(self, form: dict[str, str]) -> Answer:
        provider = self.server
        sp = provider.registered_sp(form.get("sp"))
        if form.get("acs_url") != sp.acs_url:
            return page(400, "Wrong ACS URL", f"{form.get('acs_url')!r} is not {sp.acs_url!r}.")
        user = form.get("user", "")
        if user not in provider.users:
            return page(400, "Unknown user", f"No user is called {user!r}.")
        sign_in = SignIn(
            request_id=form.get("request_id") or None,
            sp=sp,
            relay_state=form.get("relay_state"),
        )
        return _auto_submit_page(sign_in, provider.response_xml(sign_in, user))


def _choose_page(provider: SamlProvider, sign_in: SignIn) -> Answer:
    values = {
        "request_id": sign_in.request_id or "",
        "sp": sign_in.sp.entity_id,
        "acs_url": sign_in.sp.acs_url,
    }
    if sign_in.relay_state is not None:
        values["relay_state"] = sign_in.relay_state
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
        for name, value in values.items()
    )
    forms = "".join(
        f'<form method="post" action="/sso/choose">{hidden}'
        f'<button type="submit" name="user" value="{html.escape(key)}">'
        f"Sign in as {html.escape(user['email'])}</button></form>"
        for key, user in provider.users.items()
    )
    return page(200, "Sign in", "Choose who you are.", forms)


def _auto_submit_page(sign_in: SignIn, response_xml: str) -> Answer:
    """The HTTP-POST binding's page: a form to the ACS, posted by a script at once."""
    fields = {"SAMLResponse": base64.b64encode(response_xml.encode()).decode()}
    if sign_in.relay_state is not None:
        fields["RelayState"] = sign_in.relay_state
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
        for name, value in fields.items()
    )
    form = (
        f'<form method="post" action="{html.escape(sign_in.sp.acs_url)}">{hidden}'
        '<button type="submit">Continue</button></form>'
        "<script>document.forms[0].submit()</script>"
    )
    return page(200, "Signing in", "Taking you back to the service.", form)


class _FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_first_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = attributes.get("action", "")
            self._in_first_form = True
        elif tag == "input" and self._in_first_form and attributes.get("name"):
            self.fields[attributes["name"]] = attributes.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_first_form = False
