"""A team's AI judges: which model grades, how it is called, and what a run may spend.

The API key is stored encrypted (apps/core/secrets.py) and never read back into a page,
an API answer, a log line or an export: what is shown is `api_key_hint`.
"""

from django.conf import settings
from django.db import models

from apps.accounts.models import Team

from .providers import Protocol


class Judge(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=16, choices=[(p.value, p.value) for p in Protocol])
    base_url = models.CharField(max_length=500)
    model_name = models.CharField(max_length=200)
    api_key_encrypted = models.TextField(blank=True)
    api_key_hint = models.CharField(max_length=16, blank=True)
    # None: the provider's default (some newer models take no temperature).
    temperature = models.FloatField(null=True, blank=True)
    timeout_seconds = models.PositiveSmallIntegerField(default=60)
    results_per_call = models.PositiveSmallIntegerField(default=10)
    calls_at_once = models.PositiveSmallIntegerField(default=4)
    max_output_tokens = models.PositiveIntegerField(default=2_000)
    structured_output = models.BooleanField(default=True)
    # A run's budget: it stops (its remaining results listed as "budget reached") at the
    # first limit reached. None: no limit of that kind.
    budget_calls = models.PositiveIntegerField(null=True, blank=True)
    budget_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    budget_cost = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    # What the provider charges, per million tokens, in the team's currency (estimates).
    price_input_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_output_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="judge_name_once_per_team"),
        ]

    def __str__(self) -> str:
        return self.name
