"""The lead's pages for search endpoints and search models, and "Test model".

Every object is looked up inside the current team, so another team's answers 404; the
pages are for leads (an evaluator gets 403). "Test model" posts with htmx and swaps the
result in place; without JavaScript the same form posts and the page comes back whole.
"""

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.contrib import messages
from django.forms import Form
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput, InvalidState
from apps.core.forms import add_problems

from . import selectors, services
from .forms import EndpointForm, ModelTestForm, SearchModelForm
from .models import SearchEndpoint, SearchModel
from .name_value_lines import keyword_lines

Saved = TypeVar("Saved", SearchEndpoint, SearchModel)


def _team_id(request: TeamRequest) -> int:
    return request.membership.team_id


def _endpoint(request: TeamRequest, endpoint_id: int) -> SearchEndpoint:
    return get_object_or_404(SearchEndpoint, id=endpoint_id, team_id=_team_id(request))


def _model(request: TeamRequest, model_id: int) -> SearchModel:
    return get_object_or_404(
        SearchModel.objects.select_related("endpoint"), id=model_id, team_id=_team_id(request)
    )


# --- Endpoints --------------------------------------------------------------------------


@lead_required
def endpoint_list(request: TeamRequest) -> HttpResponse:
    endpoints = selectors.team_endpoints(team_id=_team_id(request))
    return render(request, "endpoints/endpoint_list.html", {"endpoints": endpoints})


@lead_required
def endpoint_create(request: TeamRequest) -> HttpResponse:
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        created = _saved(
            form,
            lambda: services.endpoint_create(
                team=request.membership.team,
                created_by=request.user,
                **form.cleaned_data,
            ),
        )
        if created is not None:
            messages.success(request, f"Created the endpoint {created.name}.")
            return redirect("endpoints:endpoint_detail", created.id)
    return render(request, "endpoints/endpoint_form.html", {"form": form, "endpoint": None})


@lead_required
def endpoint_detail(request: TeamRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    return render(
        request,
        "endpoints/endpoint_detail.html",
        {
            "endpoint": endpoint,
            "mapper_json": json.dumps(endpoint.mapper, indent=2, ensure_ascii=False),
            "models": selectors.endpoint_models(endpoint=endpoint),
        },
    )


@lead_required
def endpoint_edit(request: TeamRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    form = EndpointForm(request.POST or None, initial=EndpointForm.initial_for(endpoint))
    if request.method == "POST" and form.is_valid():
        saved = _saved(
            form, lambda: services.endpoint_update(endpoint=endpoint, **form.cleaned_data)
        )
        if saved is not None:
            messages.success(request, f"Saved the endpoint {saved.name}.")
            return redirect("endpoints:endpoint_detail", endpoint.id)
    return render(request, "endpoints/endpoint_form.html", {"form": form, "endpoint": endpoint})


@require_http_methods(["GET", "POST"])
@lead_required
def endpoint_delete(request: TeamRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    return _confirm_delete(
        request,
        endpoint,
        kind="endpoint",
        delete=lambda: services.endpoint_delete(endpoint=endpoint),
        users=selectors.endpoint_models(endpoint=endpoint),
        users_kind="search models",
        pages=("endpoints:endpoint_detail", "endpoints:endpoint_list"),
    )


# --- Models -----------------------------------------------------------------------------


@lead_required
def model_list(request: TeamRequest) -> HttpResponse:
    models = selectors.team_models(team_id=_team_id(request))
    return render(request, "endpoints/model_list.html", {"models": models})


@lead_required
def model_create(request: TeamRequest) -> HttpResponse:
    team_id = _team_id(request)
    form = SearchModelForm(
        request.POST or None, team_id=team_id, initial={"endpoint": request.GET.get("endpoint")}
    )
    if request.method == "POST" and form.is_valid():
        model = _saved(
            form,
            lambda: services.model_create(
                team=request.membership.team,
                created_by=request.user,
                **form.cleaned_data,
            ),
        )
        if model is not None:
            messages.success(request, f"Created the model {model.name}. Try a keyword below.")
            return redirect("endpoints:search_model_detail", model.id)
    return render(
        request,
        "endpoints/model_form.html",
        {"form": form, "model": None, "has_endpoints": _has_endpoints(team_id)},
    )


@lead_required
def model_detail(request: TeamRequest, model_id: int) -> HttpResponse:
    model = _model(request, model_id)
    return render(
        request,
        "endpoints/model_detail.html",
        {
            "model": model,
            "evaluations": selectors.model_evaluations(model=model),
            **_test_context(model, ModelTestForm(initial=_first_keyword(model)), None),
        },
    )


@lead_required
def model_edit(request: TeamRequest, model_id: int) -> HttpResponse:
    model = _model(request, model_id)
    form = SearchModelForm(
        request.POST or None, team_id=model.team_id, initial=SearchModelForm.initial_for(model)
    )
    if request.method == "POST" and form.is_valid():
        saved = _saved(form, lambda: services.model_update(model=model, **form.cleaned_data))
        if saved is not None:
            messages.success(request, f"Saved the model {saved.name}.")
            return redirect("endpoints:search_model_detail", model.id)
    return render(
        request, "endpoints/model_form.html", {"form": form, "model": model, "has_endpoints": True}
    )


@require_http_methods(["GET", "POST"])
@lead_required
def model_delete(request: TeamRequest, model_id: int) -> HttpResponse:
    model = _model(request, model_id)
    return _confirm_delete(
        request,
        model,
        kind="model",
        delete=lambda: services.model_delete(model=model),
        users=selectors.model_evaluations(model=model),
        users_kind="evaluations",
        pages=("endpoints:search_model_detail", "endpoints:search_model_list"),
    )


@require_http_methods(["GET", "POST"])
@lead_required
def model_test(request: TeamRequest, model_id: int) -> HttpResponse:
    """Run one keyword now (one call, waiting at most services.model_test_wait_seconds)
    and show it all."""
    model = _model(request, model_id)
    form = ModelTestForm(request.POST or None, initial=_first_keyword(model))
    outcome = None
    if request.method == "POST" and form.is_valid():
        try:
            outcome = services.model_test(model=model, keyword=form.cleaned_data["keyword"])
        except InvalidInput as error:
            add_problems(form, error.problems)
    context = _test_context(model, form, outcome)
    if request.htmx:
        return render(request, "endpoints/_model_test.html", context)
    return render(request, "endpoints/model_test.html", context)


def _saved(form: Form, save: Callable[[], Saved]) -> Saved | None:
    """What the service saved, or None with its problems put next to their fields."""
    try:
        return save()
    except InvalidInput as error:
        add_problems(form, error.problems)
        return None


def _confirm_delete(
    request: TeamRequest,
    thing: SearchEndpoint | SearchModel,
    *,
    kind: str,
    delete: Callable[[], None],
    users: Iterable[Any],
    users_kind: str,
    pages: tuple[str, str],
) -> HttpResponse:
    """GET asks (or says what is in the way); POST deletes, or says why it did not."""
    detail_page, list_page = pages
    if request.method == "POST":
        try:
            delete()
        except InvalidState as error:
            messages.error(request, error.message)
            return redirect(detail_page, thing.id)
        messages.success(request, f"Deleted the {kind} {thing.name}.")
        return redirect(list_page)
    context = {
        "kind": kind,
        "thing": thing,
        "users": list(users),
        "users_kind": users_kind,
        "cancel_url": detail_page,
    }
    return render(request, "endpoints/confirm_delete.html", context)


def _test_context(model: SearchModel, form: ModelTestForm, outcome: object) -> dict[str, object]:
    return {
        "model": model,
        "test_form": form,
        "outcome": outcome,
        "wait_seconds": services.model_test_wait_seconds(model),
    }


def _first_keyword(model: SearchModel) -> dict[str, str]:
    keywords = keyword_lines(model.default_keywords)
    return {"keyword": keywords[0] if keywords else ""}


def _has_endpoints(team_id: int) -> bool:
    return SearchEndpoint.objects.filter(team_id=team_id).exists()
