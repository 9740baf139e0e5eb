"""Bearer authentication with team API tokens: a request acts for the token's team."""

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from apps.accounts.api_tokens import api_token_check
from apps.accounts.models import ApiToken, Team
from apps.core.ratelimit import check, client_address, hit


@dataclass(frozen=True)
class TeamClient:
    """The caller of an API request: an integration acting for one team."""

    team: Team
    token: ApiToken
    is_authenticated: bool = True
    is_active: bool = True

    @property
    def team_id(self) -> int:
        return self.team.id


class TeamTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[TeamClient, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode(errors="replace")
        if not header:
            return None
        refuse_while_guessing(request)
        scheme, _, text = header.partition(" ")
        # The scheme is case-insensitive (RFC 9110 section 11.1): "bearer" works too.
        if scheme.lower() != self.keyword.lower() or not text.strip():
            count_invalid_token(request)
            raise exceptions.AuthenticationFailed(
                "Send the token as 'Authorization: Bearer <token>'."
            )
        token = api_token_check(text)
        if token is None:
            count_invalid_token(request)
            raise exceptions.AuthenticationFailed("This token is not valid or was revoked.")
        return TeamClient(team=token.team, token=token), token

    def authenticate_header(self, request: Any) -> str:
        # Makes DRF answer 401 (not 403) with a WWW-Authenticate header when it is missing.
        return f'{self.keyword} realm="api"'


def refuse_while_guessing(request: Any) -> None:
    """429 to an address that sent THROTTLE_API_TOKEN_FAILURES_PER_ADDRESS invalid tokens
    lately, before its next token is even looked at: a guess that would be right is
    refused too, so guessing gets nowhere (docs/security.md)."""
    verdict = check("api_token_failures", client_address(request))
    if not verdict.allowed:
        raise exceptions.Throttled(
            wait=verdict.retry_after,
            detail="Too many invalid tokens were sent from this address.",
        )


def count_invalid_token(request: Any) -> None:
    hit("api_token_failures", client_address(request))


class PageVisitor(authentication.BaseAuthentication):
    """For the docs page: keeps the visitor Django already knows (or the anonymous one).

    Without it DRF sets `request.user` to None (UNAUTHENTICATED_USER), and the page's
    template context (the team switcher) failed on `request.user.is_authenticated`.
    """

    def authenticate(self, request: Any) -> tuple[Any, None]:
        user = getattr(request._request, "user", None)
        return (user if user is not None else AnonymousUser()), None


class HasTeamToken(permissions.BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, TeamClient)


class TeamTokenScheme(OpenApiAuthenticationExtension):
    target_class = "apps.api.authentication.TeamTokenAuthentication"
    name = "teamToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A team API token (Team > API tokens, or `manage.py create_api_token`).",
        }
