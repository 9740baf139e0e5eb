"""The request a team's page receives, typed: what middleware and decorators add to
Django's request, so views read `request.membership` and `request.htmx` as typed
attributes instead of unchecked ones."""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from .models import Membership, User


class TeamRequest(HttpRequest):
    """A request that passed team_member_required (decorators.py): the person is logged
    in, so `user` is a User and never AnonymousUser, and `membership` is theirs in the
    team they work in. `htmx` is set on every request by django-htmx's HtmxMiddleware.

    Only a type: Django builds its own request (WSGIRequest, ASGIRequest) and the
    decorator adds the attribute to it; nothing makes an instance of this class. This is
    how django-stubs and django-htmx document typing what middleware adds.
    """

    user: User
    membership: Membership
    htmx: HtmxDetails
