"""The lead's agreement page and disagreement queue of one evaluation.

Deciding and clearing answer the queue row as a fragment for htmx (with the metric means
swapped out of band, so the lead sees the decision move them) and redirect back to the
queue without htmx.
"""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.models import Membership
from apps.accounts.requests import TeamRequest
from apps.core import live
from apps.core.errors import DomainError
from apps.core.live import live_page
from apps.core.typed import SMALLINT_MAX, SMALLINT_MIN, parse_int
from apps.engine import Scale
from apps.evaluations.models import Evaluation, Snapshot
from apps.insights.templatetags.insights import grade_label
from apps.judging import decisions

from . import readings, selectors


def _team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    team_id = request.membership.team_id
    return get_object_or_404(Evaluation, id=evaluation_id, team_id=team_id)


@lead_required
def evaluation_agreement(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _team_evaluation(request, evaluation_id)
    agreement = selectors.evaluation_agreement(evaluation)
    report = agreement.report
    return render(
        request,
        "insights/agreement.html",
        {
            "evaluation": evaluation,
            "agreement": agreement,
            "report": report,
            "kappa_band": readings.landis_koch_band(report.kappa.value),
            "alpha_band": readings.landis_koch_band(report.alpha.value),
            "alpha_reading": readings.krippendorff_reading(report.alpha.value),
            "landis_koch_source": readings.LANDIS_KOCH_SOURCE,
            "krippendorff_source": readings.KRIPPENDORFF_SOURCE,
        },
    )


def _queue_context(evaluation: Evaluation) -> dict[str, Any]:
    scale = evaluation.grading_scale
    return {
        "evaluation": evaluation,
        "buttons": list(zip(scale.grades, scale.labels, strict=True)),
        "metrics": selectors.metric_summary(evaluation),
    }


@lead_required
def disagreement_queue(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _team_evaluation(request, evaluation_id)
    # Live: a grade or another lead's decision shows without a reload (live_views).
    live_url = reverse("insights:live_disagreements", args=[evaluation.id])
    query = request.GET.urlencode()
    settings = live_page(
        live.evaluation_topic(evaluation.id), f"{live_url}?{query}" if query else live_url
    )
    context = {**queue_page_context(request, evaluation), "live": settings}
    return render(request, "insights/disagreement_queue.html", context)


def queue_page_context(request: TeamRequest, evaluation: Evaluation) -> dict[str, Any]:
    """The queue's rows, counts and metrics as the query asks (`show`, `page`)."""
    show = _shown(request.GET.get("show", "open"))
    page, rows = selectors.disagreement_page(
        evaluation, show=show, page_number=request.GET.get("page", 1)
    )
    context = _queue_context(evaluation)
    context.update(
        show=show,
        page=page,
        rows=rows,
        open_count=page.paginator.count if show == "open" else None,
    )
    # The rows are drawn by Jinja2 (templates/jinja2/insights/_disagreement_row_macro.html).
    rows_html = render_to_string(
        "insights/disagreement_rows.html", context, request, using="jinja2"
    )
    context["rows_html"] = mark_safe(rows_html)  # noqa: S308 - escaped by Jinja2 as drawn
    return context


def _confirmation(row: selectors.QueueRow, scale: Scale) -> str:
    """What the lead just did to a result, said back in a line."""
    where = f"“{row.snapshot.keyword.text}”, {row.snapshot.name or row.snapshot.doc_id}"
    if row.decision is None:
        return f"Cleared: the graders' grades count again for {where}."
    return f"Saved: final grade {grade_label(row.decision.grade, scale)} for {where}."


def _shown(value: str) -> str:
    """Which rows the queue shows, as asked; "open" for anything it does not know."""
    return value if value in selectors.SHOW_CHOICES else "open"


def _after_change(
    request: TeamRequest, evaluation: Evaluation, snapshot_id: int, *, error: str = ""
) -> HttpResponseBase:
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            [row] = selectors.queue_rows(evaluation, [snapshot_id])
            messages.success(request, _confirmation(row, evaluation.grading_scale))
        queue = reverse("insights:disagreement_queue", args=[evaluation.id])
        return redirect(f"{queue}?show={_shown(request.POST.get('show', 'open'))}")
    [row] = selectors.queue_rows(evaluation, [snapshot_id])
    confirmation = "" if error else _confirmation(row, evaluation.grading_scale)
    context = _queue_context(evaluation)
    context.update(
        row=row, error=error, swap_metrics=True, show=_shown(request.POST.get("show", "open"))
    )
    row_html = render_to_string("insights/disagreement_row.html", context, request, using="jinja2")
    # The metrics and the confirmation come too, out of band (htmx swaps them by id),
    # wrapped so the table row and the rest parse side by side. The confirmation stands
    # above the queue, which the live page redraws without the settled row.
    metrics_html = render_to_string("insights/disagreement_metrics.html", context, request)
    confirmation_html = render_to_string(
        "insights/_decision_confirmation.html", {"confirmation": confirmation, "swap": True}
    )
    return HttpResponse(
        f"{row_html}<template>{metrics_html}{confirmation_html}</template>",
        status=400 if error else 200,
    )


def _settle(
    request: TeamRequest,
    evaluation_id: int,
    snapshot_id: int,
    change: Callable[[Membership], object],
) -> HttpResponseBase:
    """Apply a lead's change (given the lead's membership) to one snapshot of the
    evaluation and answer with its row. A snapshot that is not this (team's)
    evaluation's answers 404."""
    evaluation = _team_evaluation(request, evaluation_id)
    try:
        change(request.membership)
    except Snapshot.DoesNotExist:
        raise Http404("No such result in this evaluation.") from None
    except DomainError as error:
        return _after_change(request, evaluation, snapshot_id, error=error.message)
    return _after_change(request, evaluation, snapshot_id)


@require_POST
@lead_required
def disagreement_decide(
    request: TeamRequest, evaluation_id: int, snapshot_id: int
) -> HttpResponseBase:
    raw = request.POST.get("grade", "")
    # Text that is not a whole number a grade's column holds goes on as typed: the
    # service refuses it, naming the field.
    number = parse_int(raw, SMALLINT_MIN, SMALLINT_MAX)
    grade: Any = raw if number is None else number
    return _settle(
        request,
        evaluation_id,
        snapshot_id,
        lambda membership: decisions.snapshot_decide(
            membership=membership,
            snapshot_id=snapshot_id,
            grade=grade,
            reason=request.POST.get("reason", ""),
            evaluation_id=evaluation_id,
        ),
    )


@require_POST
@lead_required
def disagreement_clear(
    request: TeamRequest, evaluation_id: int, snapshot_id: int
) -> HttpResponseBase:
    return _settle(
        request,
        evaluation_id,
        snapshot_id,
        lambda membership: decisions.snapshot_decision_clear(
            membership=membership, snapshot_id=snapshot_id, evaluation_id=evaluation_id
        ),
    )
