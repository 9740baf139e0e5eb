"""SAML 2.0 sign-in, Relevo as the service provider, through djangosaml2 and pysaml2.

pysaml2 checks each response: its signature (the assertion's, by the certificate in the
identity provider's metadata; xmlsec1 does the cryptography), that it answers a request
this browser's sign-in sent (InResponseTo; unsolicited responses are refused), that it
is for Relevo (audience) and posted to Relevo's address (recipient, destination), and
its time window (with a minute's leeway). Relevo adds what pysaml2 leaves to it: an
assertion is used once (SeenAssertion), and the person's attributes go through the same
provisioning as an OpenID Connect sign-in (provisioning.py).
"""

from __future__ import annotations

import logging
import shutil
from datetime import timedelta
from typing import Any

import saml2
from defusedxml import ElementTree
from django.conf import settings
from django.contrib.auth import login
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET
from djangosaml2.cache import IdentityCache, StateCache
from djangosaml2.utils import get_location
from djangosaml2.views import (
    AssertionConsumerServiceView,
    LoginView,
    LogoutView,
    MetadataView,
    _get_subject_id,
    _set_subject_id,
)
from saml2.client import Saml2Client
from saml2.client_base import LogoutError
from saml2.config import SPConfig
from saml2.s_utils import UnsupportedBinding
from saml2.saml import NAMEID_FORMAT_PERSISTENT

from apps.accounts.views import SIGN_OUT_URL_KEY

from .models import IdentityProvider, Protocol, SeenAssertion
from .oidc import SignInRefused
from .providers import Provider, provider_by_entity_id
from .provisioning import signed_in

logger = logging.getLogger(__name__)

MAX_METADATA_BYTES = 1_000_000
CLOCK_LEEWAY_SECONDS = 60
ASSERTION_MEMORY = timedelta(hours=24)  # longer than any assertion's window
_METADATA = "urn:oasis:names:tc:SAML:2.0:metadata"


class MetadataProblem(ValueError):
    """The identity provider's metadata cannot be used; the message says why."""


def metadata_entity_id(xml: str) -> str:
    """The entity id of an identity provider's metadata, read safely (no entities, no
    external references: defusedxml), or MetadataProblem."""
    if len(xml.encode()) > MAX_METADATA_BYTES:
        raise MetadataProblem(f"the metadata is longer than {MAX_METADATA_BYTES:,} bytes")
    try:
        root = ElementTree.fromstring(xml)
    except (ElementTree.ParseError, ValueError) as error:  # defusedxml's refusals are ValueErrors
        raise MetadataProblem(f"the metadata is not XML that can be read safely: {error}") from None
    if root.tag != f"{{{_METADATA}}}EntityDescriptor":
        raise MetadataProblem("the metadata is not an EntityDescriptor")
    if root.find(f"{{{_METADATA}}}IDPSSODescriptor") is None:
        raise MetadataProblem("the metadata describes no identity provider (IDPSSODescriptor)")
    entity_id = root.get("entityID", "")
    if not entity_id or len(entity_id) > 500:
        raise MetadataProblem("the metadata's entityID is missing or longer than 500 characters")
    return entity_id


def sp_config(request: HttpRequest | None = None) -> SPConfig:
    """djangosaml2's configuration for this request (SAML_CONFIG_LOADER): Relevo's
    addresses as the person reaches it, and every enabled SAML identity provider."""
    base = request.build_absolute_uri("/").rstrip("/") if request else ""
    metadata = list(
        IdentityProvider.objects.filter(protocol=Protocol.SAML, enabled=True).values_list(
            "saml_metadata", flat=True
        )
    )
    config = SPConfig()
    config.load(
        {
            "entityid": base + reverse("sso:saml_metadata"),
            "xmlsec_binary": shutil.which("xmlsec1"),
            "allow_unknown_attributes": True,
            "accepted_time_diff": CLOCK_LEEWAY_SECONDS,
            "service": {
                "sp": {
                    "name": "Relevo",
                    "endpoints": {
                        "assertion_consumer_service": [
                            (base + reverse("sso:saml_acs"), saml2.BINDING_HTTP_POST)
                        ],
                        "single_logout_service": [
                            (base + reverse("sso:saml_logout_service"), saml2.BINDING_HTTP_REDIRECT)
                        ],
                    },
                    "allow_unsolicited": False,
                    "authn_requests_signed": False,
                    "logout_requests_signed": bool(_signing()),
                    "want_assertions_signed": True,
                    "want_response_signed": False,
                    "name_id_format": NAMEID_FORMAT_PERSISTENT,
                }
            },
            "metadata": {"inline": metadata},
            # With a key pair of its own (SAML_SP_KEY_FILE, SAML_SP_CERT_FILE) Relevo
            # signs its sign-out requests, as most identity providers ask.
            **_signing(),
        }
    )
    return config


def _signing() -> dict[str, Any]:
    if not (settings.SAML_SP_KEY_FILE and settings.SAML_SP_CERT_FILE):
        return {}
    return {"key_file": settings.SAML_SP_KEY_FILE, "cert_file": settings.SAML_SP_CERT_FILE}


class SamlLogin(LoginView):
    config_loader_path = "apps.sso.saml.sp_config"


class SamlMetadata(MetadataView):
    """Relevo's service-provider metadata, for the identity provider to read."""

    config_loader_path = "apps.sso.saml.sp_config"


class SamlAssertionConsumer(AssertionConsumerServiceView):
    """Where the identity provider posts its response: checked by pysaml2, then once
    only, then the person provisioned and signed in as an OpenID Connect sign-in is."""

    config_loader_path = "apps.sso.saml.sp_config"
    problem = ""  # what custom_validation found, for the failure page

    def custom_validation(self, response: Any) -> None:
        # pysaml2 answers a response addressed elsewhere (its Destination) with no
        # assertion rather than an error; djangosaml2 would then fail reading it.
        if getattr(response, "assertion", None) is None:
            self.problem = "the response was sent to another address than Relevo's"
            raise PermissionDenied(self.problem)

    def authenticate_user(
        self,
        request: HttpRequest,
        session_info: dict[str, Any],
        attribute_mapping: Any,
        create_unknown_user: Any,
        assertion_info: dict[str, Any],
    ) -> Any:
        provider = provider_by_entity_id(str(session_info.get("issuer", "")))
        if provider is None:
            raise PermissionDenied("the response comes from no identity provider Relevo knows")
        try:
            _first_use(assertion_info.get("assertion_id"))
            outcome = signed_in(provider, _claims(provider, session_info))
        except SignInRefused as error:
            raise PermissionDenied(str(error)) from None
        login(request, outcome.user, backend="apps.accounts.sessions.UserBackend")
        # Signing out of Relevo goes on to sign out at the provider (saml_sign_out), with
        # the subject kept in the SAML sign-in's own session, which outlives Relevo's.
        _set_subject_id(request.saml_session, session_info["name_id"])  # type: ignore[attr-defined]
        self.request.session[SIGN_OUT_URL_KEY] = request.build_absolute_uri(
            reverse("sso:saml_sign_out")
        )
        logger.info("single sign-on: %s through %s (SAML)", outcome.user.email, provider.slug)
        return outcome.user

    def handle_acs_failure(
        self,
        request: HttpRequest,
        exception: Exception | None = None,
        status: int = 403,
        **kwargs: Any,
    ) -> HttpResponse:
        why = self.problem or _why(exception)
        logger.warning("single sign-on refused (SAML): %s", why)
        return render(request, "sso/refused.html", {"why": why}, status=status)


class SamlLogoutService(LogoutView):
    """Where the identity provider answers a sign-out (or asks for one it began)."""

    config_loader_path = "apps.sso.saml.sp_config"


@require_GET
def saml_sign_out(request: HttpRequest) -> HttpResponse:
    """After signing out of Relevo: a sign-out request to the identity provider, for the
    subject the SAML sign-in's session keeps. Only once signed out of Relevo, so a link
    on another site cannot sign someone out at their provider behind their back."""
    subject_id = _get_subject_id(request.saml_session)  # type: ignore[attr-defined]
    if request.user.is_authenticated or subject_id is None:
        return HttpResponseRedirect(reverse(settings.LOGIN_URL))
    state = StateCache(request.saml_session)  # type: ignore[attr-defined]
    client = Saml2Client(
        sp_config(request),
        state_cache=state,
        identity_cache=IdentityCache(request.saml_session),  # type: ignore[attr-defined]
    )
    try:
        result = client.global_logout(subject_id)
    except (LogoutError, UnsupportedBinding) as error:
        logger.info("SAML sign-out at the provider not possible: %s", error)
        result = {}
    state.sync()
    for outcome in result.values():
        if isinstance(outcome, tuple) and outcome[0] == saml2.BINDING_HTTP_REDIRECT:
            return HttpResponseRedirect(get_location(outcome[1]))
    return HttpResponseRedirect(reverse(settings.LOGIN_URL))


def _claims(provider: Provider, session_info: dict[str, Any]) -> dict[str, Any]:
    """The response's subject and attributes as provisioning reads an ID token's
    claims. The directory behind a SAML provider vouches for the address it sends."""
    attributes = session_info.get("ava") or {}
    name_id = session_info.get("name_id")
    subject = getattr(name_id, "text", None)
    if not isinstance(subject, str) or not 0 < len(subject) <= 255:
        raise SignInRefused("the response's NameID is missing or longer than 255 characters")
    emails = attributes.get(provider.email_attribute) or []
    names = attributes.get("displayName") or []
    return {
        "sub": subject,
        "email": emails[0] if emails else "",
        "email_verified": True,
        "name": names[0] if names else "",
        provider.groups_claim: attributes.get(provider.groups_claim, []),
    }


def _first_use(assertion_id: object) -> None:
    """Remember the assertion; one seen before is a replay."""
    if not isinstance(assertion_id, str) or not 0 < len(assertion_id) <= 255:
        raise SignInRefused("the response's assertion has no usable ID")
    now = timezone.now()
    SeenAssertion.objects.filter(forget_at__lt=now).delete()
    try:
        with transaction.atomic():
            SeenAssertion.objects.create(
                assertion_id=assertion_id, forget_at=now + ASSERTION_MEMORY
            )
    except IntegrityError:
        raise SignInRefused("this assertion was used already (a replay)") from None


def _why(exception: Exception | None) -> str:
    """What the failure page says, in words a person can pass on."""
    if isinstance(exception, PermissionDenied) and str(exception):
        return str(exception)
    name = type(exception).__name__ if exception else ""
    known = {
        "SignatureError": "the response's signature does not check against the provider's "
        "certificate",
        "UnsolicitedResponse": "the response answers no sign-in this browser began (or was "
        "used already)",
        "ResponseLifetimeExceed": "the response is too old (its time window has passed)",
        "ToEarly": "the response is not valid yet (its time window has not begun)",
        "StatusAuthnFailed": "the provider refused the sign-in",
        "StatusRequestDenied": "the provider refused the sign-in",
    }
    if name in known:
        return known[name]
    text = str(exception or "")
    if "audience" in text.lower():
        return "the response is meant for another service (its audience is not Relevo)"
    if "destination" in text.lower() or "recipient" in text.lower():
        return "the response was sent to another address than Relevo's"
    return f"the response cannot be accepted ({name or 'unknown error'})"
