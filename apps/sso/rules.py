"""The rules a team's owner writes: which provider groups make whom a member, with what
role; and whether the team's members must sign in through the provider."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from apps.accounts.models import Membership, Team, User
from apps.core.errors import InvalidInput

from .models import SignOnRule
from .providers import provider_choices
from .provisioning import MAX_GROUP_LENGTH, RULE_ROLES

MAX_RULES = 200


def rule_add(*, team: Team, user: User | None, provider: Any, group: Any, role: Any) -> SignOnRule:
    problems: list[str] = []
    if provider not in dict(provider_choices()):
        problems.append("provider: choose one of the identity providers")
    text = group.strip() if isinstance(group, str) else ""
    if not text or len(text) > MAX_GROUP_LENGTH or "\x00" in text:
        problems.append(f"group: a group name of 1 to {MAX_GROUP_LENGTH} characters")
    if role not in RULE_ROLES:
        problems.append("role: Admin or Evaluator (a team has one owner, made by hand)")
    if SignOnRule.objects.filter(team=team).count() >= MAX_RULES:
        problems.append(f"group: a team has at most {MAX_RULES} rules")
    if problems:
        raise InvalidInput(problems)
    try:
        with transaction.atomic():
            return SignOnRule.objects.create(
                team=team, provider=provider, group=text, role=role, created_by=user
            )
    except IntegrityError:
        raise InvalidInput([f"group: the team has a rule for {text!r} already"]) from None


def rule_delete(*, rule: SignOnRule) -> None:
    """The rule goes; the memberships it gave go at their people's next sign-in."""
    rule.delete()


def sso_required_set(*, team: Team, required: bool) -> Team:
    if required and not provider_choices():
        raise InvalidInput(["sso_required: no identity provider is set up for Relevo yet"])
    Team.objects.filter(id=team.id).update(sso_required=required)
    team.sso_required = required
    return team


def rule_members(team: Team) -> int:
    """How many of the team's members a rule gave their place."""
    return Membership.objects.filter(team=team, granted_by_rule=True).count()
