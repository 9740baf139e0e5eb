"""How often API clients may call, and the guard against guessing tokens.

Rates (REST_FRAMEWORK's DEFAULT_THROTTLE_RATES, env THROTTLE_API_*, docs/security.md):

- "token": requests per team API token. Generous (thousands a minute): it keeps one
  runaway integration from taking every worker, not real integrations from working.
- "anon": requests without a token to what answers without one (the schema, the docs).

A caller over its rate gets 429 with Retry-After and the API's usual error body
(apps/api/errors.py). Invalid tokens are limited apart, per address, by the
authentication itself (apps/api/authentication.py).

DRF's own SimpleRateThrottle keeps every request's time in the cache (thousands of them
per token at these rates, rewritten on each request); these count in fixed windows with
apps.core.ratelimit, one number per token, failing open when Redis is down.
"""

from typing import Any

from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from apps.core.ratelimit import Verdict, client_address, hit

from .authentication import TeamClient


class _RateThrottle(BaseThrottle):
    scope = ""

    def __init__(self) -> None:
        self.verdict: Verdict | None = None

    def ident(self, request: Any) -> str | None:
        """Whom this throttle counts the request against; None: not its kind of request."""
        raise NotImplementedError

    def allow_request(self, request: Any, view: Any) -> bool:
        # Read on every request, not once at import as DRF's throttles do, so a changed
        # setting (a test's override) takes effect at once.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        ident = self.ident(request)
        if not rate or ident is None:
            return True
        self.verdict = hit(f"api_{self.scope}", ident, rate)
        return self.verdict.allowed

    def wait(self) -> float | None:
        return self.verdict.retry_after if self.verdict else None


class TokenRateThrottle(_RateThrottle):
    """Requests per team API token."""

    scope = "token"

    def ident(self, request: Any) -> str | None:
        client = request.user
        return str(client.token.pk) if isinstance(client, TeamClient) else None


class AnonymousRateThrottle(_RateThrottle):
    """Requests without a token, per client address."""

    scope = "anon"

    def ident(self, request: Any) -> str | None:
        return None if isinstance(request.user, TeamClient) else client_address(request)
