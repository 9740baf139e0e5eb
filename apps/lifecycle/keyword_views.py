"""The keywords of a pending evaluation, from its edit page (keyword_listing.py lists
them there): add, rename and remove (after a confirmation). The rules are
keyword_editing's.

As for the edit page, only leads use them, another team's evaluation or a keyword of
another evaluation answers 404, and an evaluation that is not pending answers 409 with
why. Each POST goes back to the edit page's keyword list with what happened.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import DomainError, InvalidInput
from apps.evaluations.models import Evaluation, Keyword, Status

from .forms import KeywordRenameForm, KeywordsAddForm, put_problems
from .keyword_editing import evaluation_keywords_add, keyword_remove, keyword_rename
from .views import edit_refused, team_evaluation


def _editable(request: TeamRequest, evaluation_id: int) -> Evaluation | HttpResponse:
    evaluation = team_evaluation(request, evaluation_id)
    if evaluation.status != Status.PENDING or evaluation.fetching:
        return edit_refused(request, evaluation)
    return evaluation


def _back_to_list(evaluation: Evaluation) -> HttpResponse:
    return redirect(reverse("evaluations:evaluation_edit", args=[evaluation.id]) + "#keywords")


def _keywords(count: int) -> str:
    return f"{count} keyword{'s' if count != 1 else ''}"


@require_http_methods(["GET", "POST"])
@lead_required
def keywords_add_page(request: TeamRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _editable(request, evaluation_id)
    if isinstance(evaluation, HttpResponse):
        return evaluation
    form = KeywordsAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        typed = form.cleaned_data["new_keywords"]
        try:
            added = evaluation_keywords_add(evaluation=evaluation, texts=typed)
        except InvalidInput as error:
            put_problems(form, error.problems)
        except DomainError as error:
            messages.error(request, f"Not added: {error.message}.")
            return _back_to_list(evaluation)
        else:
            skipped = len(typed) - len(added)
            already = f"; {_keywords(skipped)} already listed" if skipped else ""
            messages.success(request, f"Added {_keywords(len(added))}{already}.")
            return _back_to_list(evaluation)
    return render(
        request,
        "evaluations/keyword_form.html",
        {"evaluation": evaluation, "form": form, "keyword": None},
        status=400 if form.errors else 200,
    )


def _team_keyword(evaluation: Evaluation, keyword_id: int) -> Keyword:
    return get_object_or_404(Keyword, id=keyword_id, evaluation=evaluation)


@require_http_methods(["GET", "POST"])
@lead_required
def keyword_edit_page(request: TeamRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    evaluation = _editable(request, evaluation_id)
    if isinstance(evaluation, HttpResponse):
        return evaluation
    keyword = _team_keyword(evaluation, keyword_id)
    old_text = keyword.text
    form = KeywordRenameForm(request.POST or None, initial={"keyword": keyword.text})
    if request.method == "POST" and form.is_valid():
        try:
            keyword = keyword_rename(keyword=keyword, text=form.cleaned_data["keyword"])
        except InvalidInput as error:
            put_problems(form, error.problems)
        except DomainError as error:
            messages.error(request, f"Not changed: {error.message}.")
            return _back_to_list(evaluation)
        else:
            if keyword.text == old_text:
                messages.info(request, f"'{old_text}' is unchanged.")
            else:
                messages.success(request, f"Changed '{old_text}' to '{keyword.text}'.")
            return _back_to_list(evaluation)
    return render(
        request,
        "evaluations/keyword_form.html",
        {
            "evaluation": evaluation,
            "form": form,
            "keyword": keyword,
            "result_count": keyword.snapshots.count(),
        },
        status=400 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
@lead_required
def keyword_remove_page(request: TeamRequest, evaluation_id: int, keyword_id: int) -> HttpResponse:
    evaluation = _editable(request, evaluation_id)
    if isinstance(evaluation, HttpResponse):
        return evaluation
    keyword = _team_keyword(evaluation, keyword_id)
    if request.method == "GET":
        return render(
            request,
            "evaluations/keyword_remove.html",
            {
                "evaluation": evaluation,
                "keyword": keyword,
                "result_count": keyword.snapshots.count(),
                "graded_count": keyword.slots.filter(grade__isnull=False).count(),
            },
        )
    try:
        keyword_remove(keyword=keyword)
    except DomainError as error:
        messages.error(request, f"Not removed: {error.message}.")
    else:
        messages.success(request, f"Removed '{keyword.text}'.")
    return _back_to_list(evaluation)
