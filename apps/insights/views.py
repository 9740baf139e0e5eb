"""The lead's pages about evaluations: the list, and one evaluation's metrics and keywords."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from apps.accounts.decorators import lead_required
from apps.evaluations.models import Evaluation, Keyword

from . import selectors


@lead_required
def evaluation_list(request: HttpRequest) -> HttpResponse:
    team_id = request.membership.team_id  # type: ignore[attr-defined]
    evaluations = selectors.team_evaluations(
        team_id=team_id, include_archived=request.GET.get("archived") == "1"
    )
    return render(request, "insights/evaluation_list.html", {"evaluations": evaluations})


@lead_required
def evaluation_detail(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    team_id = request.membership.team_id  # type: ignore[attr-defined]
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)
    search = request.GET.get("q", "").strip()
    page, rows, columns = selectors.keyword_table(
        evaluation, page_number=request.GET.get("page", 1), search=search
    )
    return render(
        request,
        "insights/evaluation_detail.html",
        {
            "evaluation": evaluation,
            "cards": selectors.metric_cards(evaluation),
            "page": page,
            "rows": rows,
            "columns": columns,
            "search": search,
        },
    )


@lead_required
def keyword_detail(request: HttpRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    team_id = request.membership.team_id  # type: ignore[attr-defined]
    keyword = get_object_or_404(
        Keyword.objects.select_related("evaluation"),
        id=keyword_id,
        evaluation_id=evaluation_id,
        evaluation__team_id=team_id,
    )
    return render(
        request,
        "insights/keyword_detail.html",
        {
            "keyword": keyword,
            "evaluation": keyword.evaluation,
            "snapshots": selectors.keyword_snapshots(keyword),
        },
    )
