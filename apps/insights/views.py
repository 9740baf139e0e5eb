"""The home dashboard, the lead's pages about evaluations (the list, one evaluation's
metrics and keywords, a keyword's grades, a model's history) and the team's leaderboard.
Their reads are in one module each (evaluation_list, metric_cards, keyword_table, ...)."""

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required, team_member_required
from apps.accounts.models import Tag
from apps.accounts.requests import TeamRequest
from apps.core import live
from apps.core.errors import DomainError, InvalidInput
from apps.core.forms import add_problems
from apps.core.live import live_page
from apps.endpoints.models import SearchModel
from apps.evaluations.keyword_notes import keyword_notes_set, notes_of
from apps.evaluations.models import Evaluation, Keyword, Status
from apps.evaluations.source_mix import MixKind, evaluation_mix, mix_of_slots
from apps.judges.selectors import evaluation_judges
from apps.judging.decisive import decisive_status
from apps.lifecycle.stale import stale_count

from . import evaluation_list as evaluation_lists
from . import services
from .dashboard_content import dashboard_context
from .explainer import explain_value
from .forms import (
    EvaluationListForm,
    KeywordNotesForm,
    KeywordTableForm,
    LeaderboardForm,
    form_problems,
)
from .keyword_results import keyword_snapshots, keyword_values, slot_in_team
from .keyword_table import (
    KEYWORD_FILTERS,
    KEYWORDS_PER_PAGE,
    PAGE_SIZES,
    keyword_table,
    table_headers,
)
from .leaderboard import judge_leaderboard, leaderboard_chart
from .leaderboard import leaderboard as leaderboard_rows
from .metric_cards import evaluation_metric_in_team, metric_cards
from .metric_columns import keyword_columns
from .model_history import model_history as model_history_of
from .planning import DEFAULT_POWER, JUDGED_BY, plan_keywords


@lead_required
def evaluation_list(request: TeamRequest) -> HttpResponse:
    """The team's evaluations, searched, filtered, sorted and paginated as the query
    string asks; bad input is named above the unfiltered list (400)."""
    team_id = request.membership.team_id
    choices = evaluation_lists.list_choices(team_id=team_id)
    form = EvaluationListForm(request.GET, choices=choices)
    valid = form.is_valid()
    query: dict[str, Any] = {
        "q": "",
        "status": "",
        "model": None,
        "tag": None,
        "archived": False,
        "sort": evaluation_lists.DEFAULT_SORT,
        "page": 1,
        "size": evaluation_lists.EVALUATIONS_PER_PAGE,
    }
    if valid:
        query.update(form.cleaned_data)
    listing = evaluation_lists.evaluation_list(
        team_id=team_id,
        filters=evaluation_lists.Filters(
            search=query["q"],
            status=query["status"],
            model_id=query["model"],
            tag_id=query["tag"],
            include_archived=query["archived"],
        ),
        sort=query["sort"],
        sort_column=form.sort_column() if valid else None,
        page_number=query["page"],
        per_page=query["size"],
    )
    return render(
        request,
        "insights/evaluation_list.html",
        {
            "listing": listing,
            "choices": choices,
            "headers": evaluation_lists.list_headers(query["sort"], listing.sort_column),
            "query": query,
            "problems": [] if valid else form_problems(form),
            "statuses": Status.choices,
            "sort_options": evaluation_lists.sort_options(choices.metrics),
            "page_sizes": evaluation_lists.PAGE_SIZES,
        },
        status=200 if valid else 400,
    )


# How often the AI judges panel of an evaluation that is not live asks again while a
# judge runs (a live page's panel follows its live answers instead).
PROGRESS_POLL_SECONDS = 3


def _team_evaluation(request: TeamRequest, evaluation_id: int) -> Evaluation:
    team_id = request.membership.team_id
    # The status line names the evaluation's model; the page says where the comparison
    # its queue may be ordered by stands (apps/judging/decisive.py).
    evaluations = Evaluation.objects.select_related("search_model", "decisive_order__rival")
    return get_object_or_404(evaluations, id=evaluation_id, team_id=team_id)


def _baseline_id(request: TeamRequest) -> int | None:
    return request.membership.team.baseline_evaluation_id


def _problems(request: TeamRequest, problems: list[str]) -> HttpResponse:
    """400 with every problem named by its field."""
    return render(request, "insights/_problems.html", {"problems": problems}, status=400)


@lead_required
def evaluation_detail(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _team_evaluation(request, evaluation_id)
    # Live while grades can move it: its progress, metrics and AI judges follow them.
    live_url = reverse("insights:live_evaluation", args=[evaluation.id])
    live_settings = None
    if evaluation.status == Status.ACTIVE or evaluation.fetching:
        shown = urlencode({"shown": evaluation.status_shown})
        live_settings = live_page(live.evaluation_topic(evaluation.id), f"{live_url}?{shown}")
    columns = keyword_columns(evaluation)
    form = KeywordTableForm(request.GET, sort_keys=[column.key for column in columns])
    valid = form.is_valid()
    # Bad input is named above the table, which then shows its first page unfiltered.
    query: dict[str, Any] = {
        "q": "",
        "sort": "position",
        "only": "",
        "page": 1,
        "size": KEYWORDS_PER_PAGE,
    }
    if valid:
        query.update(form.cleaned_data)
    table = keyword_table(
        evaluation,
        columns=columns,
        search=query["q"],
        sort=query["sort"],
        only=query["only"],
        page_number=query["page"],
        per_page=query["size"],
    )
    metrics = metric_cards(evaluation, baseline_id=_baseline_id(request))
    return render(
        request,
        "insights/evaluation_detail.html",
        {
            "evaluation": evaluation,
            "cards": metrics.cards,
            "reference": metrics.reference,
            "stale_judgements": stale_count(evaluation.id),
            "mix": evaluation_mix(evaluation),
            "decisive": decisive_status(evaluation=evaluation),
            "table": table,
            "headers": table_headers(columns, query["sort"]),
            "query": query,
            "problems": [] if valid else form_problems(form),
            "filters": KEYWORD_FILTERS,
            "page_sizes": PAGE_SIZES,
            "poll_seconds": PROGRESS_POLL_SECONDS,
            "live": live_settings,
            # An open evaluation's AI judges panel loads after the page and polls while a
            # judge runs; any other's cannot change, and comes with the page.
            "judges_panel": None
            if evaluation.status == Status.ACTIVE
            else evaluation_judges(evaluation),
        },
        status=200 if valid else 400,
    )


@require_POST
@lead_required
def metric_pin(request: TeamRequest, evaluation_id: int, metric_id: int) -> HttpResponse:
    """Pin a metric to the lead's dashboard (pinned=1) or unpin it (pinned=0)."""
    team_id = request.membership.team_id
    metric = evaluation_metric_in_team(
        metric_id=metric_id, evaluation_id=evaluation_id, team_id=team_id
    )
    if metric is None:
        raise Http404("No such metric.")
    pinned = request.POST.get("pinned")
    if pinned not in ("0", "1"):
        return _problems(request, ["pinned: must be 1 (pin) or 0 (unpin)"])
    services.metric_pin(evaluation_metric=metric, pinned=pinned == "1")
    if request.htmx:
        return render(
            request, "insights/_pin_button.html", {"card": metric, "evaluation": metric.evaluation}
        )
    return redirect("insights:evaluation_detail", evaluation_id)


@lead_required
def keyword_detail(request: TeamRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    keyword = _team_keyword(request, evaluation_id, keyword_id)
    return _keyword_page(request, keyword, KeywordNotesForm(initial=notes_of(keyword)))


@lead_required
def evaluation_plan(request: TeamRequest) -> HttpResponse:
    """How many keywords an evaluation needs to detect a change in a metric, from the
    spread of the team's earlier evaluations (planning.py)."""
    asked = {
        "metric": request.GET.get("metric", "ndcg@10"),
        "change": request.GET.get("change", "0.02"),
        "power": request.GET.get("power", str(DEFAULT_POWER)),
        "judged_by": request.GET.get("judged_by", MixKind.PEOPLE),
    }
    plan, problems = None, []
    if "change" in request.GET:
        try:
            plan = plan_keywords(team_id=request.membership.team_id, **asked)
        except InvalidInput as error:
            problems = error.problems
    return render(
        request,
        "insights/evaluation_plan.html",
        {"asked": asked, "plan": plan, "problems": problems, "judged_by": JUDGED_BY},
        status=400 if problems else 200,
    )


@lead_required
def keyword_explain(request: TeamRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    """How the keyword's value of one of its evaluation's metrics (?metric=ndcg&k=10) was
    computed; a metric the evaluation does not report is 404."""
    keyword = _team_keyword(request, evaluation_id, keyword_id)
    explained = explain_value(keyword, request.GET.get("metric", ""), request.GET.get("k", ""))
    return render(
        request,
        "insights/keyword_explain.html",
        {"keyword": keyword, "evaluation": keyword.evaluation, **explained},
    )


def _team_keyword(request: TeamRequest, evaluation_id: int, keyword_id: int) -> Keyword:
    return get_object_or_404(
        Keyword.objects.select_related("evaluation", "notes"),
        id=keyword_id,
        evaluation_id=evaluation_id,
        evaluation__team_id=request.membership.team_id,
    )


def _keyword_page(
    request: TeamRequest, keyword: Keyword, notes_form: KeywordNotesForm, status: int = 200
) -> HttpResponse:
    snapshots = keyword_snapshots(keyword)
    return render(
        request,
        "insights/keyword_detail.html",
        {
            "keyword": keyword,
            "evaluation": keyword.evaluation,
            "snapshots": snapshots,
            "mix": mix_of_slots(slot for row in snapshots for slot in row.slots),
            "values": keyword_values(keyword, [row.value for row in snapshots]),
            "unretrieved": keyword.unretrieved.order_by("id"),
            "notes": notes_of(keyword),
            "notes_form": notes_form,
        },
        status=status,
    )


@require_POST
@lead_required
def keyword_notes_save(request: TeamRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    """The lead sets the keyword's information need and notes (any time: they move no
    grade); a problem is named beside its field (400), nothing saved."""
    keyword = _team_keyword(request, evaluation_id, keyword_id)
    form = KeywordNotesForm(request.POST)
    if form.is_valid():
        try:
            keyword_notes_set(keyword=keyword, **form.cleaned_data)
        except DomainError as error:
            add_problems(form, getattr(error, "problems", [error.message]))
        else:
            messages.success(request, "Saved the information need and notes.")
            return redirect("insights:keyword_detail", evaluation_id, keyword_id)
    return _keyword_page(request, keyword, form, status=400)


@require_POST
@lead_required
def slot_reset(request: TeamRequest, evaluation_id: int, slot_id: int) -> HttpResponse:
    """A lead clears one grade; with htmx the result's row comes back redrawn."""
    team_id = request.membership.team_id
    slot = slot_in_team(slot_id=slot_id, evaluation_id=evaluation_id, team_id=team_id)
    if slot is None:
        raise Http404("No such grade.")
    error = ""
    try:
        services.slot_reset_by_lead(slot=slot, lead=request.user, team_id=team_id)
    except DomainError as problem:
        error = problem.message
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, "The grade is reset; the result is back in the queue.")
        return redirect("insights:keyword_detail", evaluation_id, slot.keyword_id)
    [row] = keyword_snapshots(slot.keyword, snapshot_id=slot.snapshot_id)
    return render(
        request,
        "insights/_snapshot_row.html",
        {
            "snapshot": row,
            "evaluation": slot.evaluation,
            "keyword": slot.keyword,
            "error": error,
            "reset_slot": slot.id,
            "fresh_values": [] if error else keyword_values(slot.keyword),
        },
        status=400 if error else 200,
    )


@team_member_required
def leaderboard(request: TeamRequest) -> HttpResponse:
    """Graded slots per member over a date range, for everyone in the team; the team's
    AI judges apart."""
    team_id = request.membership.team_id
    form = LeaderboardForm(request.GET, tags=Tag.objects.filter(team_id=team_id))
    if not form.is_valid():
        return render(
            request,
            "insights/leaderboard.html",
            {"form": form, "problems": form_problems(form)},
            status=400,
        )
    query = form.cleaned_data
    tag = query.get("tag")
    rows = leaderboard_rows(
        team_id=team_id, start=query["from"], end=query["to"], tag_id=tag.id if tag else None
    )
    return render(
        request,
        "insights/leaderboard.html",
        {
            "form": form,
            "rows": rows,
            "total": sum(row.graded for row in rows),
            "chart": leaderboard_chart(rows),
            "judges": judge_leaderboard(team_id=team_id, start=query["from"], end=query["to"]),
            "start": query["from"],
            "end": query["to"],
            "tag": tag,
        },
    )


@lead_required
def model_history(request: TeamRequest, model_id: int) -> HttpResponse:
    """Each metric across a search model's finished evaluations, oldest to newest."""
    team_id = request.membership.team_id
    model = get_object_or_404(SearchModel, id=model_id, team_id=team_id)
    return render(
        request,
        "insights/model_history.html",
        {"model": model, "history": model_history_of(search_model_id=model.id)},
    )


@team_member_required
def dashboard(request: TeamRequest) -> HttpResponse:
    """The home page: what waits for the grader, the team's active evaluations and, for a
    lead, the pinned evaluations and metrics. Live: its content follows the team's
    changes (live_views.live_dashboard)."""
    team_id = request.membership.team_id
    live_url = reverse("insights:live_dashboard", args=[team_id])
    return render(
        request,
        "insights/dashboard.html",
        {"live": live_page(live.team_topic(team_id), live_url), **dashboard_context(request)},
    )
