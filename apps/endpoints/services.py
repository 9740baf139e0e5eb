"""Writes for search endpoints and search models, and running one keyword to test a model.

Headers and query parameters come as the lead types them (one ``Name: value`` or
``name=value`` per line) so every problem can name its line; the mapper comes as data or
as JSON text. Everything is checked before anything is written (see `validation`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Unpack

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Model, ProtectedError

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState
from apps.search import InvalidMapper

from .model_calls import model_call
from .model_test_report import ModelTest, describe_run, mapper_broken
from .models import SearchEndpoint, SearchModel
from .validation import (
    KEYWORD_LIMIT,
    EndpointFields,
    ModelFields,
    endpoint_values,
    model_values,
    models_still_fit,
    name_taken,
)

# How many names a refusal lists before "and N more".
_NAMES_SHOWN = 5


@transaction.atomic
def endpoint_create(
    *, team: Team, created_by: User | None = None, **fields: Unpack[EndpointFields]
) -> SearchEndpoint:
    values = endpoint_values(team=team, **fields)
    with _name_kept_unique(SearchEndpoint, team, values.name):
        return SearchEndpoint.objects.create(team=team, created_by=created_by, **vars(values))


@transaction.atomic
def endpoint_update(
    *, endpoint: SearchEndpoint, **fields: Unpack[EndpointFields]
) -> SearchEndpoint:
    """Change an endpoint; refused if a model using it would no longer make a request."""
    # Locked so a model saved meanwhile is checked against what is stored in the end.
    endpoint = SearchEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    values = endpoint_values(team=endpoint.team, existing=endpoint, **fields)
    changed = SearchEndpoint(pk=endpoint.pk, team_id=endpoint.team_id, **vars(values))
    models_still_fit(changed, endpoint.search_models.order_by("name"))
    for field, value in vars(values).items():
        setattr(endpoint, field, value)
    with _name_kept_unique(SearchEndpoint, endpoint.team, values.name):
        endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_delete(*, endpoint: SearchEndpoint) -> None:
    """Refused while search models use the endpoint; the refusal names them."""
    names = list(endpoint.search_models.order_by("name").values_list("name", flat=True))
    names = _delete_unless_used(endpoint, names)
    if not names:
        return
    raise InvalidState(
        f"The endpoint {endpoint.name} is used by {_listed('model', names)}; "
        "delete those models or move them to another endpoint first.",
        field="endpoint",
    )


@transaction.atomic
def model_create(
    *, team: Team, created_by: User | None = None, **fields: Unpack[ModelFields]
) -> SearchModel:
    fields["endpoint"] = _locked(fields["endpoint"])
    values, tags = model_values(team=team, **fields)
    with _name_kept_unique(SearchModel, team, values.name):
        model = SearchModel.objects.create(team=team, created_by=created_by, **vars(values))
    model.tags.set(tags)
    return model


@transaction.atomic
def model_update(*, model: SearchModel, **fields: Unpack[ModelFields]) -> SearchModel:
    fields["endpoint"] = _locked(fields["endpoint"])
    values, tags = model_values(team=model.team, existing=model, **fields)
    for field, value in vars(values).items():
        setattr(model, field, value)
    with _name_kept_unique(SearchModel, model.team, values.name):
        model.save()
    model.tags.set(tags)
    return model


@transaction.atomic
def model_delete(*, model: SearchModel) -> None:
    """Refused while evaluations use the model (their results came from it)."""
    names = list(model.evaluations.order_by("name", "id").values_list("name", flat=True))
    names = _delete_unless_used(model, names)
    if not names:
        return
    raise InvalidState(
        f"The model {model.name} is used by {_listed('evaluation', names)}; "
        "delete those evaluations first.",
        field="model",
    )


def model_test_wait_seconds(model: SearchModel) -> float:
    """The longest Test model waits for the search system: the endpoint's timeout, but
    never more than SEARCH_TEST_TIMEOUT_SECONDS (10 s), since the test holds a web worker
    for as long as it waits and an endpoint may allow its search system up to 120 s."""
    return min(model.endpoint.timeout_seconds, settings.SEARCH_TEST_TIMEOUT_SECONDS)


def model_test(*, model: SearchModel, keyword: str) -> ModelTest:
    """Run one keyword through the model now and describe everything that came back.

    Not a write and not in a transaction: it waits on the search system for up to
    `model_test_wait_seconds`, and no database connection should be held open for that.
    """
    keyword = keyword.strip() if isinstance(keyword, str) else ""
    if not keyword:
        raise InvalidInput(["keyword: required"], field="keyword")
    if len(keyword) > KEYWORD_LIMIT:
        raise InvalidInput(
            [f"keyword: at most {KEYWORD_LIMIT} characters (got {len(keyword)})"], field="keyword"
        )
    try:
        call = model_call(model)
    except InvalidMapper as exc:
        return mapper_broken(keyword, exc)
    wait = model_test_wait_seconds(model)
    if call.timeout_s <= wait:
        return describe_run(call, call.run(keyword))
    capped = dataclasses.replace(call, timeout_s=wait)
    outcome = describe_run(capped, capped.run(keyword))
    if outcome.error_kind != "timeout":
        return outcome
    # The search system may simply be slower than the test waits: say that a real run
    # would have waited longer, so the lead does not take it for a broken endpoint.
    note = (
        f"The endpoint did not answer within {wait:g} s, the longest Test model waits; "
        f"an evaluation's start waits up to the endpoint's {call.timeout_s:g} s."
    )
    return dataclasses.replace(outcome, error=note)


def _locked(endpoint: SearchEndpoint | None) -> SearchEndpoint | None:
    """The endpoint as stored now, locked until the model is saved: a model is checked
    against the endpoint it will really use, even while someone edits that endpoint."""
    if endpoint is None:
        return None
    return SearchEndpoint.objects.select_for_update().filter(pk=endpoint.pk).first()


@contextmanager
def _name_kept_unique(
    kind: type[SearchEndpoint] | type[SearchModel], team: Team, name: str
) -> Iterator[None]:
    """Two saves of one new name at once (a double-clicked form) both pass the check;
    the database refuses the second, which is answered like the check would have."""
    try:
        with transaction.atomic():  # a savepoint, so the outer transaction stays usable
            yield
    except IntegrityError:
        if not kind.objects.filter(team=team, name=name).exists():
            raise
        raise InvalidInput([name_taken(kind, name)]) from None


def _delete_unless_used(instance: Model, users: list[str]) -> list[str]:
    """Delete `instance` if nothing uses it. Returns the names of what does: `users` as
    read, or what PROTECT found when a user was added after they were read."""
    if users:
        return users
    try:
        instance.delete()
    except ProtectedError as exc:
        return sorted(str(found) for found in exc.protected_objects)
    return []


def _listed(kind: str, names: list[str]) -> str:
    shown = ", ".join(names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    plural = kind + ("s" if len(names) > 1 else "")
    return f"the {plural} {shown}" + (f" and {more} more" if more > 0 else "")
