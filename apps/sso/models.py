"""Single sign-on's tables: the identity providers the deployment trusts, who signed in
through which (their subject at the provider), and the rules a team's owner writes to
turn a provider's groups into the team's members."""

from django.conf import settings
from django.db import models

from apps.accounts.models import Role, Team


class Protocol(models.TextChoices):
    OIDC = "oidc", "OpenID Connect"
    SAML = "saml", "SAML 2.0"


class IdentityProvider(models.Model):
    """An identity provider the deployment's administrator set up (in the admin; an
    OpenID Connect one can also come from the environment: providers.py). A client
    secret is kept encrypted (apps/core/secrets.py) and shown only by its last four
    characters."""

    slug = models.SlugField(max_length=40, unique=True, help_text="in its URLs: /sso/<slug>/")
    name = models.CharField(max_length=100, help_text='on the button: "Sign in with <name>"')
    protocol = models.CharField(max_length=8, choices=Protocol.choices, default=Protocol.OIDC)
    # OpenID Connect: where its discovery document is, and Relevo's client there.
    issuer = models.URLField(
        max_length=500,
        blank=True,
        help_text="OpenID Connect: the provider's issuer; its discovery document is read "
        "from <issuer>/.well-known/openid-configuration",
    )
    client_id = models.CharField(max_length=255, blank=True)
    client_secret = models.TextField(blank=True)  # encrypted
    secret_hint = models.CharField(max_length=8, blank=True)
    scopes = models.CharField(max_length=255, default="openid email profile")
    groups_claim = models.CharField(
        max_length=100,
        default="groups",
        help_text="the claim (SAML: the attribute) that lists a person's groups",
    )
    # SAML 2.0: the identity provider's metadata (its entity id, sign-in address and
    # signing certificate), as it publishes it; the entity id is read from it.
    saml_metadata = models.TextField(blank=True)
    saml_entity_id = models.CharField(max_length=500, blank=True, db_index=True)
    email_attribute = models.CharField(
        max_length=100, default="email", help_text="SAML: the attribute holding the e-mail"
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SsoIdentity(models.Model):
    """A person as a provider knows them: its stable subject, linked to one account."""

    provider = models.CharField(max_length=40)  # the provider's slug
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities"
    )
    groups = models.JSONField(default=list, blank=True)  # as of the last sign-in
    last_signed_in_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "subject"], name="sso_identity_once"),
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.provider}"


class SignOnRule(models.Model):
    """Whoever signs in through `provider` with `value` among their groups is a member
    of the team with `role` (the highest role when several rules match)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="sign_on_rules")
    provider = models.CharField(max_length=40)  # the provider's slug
    group = models.CharField(max_length=255)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EVALUATOR)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_matched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["provider", "group"]
        constraints = [
            models.UniqueConstraint(fields=["team", "provider", "group"], name="sign_on_rule_once"),
        ]

    def __str__(self) -> str:
        return f"{self.group} at {self.provider}: {self.role}"


class SeenAssertion(models.Model):
    """A SAML assertion already used to sign in: the same one posted again is a replay.
    Kept a day, longer than any assertion's time window."""

    assertion_id = models.CharField(max_length=255, unique=True)
    forget_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.assertion_id
