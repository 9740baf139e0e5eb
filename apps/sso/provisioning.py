"""Who a single sign-on makes of a person: their account (made at their first sign-in,
or an existing one with the same verified e-mail address), and their memberships from
the teams' rules, applied again at every sign-in.

A rule gives whoever has its group at the provider a place in its team, with its role
(the highest, when several rules of a team match). A membership a rule gave follows the
rules: its role changes with them, and it goes when no rule gives it any more (a group
removed at the provider removes the membership at the next sign-in). A membership made
by hand (an invitation, the team's owner) is never touched; an open invitation to the
address the provider verified is accepted at the sign-in. Someone the rules give no
team, who has none either, is refused: there would be nothing for them to see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Membership, Role, User
from apps.accounts.services import invitations_accept_for, open_invitations

from .models import SignOnRule, SsoIdentity
from .oidc import SignInRefused
from .providers import Provider

MAX_GROUPS = 500
MAX_GROUP_LENGTH = 255
# A rule gives at most this role; a team has one owner, who is made by hand.
RULE_ROLES = [Role.ADMIN, Role.EVALUATOR]
_RANK: dict[str, int] = {Role.EVALUATOR: 0, Role.ADMIN: 1}


@dataclass(frozen=True)
class SignedIn:
    user: User
    joined: list[str]  # the teams a rule gave the person now
    left: list[str]  # the teams no rule gives them any more
    refused: str = ""  # why they may not sign in after all: no team is left them


def groups_of(claims: dict[str, Any], claim: str) -> list[str]:
    """The person's groups as the provider lists them (a list of texts, or one text),
    bounded: more than MAX_GROUPS, or a group too long, is refused."""
    value = claims.get(claim, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(group, str) for group in value):
        raise SignInRefused(f"the claim {claim!r} is not a list of group names")
    if len(value) > MAX_GROUPS:
        raise SignInRefused(f"the claim {claim!r} lists more than {MAX_GROUPS} groups")
    if any(len(group) > MAX_GROUP_LENGTH or "\x00" in group for group in value):
        raise SignInRefused(f"a group in {claim!r} is longer than {MAX_GROUP_LENGTH} characters")
    return sorted(set(value))


def signed_in(provider: Provider, claims: dict[str, Any]) -> SignedIn:
    """The person's account and memberships after this sign-in, in one transaction."""
    groups = groups_of(claims, provider.groups_claim)
    subject = str(claims["sub"])
    try:
        with transaction.atomic():
            outcome = _signed_in(provider, subject, groups, claims)
    except IntegrityError:  # the same person's first sign-in twice at once: read again
        with transaction.atomic():
            outcome = _signed_in(provider, subject, groups, claims)
    if outcome.refused:
        # Refused after the rules took their last team away: that change is kept.
        raise SignInRefused(outcome.refused)
    return outcome


def _signed_in(
    provider: Provider, subject: str, groups: list[str], claims: dict[str, Any]
) -> SignedIn:
    identity = (
        SsoIdentity.objects.select_for_update()
        .select_related("user")
        .filter(provider=provider.slug, subject=subject)
        .first()
    )
    wanted = _roles_by_team(provider, groups)
    verified = _verified_email(claims)
    invited = bool(verified and open_invitations(verified).exists())
    user = identity.user if identity else _account_for(claims, has_teams=bool(wanted) or invited)
    if user.pk is None:
        raise SignInRefused(_no_team(provider, groups))
    if not user.is_active:
        raise SignInRefused("this account is deactivated in Relevo")
    joined, left = _memberships_follow(user, wanted)
    if invited and verified.lower() == user.email.lower():
        joined += [membership.team.name for membership in invitations_accept_for(user=user)]
    now = timezone.now()
    if identity is None:
        SsoIdentity.objects.create(
            provider=provider.slug, subject=subject, user=user, groups=groups, last_signed_in_at=now
        )
    else:
        SsoIdentity.objects.filter(id=identity.id).update(groups=groups, last_signed_in_at=now)
    SignOnRule.objects.filter(provider=provider.slug, group__in=groups).update(last_matched_at=now)
    if not Membership.objects.filter(user=user).exists():
        return SignedIn(user, joined, left, refused=_no_team(provider, groups))
    return SignedIn(user, joined, left)


def _roles_by_team(provider: Provider, groups: list[str]) -> dict[int, str]:
    """The role each team's rules give these groups: the highest that matches."""
    wanted: dict[int, str] = {}
    rules = SignOnRule.objects.filter(provider=provider.slug, group__in=groups)
    for team_id, role in rules.values_list("team_id", "role"):
        if team_id not in wanted or _RANK.get(role, 0) > _RANK.get(wanted[team_id], 0):
            wanted[team_id] = role
    return wanted


def _verified_email(claims: dict[str, Any]) -> str:
    """The e-mail address when the provider says it verified it; else nothing."""
    email = claims.get("email")
    if claims.get("email_verified") is True and isinstance(email, str) and len(email) <= 254:
        return email
    return ""


def _account_for(claims: dict[str, Any], *, has_teams: bool) -> User:
    """The account a first sign-in links to: the one with this e-mail address when the
    provider says it verified it, else a new one (without a password)."""
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email or len(email) > 254 or "\x00" in email:
        raise SignInRefused("the provider gave no usable e-mail address (the email claim)")
    existing = User.objects.filter(email__iexact=email).first()
    if existing is not None:
        if claims.get("email_verified") is not True:
            raise SignInRefused(
                f"an account with {email} exists, and the provider does not say it verified "
                "that address (email_verified), so it is not linked"
            )
        return existing
    if not has_teams:
        return User(email=email)  # unsaved: refused below, nothing is made
    name = claims.get("name")
    first_name = name[:150].replace("\x00", "") if isinstance(name, str) else ""
    return User.objects.create_user(email=email, password=None, first_name=first_name)


def _memberships_follow(user: User, wanted: dict[int, str]) -> tuple[list[str], list[str]]:
    joined: list[str] = []
    left: list[str] = []
    held = {m.team_id: m for m in Membership.objects.filter(user=user).select_related("team")}
    for team_id, role in wanted.items():
        membership = held.get(team_id)
        if membership is None:
            made = Membership.objects.create(
                team_id=team_id, user=user, role=role, granted_by_rule=True
            )
            joined.append(made.team.name)
        elif membership.granted_by_rule and membership.role != role:
            Membership.objects.filter(id=membership.id).update(role=role)
    for team_id, membership in held.items():
        if membership.granted_by_rule and team_id not in wanted:
            membership.delete()
            left.append(membership.team.name)
    return joined, left


def _no_team(provider: Provider, groups: list[str]) -> str:
    listed = ", ".join(groups[:20]) if groups else "none"
    return (
        f"{provider.name} signed you in, but no team in Relevo has a rule for your groups "
        f"({listed}). Ask your team's owner to add a sign-on rule for one of them."
    )
