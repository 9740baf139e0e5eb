"""The grader's pages: the dashboard and "Give feedback".

After a grade or a skip the next result is returned as a fragment and swapped in by
htmx; without htmx the same forms work with a full page load.
"""

from dataclasses import dataclass
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

from apps import engine
from apps.accounts.decorators import team_member_required
from apps.accounts.requests import TeamRequest
from apps.accounts.selectors import is_lead
from apps.core.errors import DomainError, InvalidState, NotFound
from apps.core.markdown import render_markdown
from apps.core.typed import SMALLINT_MAX, SMALLINT_MIN, parse_id, parse_int
from apps.evaluations.keyword_notes import information_need_of
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip

from . import judgements, selectors, services
from .judgements import Action, Giver

# The queue each request opens (None: the person's own), while the request lives.
_queues: WeakKeyDictionary[HttpRequest, Evaluation | None] = WeakKeyDictionary()


def _queue_evaluation(request: TeamRequest) -> Evaluation | None:
    """The queue of one evaluation of the team (?evaluation=ID): a lead's any, tags
    aside; a grader's one of their pool (one whose tags they all hold: the dashboard's
    cards and a lead's shared link open it). Another team's, or a grader's without its
    tags, is 404.

    Read once per request: the views ask for it before writing and again to answer.
    """
    if request in _queues:
        return _queues[request]
    evaluation_id = request.GET.get("evaluation") or request.POST.get("evaluation")
    queue = None
    if evaluation_id:
        membership = request.membership
        queue = get_object_or_404(
            Evaluation, id=parse_id(evaluation_id) or 0, team_id=membership.team_id
        )
        if not is_lead(membership) and not selectors.holds_every_tag(membership, queue):
            raise Http404("No such evaluation.")
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


@dataclass(frozen=True)
class Confirmation:
    """What the grader is told after a grade, in the page's live region, and how to take
    it back: Undo posts to `undo_url`, with `earlier` (the grade it replaced) if any."""

    text: str
    undo_url: str = ""
    earlier: int | None = None


def _confirmation(
    slot_id: int, scale: engine.Scale, grade: int, earlier: int | None
) -> Confirmation:
    undo_url = reverse("judging:feedback_undo", args=[slot_id])
    if earlier is None or not scale.is_grade(earlier):  # a first grade (or a forged earlier)
        return Confirmation(f"Graded {scale.label_of(grade)}", undo_url)
    text = f"Changed {scale.label_of(earlier)} to {scale.label_of(grade)}"
    return Confirmation(text, undo_url, earlier)


SKIPPED = Confirmation("Skipped: Previous brings it back if you change your mind")


def _earlier_grade(request: TeamRequest) -> int | None:
    """The grade a changed grade replaced, as the card of an earlier grade sent it (Undo
    puts it back through the grade writer, which checks it is on the scale)."""
    return parse_int(request.POST.get("earlier", ""), SMALLINT_MIN, SMALLINT_MAX)


def _card_context(
    request: TeamRequest,
    slot: FeedbackSlot | None,
    *,
    reviewing: bool,
    grades_today: int | None = None,
    confirmation: Confirmation | None = None,
) -> dict:
    if grades_today is None:  # not counted by the claim
        grades_today = selectors.grades_today(user=request.user)
    context: dict = {
        "slot": slot,
        "confirmation": confirmation,
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
    confirmation: Confirmation | None = None,
) -> HttpResponse:
    context = _card_context(
        request, slot, reviewing=reviewing, grades_today=grades_today, confirmation=confirmation
    )
    return _card_response(request, context)


def _card_response(
    request: TeamRequest, context: dict, status: int = 200, template: str = ""
) -> HttpResponse:
    """The card alone for htmx to swap in, else the Give feedback page around it."""
    card = engines["jinja2"].get_template(template or CARD_TEMPLATE).render(context, request)
    if request.htmx:
        return HttpResponse(card, status=status)
    return render(request, "judging/feedback.html", {"card": SafeString(card)}, status=status)


# A Jinja2 template (settings.TEMPLATES): the one template rendered on every grade.
CARD_TEMPLATE = "judging/card.html"
# The grader's skip, met again going back through their history (Jinja2 too).
SKIPPED_CARD_TEMPLATE = "judging/skipped_card.html"


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


def _after_action(request: TeamRequest, confirmation: Confirmation | None = None) -> HttpResponse:
    """The next card (htmx, with the confirmation in the page's live region), or a
    redirect to it (the confirmation as a message, without Undo: Previous changes it)."""
    if not request.htmx:
        if confirmation is not None:
            messages.success(request, f"{confirmation.text}.")
        url = reverse("judging:feedback")
        queue = _queue_evaluation(request)
        return redirect(f"{url}?evaluation={queue.id}" if queue else url)
    given = _next_slot_after_action(request)
    return _render_card(
        request, given.slot, grades_today=given.grades_today, confirmation=confirmation
    )


def _judge(request: TeamRequest, slot_id: int, action: Action, grade: Any = None) -> HttpResponse:
    """Grade or skip the grader's slot, then answer with the next card (htmx) or a
    redirect. Another team's slot does not exist for them; one of the team never given
    to this grader is refused by the grade writer."""
    _queue_evaluation(request)  # refuses a queue the person may not open, before any write
    try:
        scale = judgements.slot_judge(
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
    if action == Action.SKIP:
        return _after_action(request, SKIPPED)
    return _after_action(request, _confirmation(slot_id, scale, grade, _earlier_grade(request)))


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


@require_POST
@team_member_required
def undo(request: TeamRequest, slot_id: int) -> HttpResponse:
    """Take back the grader's grade of a slot (the confirmation's Undo): the grade it
    replaced is back (`earlier`), or the result is theirs to grade again; its card."""
    _queue_evaluation(request)
    earlier = _earlier_grade(request)
    try:
        scale = judgements.slot_judge(
            slot_id=slot_id,
            giver=Giver.grader(request.user),
            action=Action.UNDO,
            grade=earlier,
            team_id=request.membership.team_id,
        )
    except NotFound:
        raise Http404("No such result.") from None
    except DomainError as error:
        return _refused(request, error.message)
    if earlier is None:
        confirmation = Confirmation("Grade taken back: grade this result again")
    else:
        confirmation = Confirmation(f"Back to {scale.label_of(earlier)}")
    if not request.htmx:
        messages.success(request, f"{confirmation.text}.")
    slot = selectors.slot_for_display(slot_id)
    return _render_card(request, slot, reviewing=earlier is not None, confirmation=confirmation)


@require_POST
@team_member_required
def unskip(request: TeamRequest, snapshot_id: int) -> HttpResponse:
    """Take back the grader's skip of a result (from their history): they hold one of its
    slots again when one is free, and its card is shown; else the next card says why."""
    _queue_evaluation(request)
    try:
        slot_id = judgements.skip_undo(
            snapshot_id=snapshot_id,
            giver=Giver.grader(request.user),
            team_id=request.membership.team_id,
        )
    except NotFound:
        raise Http404("No such skip.") from None
    if slot_id is None:
        return _refused(
            request, "Skip taken back, but the result is with other graders now or done."
        )
    confirmation = Confirmation("Skip taken back: grade this result")
    if not request.htmx:
        messages.success(request, f"{confirmation.text}.")
    return _render_card(request, selectors.slot_for_display(slot_id), confirmation=confirmation)


def _refused(request: TeamRequest, message: str) -> HttpResponse:
    """The next card with the reason on it (htmx), else the queue with it as a message."""
    if request.htmx:
        context = _next_card_context(request)
        context["error"] = message
        return _card_response(request, context)
    messages.error(request, message)
    return _after_action(request)  # back to the queue the grader was in


def _skipped_card(request: TeamRequest, skip: SnapshotSkip) -> HttpResponse:
    """A skip met going back: the result, the reason, Undo the skip, further back."""
    before = urlencode(date_filter(localtime(skip.created_at), "c"))
    context = {
        "skip": skip,
        "snapshot": skip.snapshot,
        "keyword": skip.snapshot.keyword,
        "evaluation": skip.snapshot.keyword.evaluation,
        "queue_evaluation": _queue_evaluation(request),
        "urls": {
            "previous": f"{reverse('judging:feedback_previous')}?before={before}",
            "feedback": reverse("judging:feedback"),
            "unskip": reverse("judging:feedback_unskip", args=[skip.snapshot_id]),
        },
    }
    return _card_response(request, context, template=SKIPPED_CARD_TEMPLATE)


@team_member_required
def previous(request: TeamRequest) -> HttpResponse:
    """Reopen the grader's last graded or skipped result; ?before= walks further back."""
    before: datetime | None = None
    try:
        before = parse_datetime(request.GET.get("before") or "")
    except ValueError:  # well formed but impossible, e.g. month 13: start from the latest
        before = None
    team_id = request.membership.team_id
    slot = selectors.previous_judgement(user=request.user, team_id=team_id, before=before)
    if isinstance(slot, SnapshotSkip):
        return _skipped_card(request, slot)
    if slot is None:
        if request.htmx:
            context = _next_card_context(request)
            context["error"] = "There is no earlier grade to go back to."
            return _card_response(request, context)
        messages.info(request, "There is no earlier grade to go back to.")
        return redirect("judging:feedback")
    return _render_card(request, slot, reviewing=True)
