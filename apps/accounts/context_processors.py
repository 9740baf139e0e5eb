from typing import Any

from django.http import HttpRequest

from .selectors import current_membership, is_lead


def team(request: HttpRequest) -> dict[str, Any]:
    """The current team and the person's other teams, for the header and its switcher."""
    if not request.user.is_authenticated:
        return {}
    membership = current_membership(request)
    return {
        "membership": membership,
        "memberships": getattr(request, "_relevo_memberships", []),
        "is_lead": is_lead(membership),
    }
