"""The lead's pages about evaluations: the list, and one evaluation's metrics and keywords."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.decorators import lead_required
from apps.core.errors import InvalidInput
from apps.evaluations.downloads import export_download
from apps.evaluations.models import Evaluation, Keyword

from . import selectors
from .forms import ImportForm


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
    columns = selectors.keyword_columns(evaluation)
    table = selectors.keyword_table(
        evaluation, columns=columns, page_number=request.GET.get("page", 1), search=search
    )
    baseline_id = request.membership.team.baseline_evaluation_id  # type: ignore[attr-defined]
    return render(
        request,
        "insights/evaluation_detail.html",
        {
            "evaluation": evaluation,
            "cards": selectors.metric_cards(evaluation, baseline_id=baseline_id).cards,
            "page": table.page,
            "rows": table.rows,
            "columns": [(column.label, column.metric) for column in columns],
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


@lead_required
def evaluation_import(request: HttpRequest) -> HttpResponse:
    """Upload an evaluation document, or a TREC run with its qrels, as a new evaluation."""
    from apps.evaluations.interchange import import_document, import_trec

    form = ImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        team = request.membership.team  # type: ignore[attr-defined]
        data = form.cleaned_data
        try:
            if data["kind"] == "json":
                evaluation = import_document(
                    team=team, source=data["document"].file, created_by=request.user
                )
            else:
                evaluation = import_trec(
                    team=team,
                    run=data["run"].file,
                    qrels=data["qrels"].file if data["qrels"] else None,
                    topics=data["topics"].file if data["topics"] else None,
                    name=data["name"].strip(),
                    scale=data["scale"],
                    metrics=data["metric_list"],
                    profile=data["profile"] or "trec",
                    keep_rank=data["keep_rank"],
                    created_by=request.user,
                )
        except InvalidInput as error:
            problems = error.problems
        else:
            messages.success(request, f"Imported {evaluation.name}.")
            return redirect("evaluation_detail", evaluation.id)
    return render(request, "insights/import.html", {"form": form, "problems": problems})


@lead_required
def evaluation_export(request: HttpRequest, evaluation_id: int) -> HttpResponseBase:
    """Download an evaluation as JSON, CSV, qrels (aggregated or per grader) or a run."""
    team_id = request.membership.team_id  # type: ignore[attr-defined]
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)
    try:
        return export_download(evaluation, request.GET.get("format", "json"))
    except InvalidInput:
        raise Http404("No such export format.") from None
