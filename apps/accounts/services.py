"""Writes for people and teams."""

from collections.abc import Iterable

from django.db import transaction

from apps.core.errors import InvalidInput

from .models import Membership, Role, Tag, Team, User


def user_get_or_create(*, email: str, password: str | None = None) -> User:
    """The user with this email; created (unusable password unless given) if new.

    A password given for an existing user replaces theirs, so scripts can reset it.
    """
    email = email.strip().lower()
    if "@" not in email:
        raise InvalidInput({"email": f"{email!r} is not an email address"}, field="email")
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
