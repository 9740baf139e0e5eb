"""Reads about people and teams."""

from typing import Any, cast

from django.db import connection

from .models import Membership, Role, Tag
from .sql import MEMBERSHIP_WITH_TEAM, MEMBERSHIPS_SQL

SESSION_TEAM_KEY = "relevo_team_id"


def memberships_of(user: Any) -> list[Membership]:
    """The person's memberships with their teams, by team name (read on every page)."""
    with connection.cursor() as cursor:
        cursor.execute(MEMBERSHIPS_SQL, [user.id])
        rows = cursor.fetchall()
    memberships = []
    for row in rows:
        membership, team = MEMBERSHIP_WITH_TEAM.build(row)
        Membership.team.field.set_cached_value(membership, team)
        memberships.append(cast(Membership, membership))  # the rows' first model
    return memberships


def current_membership(request: Any) -> Membership | None:
    """The membership of the team the person is working in (chosen in the switcher).

    Falls back to their first team when nothing is chosen or the choice is stale.
    """
    memberships = getattr(request, "_relevo_memberships", None)
    if memberships is None:
        # Read with the person when the session logged them in (accounts.sessions).
        memberships = getattr(request.user, "loaded_memberships", None)
    if memberships is None:
        memberships = memberships_of(request.user)
        for membership in memberships:
            # membership.user is the person already loaded, not another query.
            Membership.user.field.set_cached_value(membership, request.user)
    request._relevo_memberships = memberships
    chosen = request.session.get(SESSION_TEAM_KEY)
    for membership in memberships:
        if membership.team_id == chosen:
            return membership
    return memberships[0] if memberships else None


def is_lead(membership: Membership | None) -> bool:
    return membership is not None and membership.role in (Role.OWNER, Role.ADMIN)


def evaluations_restricted_by(tag: Tag) -> list[Any]:
    """The evaluations not yet finished that carry the tag, by name.

    A grader sees an evaluation only when they hold every tag it carries, so deleting the
    tag opens these to graders who lack it; the lead is asked first.
    """
    # Through the reverse relation: accounts does not import the evaluations app.
    return list(tag.evaluations.exclude(status="finished").order_by("name", "id"))
