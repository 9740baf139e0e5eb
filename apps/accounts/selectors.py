"""Reads about people and teams."""

from typing import Any

from .models import Membership, Role

SESSION_TEAM_KEY = "relevo_team_id"


def memberships_of(user: Any) -> list[Membership]:
    return list(Membership.objects.filter(user=user).select_related("team").order_by("team__name"))


def current_membership(request: Any) -> Membership | None:
    """The membership of the team the person is working in (chosen in the switcher).

    Falls back to their first team when nothing is chosen or the choice is stale.
    """
    memberships = getattr(request, "_relevo_memberships", None)
    if memberships is None:
        memberships = memberships_of(request.user)
        request._relevo_memberships = memberships
    chosen = request.session.get(SESSION_TEAM_KEY)
    for membership in memberships:
        if membership.team_id == chosen:
            return membership
    return memberships[0] if memberships else None


def is_lead(membership: Membership | None) -> bool:
    return membership is not None and membership.role in (Role.OWNER, Role.ADMIN)
