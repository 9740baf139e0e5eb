"""Search endpoints and search models, as a team lead configures them.

Header and parameter lists are stored as JSON lists of ``[name, value]`` pairs, not
objects: a name may repeat (two ``Accept`` values, a repeated ``fq`` parameter) and
order matters to some search APIs. Headers are kept encrypted (apps/core/encrypted_json.py):
they often carry the search API's credentials.
"""

from django.conf import settings
from django.db import models

from apps.accounts.models import Tag, Team
from apps.core.encrypted_json import EncryptedJSONField

from .name_value_lines import shown_headers


class HttpMethod(models.TextChoices):
    GET = "GET", "GET"
    POST = "POST", "POST"
    PUT = "PUT", "PUT"


class BodyType(models.TextChoices):
    JSON = "json", "JSON"
    FORM = "form", "Form (x-www-form-urlencoded)"
    TEXT = "text", "Plain text"


class _NamedWithHeaders:
    """What the endpoint and the model share on their pages: a name, and headers to show."""

    name: str
    headers: list[list[str]]

    def __str__(self) -> str:
        return self.name

    @property
    def headers_shown(self) -> list[tuple[str, str]]:
        return shown_headers(self.headers)


class SearchEndpoint(_NamedWithHeaders, models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="search_endpoints")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    method = models.CharField(max_length=8, choices=HttpMethod.choices, default=HttpMethod.GET)
    url = models.CharField(max_length=2000)
    # Often a credential (Authorization, an API key): encrypted at rest.
    headers = EncryptedJSONField(default=list, blank=True, help_text="[[name, value], ...]")
    timeout_seconds = models.FloatField(default=10.0)
    # The declarative response mapper (see apps.search.mapper), checked on save.
    mapper = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="search_endpoint_unique_name"),
            models.CheckConstraint(
                condition=models.Q(timeout_seconds__gt=0, timeout_seconds__lte=120),
                name="search_endpoint_timeout_range",
            ),
        ]


class SearchModel(_NamedWithHeaders, models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="search_models")
    endpoint = models.ForeignKey(
        SearchEndpoint, on_delete=models.PROTECT, related_name="search_models"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    params = models.JSONField(default=list, blank=True, help_text="[[name, value], ...]")
    # Added to the endpoint's headers; a name given here replaces the endpoint's. Encrypted
    # at rest, as the endpoint's.
    headers = EncryptedJSONField(default=list, blank=True, help_text="[[name, value], ...]")
    body = models.TextField(blank=True, help_text="body template with #query#")
    body_type = models.CharField(max_length=8, choices=BodyType.choices, default=BodyType.JSON)
    default_keywords = models.TextField(blank=True, help_text="one keyword per line")
    tags = models.ManyToManyField(Tag, blank=True, related_name="search_models")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="search_model_unique_name"),
        ]
