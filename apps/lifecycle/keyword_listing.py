"""The edit page's list of an evaluation's keywords, a page at a time: an evaluation may
have thousands."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.core.paginator import Page, Paginator
from django.db.models import Count

from apps.evaluations.models import Evaluation, Keyword

if TYPE_CHECKING:
    # django-stubs' types, not installed in production (hence quotes where they are used).
    from django_stubs_ext import WithAnnotations

    class ResultCount(TypedDict):
        result_count: int

    # A keyword as the list reads it, its results counted.
    Listed = WithAnnotations[Keyword, ResultCount]

KEYWORDS_PER_PAGE = 50


def keyword_page(evaluation: Evaluation, number: str | None) -> Page[Listed]:
    """One page of the evaluation's keywords in their order, each with its result count
    (a number that is not a page shows the nearest one)."""
    keywords = (
        Keyword.objects.filter(evaluation=evaluation)
        .annotate(result_count=Count("snapshots"))
        .order_by("position")
    )
    return Paginator(keywords, KEYWORDS_PER_PAGE).get_page(number)
