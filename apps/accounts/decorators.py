"""Who may open a page: a member of the current team, or one of its leads.

Views look every object up inside `request.membership.team`, so another team's objects
answer 404; a member without the needed role gets 403.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render

from .selectors import current_membership, is_lead

View = Callable[..., HttpResponseBase]


def team_member_required(view: View) -> View:
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        membership = current_membership(request)
        if membership is None:
            return render(request, "accounts/no_team.html", status=403)
        request.membership = membership  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper


def lead_required(view: View) -> View:
    @team_member_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not is_lead(request.membership):  # type: ignore[attr-defined]
            raise PermissionDenied("Only the team's owner and admins can do this.")
        return view(request, *args, **kwargs)

    return wrapper
