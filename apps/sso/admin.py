"""The identity providers, set up by whoever runs Relevo. The client secret is typed
into a field that never shows it again and is kept encrypted."""

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.core.secrets import encrypt_secret

from .models import IdentityProvider, Protocol, SignOnRule, SsoIdentity
from .saml import MetadataProblem, metadata_entity_id

MAX_SECRET = 1000


class IdentityProviderForm(forms.ModelForm):  # type: ignore[type-arg]
    issuer = forms.URLField(
        max_length=500,
        required=False,
        assume_scheme="https",
        help_text="the provider's issuer; its discovery document is read from "
        "<issuer>/.well-known/openid-configuration",
    )
    new_client_secret = forms.CharField(
        required=False,
        max_length=MAX_SECRET,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to keep the one saved.",
    )

    class Meta:
        model = IdentityProvider
        fields = [
            "slug",
            "name",
            "protocol",
            "issuer",
            "client_id",
            "scopes",
            "saml_metadata",
            "email_attribute",
            "groups_claim",
            "enabled",
        ]
        help_texts = {
            "saml_metadata": "SAML: the identity provider's metadata XML, as it publishes it",
        }

    def clean_slug(self) -> str:
        slug = str(self.cleaned_data["slug"])
        if slug == "saml":  # /sso/saml/... are SAML's own addresses
            raise forms.ValidationError("This name is taken by Relevo's SAML addresses.")
        return slug

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("protocol") == Protocol.SAML:
            try:
                self.instance.saml_entity_id = metadata_entity_id(data.get("saml_metadata") or "")
            except MetadataProblem as problem:
                self.add_error("saml_metadata", str(problem))
        else:
            for field in ("issuer", "client_id"):
                if not data.get(field):
                    self.add_error(field, "An OpenID Connect provider needs it.")
        return data


@admin.register(IdentityProvider)
class IdentityProviderAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = IdentityProviderForm
    list_display = ["name", "slug", "protocol", "issuer", "saml_entity_id", "enabled"]
    readonly_fields = ["secret_hint", "saml_entity_id"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        secret = form.cleaned_data.get("new_client_secret") or ""
        if secret:
            obj.client_secret = encrypt_secret(secret)
            obj.secret_hint = secret[-4:]
        super().save_model(request, obj, form, change)


@admin.register(SignOnRule)
class SignOnRuleAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["team", "provider", "group", "role", "last_matched_at"]
    list_filter = ["provider"]


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["user", "provider", "subject", "last_signed_in_at"]
    readonly_fields = ["groups"]
