"""The lead's import and export pages: an uploaded document or TREC files become a new
evaluation; an evaluation downloads in any export format."""

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation

from .document import import_document
from .downloads import export_download
from .forms import ImportForm
from .trec import import_trec


@lead_required
def evaluation_import(request: TeamRequest) -> HttpResponse:
    """Upload an evaluation document, or a TREC run with its qrels, as a new evaluation."""
    form = ImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        team = request.membership.team
        data = form.cleaned_data
        try:
            if data["kind"] == "json":
                evaluation = import_document(
                    team=team, source=data["document"].file, created_by=request.user
                )
            else:
                imported = import_trec(
                    team=team,
                    run=data["run"].file,
                    qrels=data["qrels"].file if data["qrels"] else None,
                    topics=data["topics"].file if data["topics"] else None,
                    name=data["name"].strip(),
                    scale=data["scale"],
                    metrics=data["metric_list"],
                    profile=data["profile"] or "trec",
                    keep_rank=data["keep_rank"],
                    zero_without_results=data["zero_without_results"],
                    relevant_from=data["relevant_from"] or 1,
                    created_by=request.user,
                )
                evaluation = imported.evaluation
                for line in imported.report.lines():
                    messages.info(request, line)
        except InvalidInput as error:
            problems = error.problems
        else:
            messages.success(request, f"Imported {evaluation.name}.")
            return redirect("insights:evaluation_detail", evaluation.id)
    return render(request, "interchange/import.html", {"form": form, "problems": problems})


@lead_required
def evaluation_export(request: TeamRequest, evaluation_id: int) -> HttpResponseBase:
    """Download an evaluation as JSON, CSV, qrels (aggregated or per grader) or a run."""
    team_id = request.membership.team_id
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)
    try:
        return export_download(evaluation, request.GET.get("format", "json"))
    except InvalidInput:
        raise Http404("No such export format.") from None
