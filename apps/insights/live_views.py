"""The live answers of the evaluation page, the dashboard and the disagreement queue.

Each page carries its live URL and the ETag it was drawn at; static/js/live.js asks the
URL every LIVE_POLL_MS and swaps in the parts of the answer (elements marked
`data-live-part`) by id. Nothing changed: 304, from apps.core.live.LiveShortcut before
Django runs, or from `_unless_unchanged` here when Django answers (the test server).
"""

from collections.abc import Callable

from django.http import Http404, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404, render

from apps.accounts.decorators import lead_required, team_member_required
from apps.accounts.requests import TeamRequest
from apps.core import live
from apps.evaluations.models import Evaluation
from apps.evaluations.source_mix import evaluation_mix
from apps.judges.selectors import evaluation_judges
from apps.judging.decisive import decisive_status

from .agreement.views import queue_page_context
from .dashboard_content import dashboard_context
from .metric_cards import metric_values


def _unless_unchanged(
    request: TeamRequest, topic: str, answer: Callable[[], HttpResponse]
) -> HttpResponse:
    token = live.version(topic)
    if token is not None and request.headers.get("If-None-Match") == live.etag(token):
        return HttpResponseNotModified()
    response = answer()
    if token is not None:
        response["ETag"] = live.etag(token)
    response["Cache-Control"] = "no-cache, private"
    return response


def _team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    # The decision order's option comes with it: no query while it is off.
    evaluations = Evaluation.objects.select_related("decisive_order__rival")
    return get_object_or_404(evaluations, id=evaluation_id, team_id=request.membership.team_id)


@lead_required
def live_evaluation(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """The evaluation page's progress, metric values, AI judges panel and where the
    comparison its queue is ordered by stands (judging/decisive.py). When its status
    is no longer the one the page was drawn with (`shown`), the page reloads whole: its
    buttons and sections depend on the status."""
    evaluation = _team_evaluation(request, evaluation_id)

    def answer() -> HttpResponse:
        response = render(
            request,
            "insights/_live_evaluation.html",
            {
                "evaluation": evaluation,
                "values": metric_values(evaluation),
                "mix": evaluation_mix(evaluation),
                "judges_panel": evaluation_judges(evaluation),
                "decisive": decisive_status(evaluation=evaluation),
                "live_part": True,
            },
        )
        if request.GET.get("shown") != evaluation.status_shown:
            response["X-Live-Reload"] = "1"
        return response

    return _unless_unchanged(request, live.evaluation_topic(evaluation.id), answer)


@lead_required
def live_disagreements(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    """The disagreement queue's metrics, counts and rows, as the page's query asks."""
    evaluation = _team_evaluation(request, evaluation_id)
    return _unless_unchanged(
        request,
        live.evaluation_topic(evaluation.id),
        lambda: render(
            request,
            "insights/_disagreement_live.html",
            {**queue_page_context(request, evaluation), "live_part": True},
        ),
    )


@team_member_required
def live_dashboard(request: TeamRequest, team_id: int) -> HttpResponse:
    """The dashboard's content for the person's current team (another team's: 404)."""
    if team_id != request.membership.team_id:
        raise Http404("No such team.")
    return _unless_unchanged(
        request,
        live.team_topic(team_id),
        lambda: render(
            request,
            "insights/_dashboard_body.html",
            {**dashboard_context(request), "live_part": True},
        ),
    )
