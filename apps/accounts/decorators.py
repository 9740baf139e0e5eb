"""Who may open a page: a member of the current team, or one of its leads.

Views look every object up inside `request.membership.team`, so another team's objects
answer 404; a member without the needed role gets 403. The views these decorators take
receive a TeamRequest (requests.py); what they return takes any request.
"""

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, cast

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render

from .requests import TeamRequest
from .selectors import current_membership, is_lead

P = ParamSpec("P")
# A team's page, and the view that URL confs route to once it is decorated.
TeamView = Callable[Concatenate[TeamRequest, P], HttpResponseBase]
View = Callable[Concatenate[HttpRequest, P], HttpResponseBase]


def team_member_required(view: TeamView[P]) -> View[P]:
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
        membership = current_membership(request)
        if membership is None:
            return render(request, "accounts/no_team.html", status=403)
        # From here the request is what TeamRequest says: logged in (login_required,
        # above) and a member of the team.
        team_request = cast(TeamRequest, request)
        team_request.membership = membership
        return view(team_request, *args, **kwargs)

    return wrapper


def lead_required(view: TeamView[P]) -> View[P]:
    @wraps(view)
    def wrapper(request: TeamRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
        if not is_lead(request.membership):
            raise PermissionDenied("Only the team's owner and its leads can do this.")
        return view(request, *args, **kwargs)

    return team_member_required(wrapper)
