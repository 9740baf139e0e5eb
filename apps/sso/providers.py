"""The identity providers people can sign in with: those set up in the admin (enabled),
and one from the environment (SSO_OIDC_*), looked up by slug. A provider's secret is
decrypted only here, when a sign-in needs it."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from apps.core.secrets import decrypt_secret

from .models import IdentityProvider, Protocol


@dataclass(frozen=True)
class Provider:
    slug: str
    name: str
    issuer: str
    client_id: str
    client_secret: str
    scopes: str
    groups_claim: str
    protocol: str = Protocol.OIDC
    saml_entity_id: str = ""
    email_attribute: str = "email"


def providers() -> list[Provider]:
    """Every provider a person can sign in with, the environment's first."""
    found = [_from_environment()] if settings.SSO_OIDC_ISSUER else []
    taken = {provider.slug for provider in found}
    for row in IdentityProvider.objects.filter(enabled=True).order_by("name"):
        if row.slug not in taken:
            found.append(_from_row(row))
    return found


def provider_named(slug: str) -> Provider | None:
    if settings.SSO_OIDC_ISSUER and slug == settings.SSO_OIDC_SLUG:
        return _from_environment()
    row = IdentityProvider.objects.filter(slug=slug, enabled=True).first()
    return _from_row(row) if row else None


def provider_by_entity_id(entity_id: str) -> Provider | None:
    """The enabled SAML provider whose metadata has this entity id."""
    row = IdentityProvider.objects.filter(
        protocol=Protocol.SAML, saml_entity_id=entity_id, enabled=True
    ).first()
    return _from_row(row) if row and entity_id else None


def provider_choices() -> list[tuple[str, str]]:
    """(slug, name) of every provider, for the rules' form; no secret is read."""
    found = [(settings.SSO_OIDC_SLUG, settings.SSO_OIDC_NAME)] if settings.SSO_OIDC_ISSUER else []
    rows = IdentityProvider.objects.filter(enabled=True).order_by("name")
    return found + [(row.slug, row.name) for row in rows if row.slug not in dict(found)]


def _from_environment() -> Provider:
    return Provider(
        slug=settings.SSO_OIDC_SLUG,
        name=settings.SSO_OIDC_NAME,
        issuer=settings.SSO_OIDC_ISSUER.rstrip("/"),
        client_id=settings.SSO_OIDC_CLIENT_ID,
        client_secret=settings.SSO_OIDC_CLIENT_SECRET,
        scopes=settings.SSO_OIDC_SCOPES,
        groups_claim=settings.SSO_OIDC_GROUPS_CLAIM,
    )


def _from_row(row: IdentityProvider) -> Provider:
    return Provider(
        slug=row.slug,
        name=row.name,
        issuer=row.issuer.rstrip("/"),
        client_id=row.client_id,
        client_secret=decrypt_secret(row.client_secret) if row.client_secret else "",
        scopes=row.scopes,
        groups_claim=row.groups_claim,
        protocol=row.protocol,
        saml_entity_id=row.saml_entity_id,
        email_attribute=row.email_attribute,
    )
