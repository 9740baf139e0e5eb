"""The lead's import and export pages: an uploaded document or TREC files become a new
evaluation; an evaluation downloads in any export format."""

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

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
    """Upload an evaluation document, or a TREC run with its qrels, as a new evaluation.

    The page's script sends the form with htmx and gets the report alone back, so a
    refused import leaves the form as it was, the chosen files still chosen; without
    the script the page comes back whole (a browser cannot choose a file again itself).
    """
    form = ImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST":
        if form.is_valid():
            try:
                evaluation, said = _import(request, form.cleaned_data)
            except InvalidInput as error:
                problems = error.problems
            else:
                messages.success(request, said)
                url = reverse("insights:evaluation_detail", args=[evaluation.id])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
        elif request.htmx:
            problems = form.problems()
        if request.htmx:
            return render(request, "interchange/_import_report.html", {"problems": problems})
    return render(request, "interchange/import.html", {"form": form, "problems": problems})


def _import(request: TeamRequest, data: dict[str, Any]) -> tuple[Evaluation, str]:
    """The new evaluation and the one message that says what the import did. The files
    go as uploaded, so the problems name them as the lead chose them."""
    team = request.membership.team
    if data["kind"] == "json":
        evaluation = import_document(
            team=team, source=data["document"], name=data["name"], created_by=request.user
        )
        return evaluation, f"Imported {evaluation.name}."
    imported = import_trec(
        team=team,
        run=data["run"],
        qrels=data["qrels"],
        topics=data["topics"],
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
    return evaluation, f"Imported {evaluation.name}: {imported.report.summary()}."


@lead_required
def evaluation_export(request: TeamRequest, evaluation_id: int) -> HttpResponseBase:
    """Download an evaluation as JSON, CSV, qrels (aggregated or per grader) or a run."""
    team_id = request.membership.team_id
    evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)
    try:
        return export_download(evaluation, request.GET.get("format", "json"))
    except InvalidInput:
        raise Http404("No such export format.") from None
