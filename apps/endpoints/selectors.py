"""Reads about a team's search endpoints and search models.

Every read is scoped to one team: another team's rows are simply not found (a 404 for
pages and the API).
"""

from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from apps.accounts.models import Tag

from .models import SearchEndpoint, SearchModel

_TAGS_BY_NAME = Prefetch("tags", queryset=Tag.objects.order_by("name"))


def team_endpoints(*, team_id: int) -> QuerySet[SearchEndpoint]:
    """The team's endpoints by name, each with `model_count`."""
    # Meta.ordering does not apply to a query that aggregates, so it is said here.
    return (
        SearchEndpoint.objects.filter(team_id=team_id)
        .annotate(model_count=Count("search_models"))
        .order_by("name", "id")
    )


def team_models(*, team_id: int) -> QuerySet[SearchModel]:
    """The team's models by name with their endpoint and tags, each with
    `evaluation_count`: a list page or API answer in three queries."""
    return (
        SearchModel.objects.filter(team_id=team_id)
        .select_related("endpoint")
        .prefetch_related(_TAGS_BY_NAME)
        .annotate(evaluation_count=Count("evaluations"))
        .order_by("name", "id")
    )


def endpoint_models(*, endpoint: SearchEndpoint) -> QuerySet[SearchModel]:
    return endpoint.search_models.order_by("name", "id")


def model_evaluations(*, model: SearchModel) -> QuerySet[Any]:
    """The evaluations whose results come from the model, newest first. (Read through the
    model's reverse relation: evaluations sit above search models and import them.)"""
    return model.evaluations.order_by("-created_at", "-id")


def team_tags(*, team_id: int) -> QuerySet[Tag]:
    return Tag.objects.filter(team_id=team_id).order_by("name")
