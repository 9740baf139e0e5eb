"""The judgement library's pages: browse and filter the team's judgements, download them
as a judgement list, import a list, remove an imported list."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput

from . import lists
from .browsing import library_counts, library_page
from .exporting import team_scales
from .forms import FiltersForm, ListImportForm
from .models import JudgementList


@lead_required
def library(request: TeamRequest) -> HttpResponse:
    team_id = request.membership.team_id
    scales = team_scales(team_id=team_id)
    form = FiltersForm(request.GET or None, scales=scales)
    filters = form.filters()
    after = request.GET.get("after", "")[:500]
    context = {
        "form": form,
        "page": library_page(team_id=team_id, filters=filters, after=after),
        "counts": library_counts(team_id=team_id),
        "lists": JudgementList.objects.filter(team_id=team_id)
        .select_related("source")
        .order_by("-imported_at"),
        "scales": scales,
        "export_scale": filters.scale or (scales[0] if scales else ""),
        "formats": lists.format_choices(),
    }
    return render(request, "library/library.html", context)


@lead_required
def library_export(request: TeamRequest) -> HttpResponse:
    """The judgements the page's filters keep, as a judgement list in one format."""
    team_id = request.membership.team_id
    form = FiltersForm(request.GET, scales=team_scales(team_id=team_id))
    try:
        download = lists.library_download(
            team_id=team_id,
            file_format=request.GET.get("format", ""),
            scale=request.GET.get("scale", ""),
            filters=form.filters(),
            people_only=request.GET.get("people_only") == "1",
        )
    except InvalidInput as error:
        return HttpResponse("\n".join(error.problems), status=400, content_type="text/plain")
    response = HttpResponse(download.text, content_type=download.media_type)
    response["Content-Disposition"] = f'attachment; filename="{download.file_name}"'
    return response


@lead_required
def list_import(request: TeamRequest) -> HttpResponse:
    formats = lists.format_choices()
    form = ListImportForm(request.POST or None, request.FILES or None, formats=formats)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            imported = lists.judgement_list_import(
                team=request.membership.team,
                name=data["name"].strip(),
                file_format=data["file_format"],
                judgements=data["judgements"],
                queries=data["queries"],
                scale=data["scale"],
                made_by=data["made_by"],
                imported_by=request.user,
            )
        except InvalidInput as error:
            problems = error.problems
        else:
            messages.success(
                request, f"Imported {imported.name}: {imported.judgement_count} judgements."
            )
            return redirect(reverse("library:library"))
    return render(request, "library/import.html", {"form": form, "problems": problems})


@lead_required
@require_POST
def list_delete(request: TeamRequest, list_id: int) -> HttpResponse:
    judgement_list = get_object_or_404(
        JudgementList, id=list_id, team_id=request.membership.team_id
    )
    name = judgement_list.name
    lists.judgement_list_delete(judgement_list=judgement_list)
    messages.success(request, f"Removed the list {name} from the library.")
    return redirect(reverse("library:library"))
