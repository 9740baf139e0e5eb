"""The lead's pages for tries: a search model's tries with the form that starts one, a
try's page (its progress while it runs, then its verdict, lists and what to do next),
and a try against any other try of the team.

Every object is looked up inside the current team, so another team's answers 404; the
pages are for leads (an evaluator gets 403). The services hold every rule: a problem
they find is put beside the field it names, or shown as a message after a button.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import DomainError, InvalidInput
from apps.core.forms import add_problems
from apps.core.typed import parse_id
from apps.endpoints.models import SearchModel
from apps.judges.models import Judge

from . import page_data
from .actions import try_fill_with_judge, try_promote, try_send_to_people
from .forms import FillForm, NotesForm, TryForm, initial_for, initial_from, located, try_label
from .models import Try, TryState
from .report import TryReport, try_report
from .starting import try_check, try_start
from .verdict import MIN_JUDGED

TRIES_PER_PAGE = 25
QUERIES_PER_PAGE = 20
COMPARE_CHOICES = 200  # the team's newest tries offered to compare with


def _model(request: TeamRequest, model_id: int) -> SearchModel:
    return get_object_or_404(
        SearchModel.objects.select_related("endpoint"),
        id=model_id,
        team_id=request.membership.team_id,
    )


def _try(request: TeamRequest, try_id: int) -> Try:
    return get_object_or_404(
        Try.objects.select_related(
            "search_model__endpoint",
            "baseline_try",
            "baseline_evaluation",
            "query_evaluation",
            "evaluation",
            "promoted_model",
        ),
        id=try_id,
        team_id=request.membership.team_id,
    )


def _to_try(attempt: Try) -> HttpResponse:
    return redirect("tries:try_detail", attempt.id)


# --- A model's tries, and a new one ------------------------------------------------------


@lead_required
def model_tries(request: TeamRequest, model_id: int) -> HttpResponse:
    model = _model(request, model_id)
    earlier = _earlier(request, model)
    if request.method == "POST":
        form = TryForm(request.POST, model=model)
        attempt = _started(request, form)
        if attempt is not None:
            messages.success(request, f"Started try {attempt.number} of {model.name}.")
            return _to_try(attempt)
    else:
        initial = initial_from(earlier) if earlier else initial_for(model)
        form = TryForm(initial=initial, model=model)
    tries = Paginator(
        Try.objects.filter(search_model=model).select_related(
            "baseline_try", "baseline_evaluation"
        ),
        TRIES_PER_PAGE,
    ).get_page(request.GET.get("page"))
    rows = [
        (attempt, try_report(attempt).verdict if attempt.state == TryState.DONE else None)
        for attempt in tries
    ]
    context = {
        "model": model,
        "form": form,
        "tries": tries,
        "rows": rows,
        "earlier": earlier or form.kept_from,
        "problems": _problems(form),
    }
    return render(request, "tries/model_tries.html", context)


def _earlier(request: TeamRequest, model: SearchModel) -> Try | None:
    """The try a new one's form is filled from ("Try again from this one")."""
    chosen = parse_id(request.GET.get("from", ""))
    if chosen is None:
        return None
    return Try.objects.filter(id=chosen, search_model=model).select_related("baseline_try").first()


def _started(request: TeamRequest, form: TryForm) -> Try | None:
    """The try started, or None with every problem beside its field (nothing saved)."""
    if not form.is_valid():
        return None
    asked, problems, lines = form.asked()
    if problems:
        # The lines' problems and the service's, all at once, nothing saved.
        try:
            try_check(team=request.membership.team, asked=asked)
        except InvalidInput as error:
            problems += located(error.problems, lines)
        add_problems(form, problems)
        return None
    try:
        return try_start(team=request.membership.team, user=request.user, asked=asked)
    except InvalidInput as error:
        add_problems(form, located(error.problems, lines))
        return None


def _problems(form: TryForm) -> list[str]:
    """Every problem of the form in one list above it, each naming its field."""
    if not form.is_bound or not form.errors:
        return []
    shown = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else ""
        shown += [f"{label}: {error}" if label else str(error) for error in errors]
    return shown


# --- A try --------------------------------------------------------------------------------


@lead_required
def try_detail(request: TeamRequest, try_id: int) -> HttpResponse:
    attempt = _try(request, try_id)
    done = attempt.state == TryState.DONE
    with_clicks = request.GET.get("clicks") == "1"
    report = try_report(attempt, with_clicks=with_clicks) if done else None
    context = {
        **_report_context(request, attempt, report),
        "with_clicks": with_clicks,
        "clicks_available": page_data.has_click_judgements(attempt),
        "notes_form": NotesForm(initial={"notes": attempt.notes}),
        "changes": page_data.changes(attempt, attempt.baseline_try),
        "others": _others(request, attempt),
    }
    if report is not None:
        holes = page_data.unjudged_results(report)
        offers = page_data.judge_offers(request.membership.team_id, holes)
        assignable = [(o.judge_id, o.name) for o in offers if not o.below_rule]
        context |= {
            "holes": holes,
            "offers": offers,
            "fill_form": FillForm(judges=assignable),
        }
    return render(request, "tries/try_detail.html", context)


@lead_required
def try_progress(request: TeamRequest, try_id: int) -> HttpResponse:
    """The progress, polled while the try runs; once it is done (or failed) the page
    reloads to show its report."""
    attempt = _try(request, try_id)
    response = render(request, "tries/_progress.html", {"attempt": attempt})
    if attempt.state in (TryState.DONE, TryState.FAILED):
        response["HX-Refresh"] = "true"
    return response


@lead_required
def try_against(request: TeamRequest, try_id: int, other_id: int) -> HttpResponse:
    """The try against any other try of the team, of any model."""
    attempt = _try(request, try_id)
    other = _try(request, other_id)
    report = try_report(attempt, against=other) if attempt.state == TryState.DONE else None
    context = {
        **_report_context(request, attempt, report),
        "other": other,
        "changes": page_data.changes(attempt, other),
        "others": _others(request, attempt),
    }
    return render(request, "tries/try_against.html", context)


@lead_required
@require_GET
def try_compare(request: TeamRequest, try_id: int) -> HttpResponse:
    """The compare form's answer: the page of the try against the one chosen."""
    attempt = _try(request, try_id)
    chosen = parse_id(request.GET.get("other", ""))
    other = Try.objects.filter(id=chosen, team_id=attempt.team_id).first() if chosen else None
    if other is None:
        messages.error(request, "other: choose another try of the team to compare with.")
        return _to_try(attempt)
    return redirect("tries:try_against", attempt.id, other.id)


def _report_context(request: TeamRequest, attempt: Try, report: TryReport | None) -> dict[str, Any]:
    context: dict[str, Any] = {"attempt": attempt, "model": attempt.search_model, "report": report}
    if report is None:
        return context
    panels = Paginator(page_data.query_panels(report), QUERIES_PER_PAGE)
    queries = panels.get_page(request.GET.get("page"))
    return context | {
        "first": report.metrics[0] if report.metrics else None,
        "sentence": page_data.verdict_sentence(report),
        "judged_by": page_data.judged_by(report),
        "summary": [
            (panel, (number - 1) // QUERIES_PER_PAGE + 1, number)
            for number, panel in enumerate(panels.object_list, 1)
        ],
        "queries": queries,
        "min_judged": MIN_JUDGED,
    }


def _others(request: TeamRequest, attempt: Try) -> list[tuple[int, str]]:
    """The team's other tries, newest first, to compare this one with."""
    others = (
        Try.objects.filter(team_id=request.membership.team_id)
        .exclude(id=attempt.id)
        .select_related("search_model")
        .order_by("-created_at", "-id")[:COMPARE_CHOICES]
    )
    return [
        (other.id, f"{other.search_model.name}, {try_label(other.number, other.notes).lower()}")
        for other in others
    ]


# --- What a lead does with a try ----------------------------------------------------------


@lead_required
@require_POST
def try_notes(request: TeamRequest, try_id: int) -> HttpResponse:
    attempt = _try(request, try_id)
    form = NotesForm(request.POST)
    if not form.is_valid():
        for error in form.errors.get("notes", []):
            messages.error(request, f"notes: {error}")
        return _to_try(attempt)
    notes = form.cleaned_data["notes"]
    return _acted(
        request,
        attempt,
        lambda: page_data.try_notes_set(attempt=attempt, notes=notes),
        lambda: "Saved the notes.",
    )


@lead_required
@require_POST
def try_fill(request: TeamRequest, try_id: int) -> HttpResponse:
    attempt = _try(request, try_id)
    judges = Judge.objects.filter(team_id=attempt.team_id)
    form = FillForm(request.POST, judges=list(judges.values_list("id", "name")))
    if not form.is_valid():
        messages.error(request, "judge: choose one of the team's AI judges.")
        return _to_try(attempt)
    judge = judges.get(id=form.cleaned_data["judge"])
    return _acted(
        request,
        attempt,
        lambda: try_fill_with_judge(attempt=attempt, judge=judge, user=request.user),
        lambda: (
            f"{judge.name} is grading the try's unjudged results; the report counts "
            "each grade as it comes."
        ),
    )


@lead_required
@require_POST
def try_send(request: TeamRequest, try_id: int) -> HttpResponse:
    attempt = _try(request, try_id)
    return _acted(
        request,
        attempt,
        lambda: try_send_to_people(attempt=attempt, user=request.user),
        lambda: (
            f"Sent to people: the evaluation {attempt.evaluation} asks them for the "
            "results nobody has judged."
        ),
    )


@lead_required
@require_POST
def try_promote_view(request: TeamRequest, try_id: int) -> HttpResponse:
    attempt = _try(request, try_id)
    return _acted(
        request,
        attempt,
        lambda: try_promote(attempt=attempt, user=request.user),
        lambda: f"Promoted to the search model {attempt.promoted_model}.",
    )


def _acted(
    request: TeamRequest, attempt: Try, action: Callable[[], object], said: Callable[[], str]
) -> HttpResponse:
    """Back to the try, saying what the service did, or why it refused."""
    try:
        action()
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, said())
    return _to_try(attempt)
