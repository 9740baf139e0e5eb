"""Writes for people and teams."""

import hashlib
import re
import secrets
from collections.abc import Iterable
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Field, Model, QuerySet
from django.utils import timezone

from apps.core.errors import InvalidInput

from . import limits
from .models import Invitation, Membership, Role, Tag, Team, User


def clean_email(email: str) -> str:
    """The address in lower case, or InvalidInput naming the email field."""
    email = email.strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidInput({"email": f"{email!r} is not an email address"}, field="email") from None
    return email


def _check_length(field: str, value: str, model: type[Model]) -> None:
    column = model._meta.get_field(field)
    limit = column.max_length if isinstance(column, Field) else None  # relations have none
    if limit is not None and len(value) > limit:
        raise InvalidInput({field: f"at most {limit} characters (got {len(value)})"}, field=field)


def user_get_or_create(*, email: str, password: str | None = None) -> User:
    """The user with this email; created (unusable password unless given) if new.

    A password given for an existing user replaces theirs, so scripts can reset it.
    """
    email = clean_email(email)
    user = User.objects.filter(email=email).first()
    if user is None:
        return User.objects.create_user(email=email, password=password)
    if password:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


@transaction.atomic
def team_create(*, name: str, owner_email: str, owner_password: str | None = None) -> Team:
    name = name.strip()
    if not name:
        raise InvalidInput({"name": "required"}, field="name")
    _check_length("name", name, Team)
    if Team.objects.filter(name=name).exists():
        raise InvalidInput({"name": f"a team named {name!r} already exists"}, field="name")
    owner = user_get_or_create(email=owner_email, password=owner_password)
    team = Team.objects.create(name=name)
    Membership.objects.create(team=team, user=owner, role=Role.OWNER)
    return team


def tags_get_or_create(*, team: Team, names: Iterable[str]) -> list[Tag]:
    return [
        Tag.objects.get_or_create(team=team, name=name.strip())[0] for name in names if name.strip()
    ]


@transaction.atomic
def member_add(
    *,
    team: Team,
    email: str,
    role: str,
    password: str | None = None,
    tag_names: Iterable[str] = (),
) -> Membership:
    """Add someone to a team, or change the role and tags of someone already in it."""
    if role not in (Role.ADMIN, Role.EVALUATOR):
        raise InvalidInput({"role": f"{role!r} must be admin or evaluator"}, field="role")
    user = user_get_or_create(email=email, password=password)
    membership = Membership.objects.filter(team=team, user=user).first()
    if membership is not None and membership.role == Role.OWNER:
        raise InvalidInput({"role": "the owner's role cannot be changed here"}, field="role")
    if membership is None:
        membership = Membership.objects.create(team=team, user=user, role=role)
    elif membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    membership.tags.set(tags_get_or_create(team=team, names=tag_names))
    return membership


# --- Invitations ----------------------------------------------------------------------

INVITATION_DAYS = 14


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def invitation_create(
    *, team: Team, email: str, role: str, tags: Iterable[Tag] = (), invited_by: User | None
) -> tuple[Invitation, str]:
    """Invite someone; returns the invitation and the secret token for its link.

    RateLimited when the team or the inviter sent too many invitations lately."""
    email = clean_email(email)
    if role not in (Role.ADMIN, Role.EVALUATOR):
        raise InvalidInput({"role": "must be admin or evaluator"}, field="role")
    if Membership.objects.filter(team=team, user__email=email).exists():
        raise InvalidInput({"email": f"{email} is already a member"}, field="email")
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        team=team,
        email=email,
        role=role,
        token_hash=_token_hash(token),
        invited_by=invited_by,
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
    )
    tags = list(tags)
    if any(tag.team_id != team.id for tag in tags):
        raise InvalidInput({"tags": "every tag must belong to the team"}, field="tags")
    invitation.tags.set(tags)
    # Last, so only an invitation that is otherwise fine counts; over the limit, the
    # RateLimited it raises rolls the invitation back with the transaction.
    limits.invitation_count(team=team, invited_by=invited_by)
    return invitation, token


def invitation_find(*, token: str) -> Invitation | None:
    """The open (not accepted, not expired) invitation this token belongs to."""
    return (
        Invitation.objects.select_related("team")
        .filter(token_hash=_token_hash(token), accepted_at__isnull=True)
        .filter(expires_at__gt=timezone.now())
        .first()
    )


def open_invitations(email: str) -> QuerySet[Invitation]:
    return Invitation.objects.filter(
        email__iexact=email, accepted_at__isnull=True, expires_at__gt=timezone.now()
    )


@transaction.atomic
def invitations_accept_for(*, user: User) -> list[Membership]:
    """Every open invitation to the person's address, accepted: for a sign-in that proved
    they hold the address (an identity provider that verified it)."""
    joined = []
    for invitation in open_invitations(user.email).select_related("team"):
        claimed = Invitation.objects.filter(id=invitation.id, accepted_at__isnull=True).update(
            accepted_at=timezone.now()
        )
        if not claimed:
            continue
        membership, _ = Membership.objects.get_or_create(
            team=invitation.team, user=user, defaults={"role": invitation.role}
        )
        membership.tags.add(*invitation.tags.all())
        joined.append(membership)
    return joined


@transaction.atomic
def invitation_accept(*, token: str, password: str | None) -> Membership:
    """Join the team. A new person sets a password; an existing account keeps theirs."""
    invitation = invitation_find(token=token)
    if invitation is None:
        raise InvalidInput({"token": "this invitation is not valid any more"}, field="token")
    claimed = Invitation.objects.filter(id=invitation.id, accepted_at__isnull=True).update(
        accepted_at=timezone.now()
    )
    if not claimed:
        raise InvalidInput({"token": "this invitation was already used"}, field="token")
    user = User.objects.filter(email=invitation.email).first()
    if user is None:
        if not password:
            raise InvalidInput({"password": "required"}, field="password")
        user = User.objects.create_user(email=invitation.email, password=password)
    membership, _ = Membership.objects.get_or_create(
        team=invitation.team, user=user, defaults={"role": invitation.role}
    )
    membership.tags.add(*invitation.tags.all())
    return membership


# --- Members and tags -------------------------------------------------------------------


@transaction.atomic
def membership_update(*, membership: Membership, role: str, tags: Iterable[Tag]) -> Membership:
    if membership.role == Role.OWNER and role != Role.OWNER:
        raise InvalidInput({"role": "the owner's role cannot be changed"}, field="role")
    if membership.role != Role.OWNER and role not in (Role.ADMIN, Role.EVALUATOR):
        raise InvalidInput({"role": "must be admin or evaluator"}, field="role")
    tags = list(tags)
    if any(tag.team_id != membership.team_id for tag in tags):
        raise InvalidInput({"tags": "every tag must belong to the team"}, field="tags")
    membership.role = role
    membership.save(update_fields=["role"])
    membership.tags.set(tags)
    return membership


def membership_remove(*, membership: Membership) -> None:
    if membership.role == Role.OWNER:
        raise InvalidInput({"member": "the owner cannot be removed"}, field="member")
    membership.delete()


_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


def _tag_name_taken(team: Team, name: str, *, other_than: Tag | None) -> bool:
    same_name = Tag.objects.filter(team=team, name=name)
    if other_than is not None:
        same_name = same_name.exclude(pk=other_than.pk)
    return same_name.exists()


def tag_save(*, team: Team, name: str, colour: str, tag: Tag | None = None) -> Tag:
    name = name.strip()
    problems: dict[str, str] = {}
    limit = Tag._meta.get_field("name").max_length or 0
    if not name:
        problems["name"] = "required"
    elif len(name) > limit:
        problems["name"] = f"at most {limit} characters (got {len(name)})"
    elif _tag_name_taken(team, name, other_than=tag):
        problems["name"] = f"the team already has a tag named {name!r}"
    if not _COLOUR.match(colour):
        problems["colour"] = f"{colour!r} is not a colour like #1f77b4"
    if problems:
        raise InvalidInput(problems, field=next(iter(problems)))
    tag = tag or Tag(team=team)
    tag.name, tag.colour = name, colour.lower()
    tag.save()
    return tag
