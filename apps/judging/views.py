"""The grader's pages: the dashboard and "Give feedback".

After a grade or a skip the next result is returned as a fragment and swapped in by
htmx; without htmx the same forms work with a full page load.
"""

from datetime import datetime
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template import engines
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import urlencode
from django.urls import get_script_prefix, reverse
from django.utils.dateparse import parse_datetime
from django.utils.safestring import SafeString
from django.utils.timezone import localtime
from django.views.decorators.http import require_POST

from apps.accounts.decorators import team_member_required
from apps.accounts.requests import TeamRequest
from apps.accounts.selectors import is_lead
from apps.core.errors import DomainError, InvalidState, NotFound
from apps.core.markdown import render_markdown
from apps.core.typed import SMALLINT_MAX, SMALLINT_MIN, parse_id, parse_int
from apps.evaluations.keyword_notes import information_need_of
from apps.evaluations.models import Evaluation, FeedbackSlot

from . import judgements, selectors, services
from .judgements import Action, Giver

# The queue each request opens (None: the person's own), while the request lives.
_queues: WeakKeyDictionary[HttpRequest, Evaluation | None] = WeakKeyDictionary()


def _queue_evaluation(request: TeamRequest) -> Evaluation | None:
    """A lead may open the queue of one evaluation (?evaluation=ID), tags aside.

    Read once per request: the views ask for it before writing and again to answer.
    """
    if request in _queues:
        return _queues[request]
    evaluation_id = request.GET.get("evaluation") or request.POST.get("evaluation")
    queue = None
    if evaluation_id:
        membership = request.membership
        if not is_lead(membership):
            raise Http404("Only leads can open one evaluation's queue.")
        queue = get_object_or_404(
            Evaluation, id=parse_id(evaluation_id) or 0, team_id=membership.team_id
        )
    _queues[request] = queue
    return queue


@lru_cache(maxsize=64)
def _guidelines(text: str) -> SafeString:
    """The sanitised HTML of an evaluation's guidelines, rendered once per process per
    text (keyed by the text itself, so an edit is seen at once): every card shows them,
    and Markdown plus sanitising cost more than the rest of the card."""
    return render_markdown(text) if text else SafeString("")


def _card_urls(slot: FeedbackSlot | None, *, reviewing: bool) -> dict[str, str]:
    """The card's links (the card shows most of them twice)."""
    urls = _url_forms(get_script_prefix())
    previous = urls["previous"]
    if slot is None:
        return {"previous": previous, "dashboard": urls["dashboard"]}
    if reviewing:
        # As {{ slot.graded_at|date:'c'|urlencode }} would write it.
        previous += "?before=" + urlencode(date_filter(localtime(slot.graded_at), "c"))
    return {
        "grade": urls["grade"].replace(SLOT_MARKER, str(slot.id)),
        "skip": urls["skip"].replace(SLOT_MARKER, str(slot.id)),
        "previous": previous,
        "feedback": urls["feedback"],
    }


# Stands for a slot's id in the links _url_forms keeps (no other part of a path is it).
SLOT_MARKER = "2147483647"


@lru_cache(maxsize=8)
def _url_forms(script_prefix: str) -> dict[str, str]:
    """The card's links under this script prefix, reversed once per process: reversing
    them for every card cost a tenth of a millisecond. A slot's links hold SLOT_MARKER."""
    views = {
        "grade": "judging:feedback_grade",
        "skip": "judging:feedback_skip",
        "previous": "judging:feedback_previous",
        "feedback": "judging:feedback",
        "dashboard": "insights:dashboard",
    }
    return {
        name: reverse(view, args=[int(SLOT_MARKER)] if name in ("grade", "skip") else None)
        for name, view in views.items()
    }


def _card_context(
    request: TeamRequest,
    slot: FeedbackSlot | None,
    *,
    reviewing: bool,
    grades_today: int | None = None,
) -> dict:
    if grades_today is None:  # not counted by the claim
        grades_today = selectors.grades_today(user=request.user)
    context: dict = {
        "slot": slot,
        "error": None,
        "reviewing": reviewing,
        "grades_today": grades_today,
        "queue_evaluation": _queue_evaluation(request),
        "urls": _card_urls(slot, reviewing=reviewing),
    }
    if slot is not None:
        scale = slot.evaluation.grading_scale
        context.update(
            evaluation=slot.evaluation,
            buttons=[
                (grade, scale.label_of(grade), key)
                for grade, key in zip(scale.grades, scale.keys, strict=True)
            ],
            guidelines=_guidelines(slot.evaluation.scoring_guidelines),
            attributes=sorted((slot.snapshot.attributes or {}).items()),
            # Its own read: the claim's statement reads no keyword notes (keyword_notes).
            information_need=information_need_of(slot.keyword_id),
        )
    return context


def _render_card(
    request: TeamRequest,
    slot: FeedbackSlot | None,
    *,
    reviewing: bool = False,
    grades_today: int | None = None,
) -> HttpResponse:
    context = _card_context(request, slot, reviewing=reviewing, grades_today=grades_today)
    return _card_response(request, context)


def _card_response(request: TeamRequest, context: dict, status: int = 200) -> HttpResponse:
    """The card alone for htmx to swap in, else the Give feedback page around it."""
    card = engines["jinja2"].get_template(CARD_TEMPLATE).render(context, request)
    if request.htmx:
        return HttpResponse(card, status=status)
    return render(request, "judging/feedback.html", {"card": SafeString(card)}, status=status)


# A Jinja2 template (settings.TEMPLATES): the one template rendered on every grade.
CARD_TEMPLATE = "judging/card.html"


def _next_slot(request: TeamRequest) -> services.NextSlot:
    return services.slot_claim_next_for_card(
        membership=request.membership,
        evaluation=_queue_evaluation(request),
    )


def _next_slot_after_action(request: TeamRequest) -> services.NextSlot:
    """As _next_slot, but a lead's queue whose evaluation just finished (the last grade
    may have finished it) simply ends: the empty state, not an error."""
    try:
        return _next_slot(request)
    except InvalidState:
        return services.NextSlot(None)


def _next_card_context(request: TeamRequest) -> dict:
    given = _next_slot_after_action(request)
    return _card_context(request, given.slot, reviewing=False, grades_today=given.grades_today)


@team_member_required
def feedback(request: TeamRequest) -> HttpResponse:
    try:
        given = _next_slot(request)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("insights:dashboard")
    return _render_card(request, given.slot, grades_today=given.grades_today)


def _after_action(request: TeamRequest) -> HttpResponse:
    if not request.htmx:
        url = reverse("judging:feedback")
        queue = _queue_evaluation(request)
        return redirect(f"{url}?evaluation={queue.id}" if queue else url)
    given = _next_slot_after_action(request)
    return _render_card(request, given.slot, grades_today=given.grades_today)


def _judge(request: TeamRequest, slot_id: int, action: Action, grade: Any = None) -> HttpResponse:
    """Grade or skip the grader's slot, then answer with the next card (htmx) or a
    redirect. Another team's slot does not exist for them; one of the team never given
    to this grader is refused by the grade writer."""
    _queue_evaluation(request)  # refuses a queue the person may not open, before any write
    try:
        judgements.slot_judge(
            slot_id=slot_id,
            giver=Giver.grader(request.user),
            action=action,
            grade=grade,
            reason=request.POST.get("reason", "").strip(),
            team_id=request.membership.team_id,
        )
    except NotFound:
        raise Http404("No such result.") from None
    except DomainError as error:
        if action == Action.GRADE and request.htmx:
            context = _next_card_context(request)
            context["error"] = error.message
            return _card_response(request, context, status=400)
        messages.error(request, error.message)
        if action == Action.GRADE:
            return redirect("judging:feedback")
    return _after_action(request)


@require_POST
@team_member_required
def grade(request: TeamRequest, slot_id: int) -> HttpResponse:
    # Any grade a smallint holds reaches the scale's check, which names it; anything else
    # (not a whole number, past the column) is None, which no scale has.
    value = parse_int(request.POST.get("grade", ""), SMALLINT_MIN, SMALLINT_MAX)
    return _judge(request, slot_id, Action.GRADE, value)


@require_POST
@team_member_required
def skip(request: TeamRequest, slot_id: int) -> HttpResponse:
    return _judge(request, slot_id, Action.SKIP)


@team_member_required
def previous(request: TeamRequest) -> HttpResponse:
    """Reopen the grader's last graded result; ?before= walks further back."""
    before: datetime | None = None
    try:
        before = parse_datetime(request.GET.get("before") or "")
    except ValueError:  # well formed but impossible, e.g. month 13: start from the latest
        before = None
    team_id = request.membership.team_id
    slot = selectors.previous_graded_slot(user=request.user, team_id=team_id, before=before)
    if slot is None:
        if request.htmx:
            context = _next_card_context(request)
            context["error"] = "There is no earlier grade to go back to."
            return _card_response(request, context)
        messages.info(request, "There is no earlier grade to go back to.")
        return redirect("judging:feedback")
    return _render_card(request, slot, reviewing=True)
