"""Checking a search endpoint and a search model as a lead typed them.

Every check runs and every problem is reported at once, each located where the lead
typed it ("name: ...", "headers line 2: ...", "mapper.results: ...", "body: ..."), so
one round trip through the form shows all that is wrong. Nothing here writes.

The request rules themselves (escaping, header names, URL shape) live in apps.search;
this module runs them on a template built with a sample keyword and puts their
locations ("headers[1]") back into the lines the lead typed ("headers line 3").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Required, TypedDict, Unpack

from django.db.models import Field, Model

from apps.accounts.models import Tag, Team
from apps.core import bounded_json
from apps.core.errors import InvalidInput
from apps.search import RequestError, SearchTemplate, validate_mapper
from apps.search.request import BODY_TYPES, SAMPLE_KEYWORD

from .model_calls import model_template
from .models import SearchEndpoint, SearchModel
from .name_value_lines import Line, keyword_lines, parse_lines

MAX_TIMEOUT_SECONDS = 120.0
KEYWORD_LIMIT = 500  # as an evaluation's keyword (evaluations.Keyword.text)
_INDEXED = re.compile(r"^(headers|params)\[(\d+)\]")


class EndpointFields(TypedDict, total=False):
    """An endpoint as typed: headers as "Name: value" lines, the mapper as data or JSON."""

    name: Required[str]
    method: Required[str]
    url: Required[str]
    mapper: Required[object]
    headers: str
    timeout_seconds: float
    description: str


class ModelFields(TypedDict, total=False):
    """A model as typed: parameters as "name=value" lines, headers as "Name: value"."""

    endpoint: Required[SearchEndpoint | None]
    name: Required[str]
    params: str
    headers: str
    body: str
    body_type: str
    default_keywords: str
    tags: Iterable[Tag]
    description: str


@dataclass(frozen=True)
class EndpointValues:
    """What to store on a SearchEndpoint, every field checked."""

    name: str
    description: str
    method: str
    url: str
    headers: list[list[str]]
    timeout_seconds: float
    mapper: dict[str, object]


@dataclass(frozen=True)
class ModelValues:
    """What to store on a SearchModel (tags apart), every field checked."""

    endpoint: SearchEndpoint
    name: str
    description: str
    params: list[list[str]]
    headers: list[list[str]]
    body: str
    body_type: str
    default_keywords: str


def endpoint_values(
    *, team: Team, existing: SearchEndpoint | None = None, **fields: Unpack[EndpointFields]
) -> EndpointValues:
    """The values to store; raises InvalidInput with every problem."""
    problems: list[str] = []
    name = _check_name(fields["name"], team, SearchEndpoint, existing, problems)
    method = _text(fields["method"]).upper()
    url = _text(fields["url"])
    _check_length("url", url, SearchEndpoint, problems)
    header_lines, header_problems = parse_lines(
        fields.get("headers") or "", separator=":", field="headers"
    )
    problems += header_problems
    timeout = fields.get("timeout_seconds", 10.0)
    if not isinstance(timeout, int | float) or not (
        math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_SECONDS
    ):
        problems.append(
            f"timeout_seconds: must be more than 0 and at most {MAX_TIMEOUT_SECONDS:g} seconds"
        )
    mapper = _parse_mapper(fields["mapper"], problems)

    # The endpoint on its own: method, URL and headers must make a request. `#query#`
    # may be missing here: the model's parameters or body usually carry it.
    template = SearchTemplate(method=method, url=url, headers=_pairs(header_lines))
    try:
        template.build(SAMPLE_KEYWORD)
    except RequestError as exc:
        problems += _located(exc.problems, params=[], headers=header_lines)
    if problems or mapper is None:
        raise InvalidInput(problems)
    return EndpointValues(
        name=name,
        description=_text(fields.get("description")),
        method=method,
        url=url,
        headers=_stored(header_lines),
        timeout_seconds=float(timeout),
        mapper=mapper,
    )


def models_still_fit(endpoint: SearchEndpoint, models: Iterable[SearchModel]) -> None:
    """A changed endpoint must still make a valid request for every model using it (a
    model may rely on the endpoint's URL for `#query#`, or set a header it now has)."""
    problems = [
        f"model '{model.name}': {problem}"
        for model in models
        for problem in model_template(endpoint, model).problems()
    ]
    if problems:
        raise InvalidInput(problems)


def model_values(
    *, team: Team, existing: SearchModel | None = None, **fields: Unpack[ModelFields]
) -> tuple[ModelValues, list[Tag]]:
    """The values to store and the tags; raises InvalidInput with every problem."""
    problems: list[str] = []
    endpoint = fields["endpoint"]
    if endpoint is None or endpoint.team_id != team.id:
        problems.append("endpoint: choose one of the team's search endpoints")
        endpoint = None
    name = _check_name(fields["name"], team, SearchModel, existing, problems)
    param_lines, param_problems = parse_lines(
        fields.get("params") or "", separator="=", field="params"
    )
    header_lines, header_problems = parse_lines(
        fields.get("headers") or "", separator=":", field="headers"
    )
    problems += param_problems + header_problems
    body, body_type = fields.get("body") or "", fields.get("body_type", "json")
    if body_type not in BODY_TYPES:
        problems.append(f"body_type: must be one of {', '.join(BODY_TYPES)}")
    tags = list(fields.get("tags", ()))
    if any(tag.team_id != team.id for tag in tags):
        problems.append("tags: every tag must belong to the team")
    default_keywords = fields.get("default_keywords") or ""
    keywords = _check_keywords(default_keywords, problems)

    candidate = SearchModel(
        params=_stored(param_lines), headers=_stored(header_lines), body=body, body_type=body_type
    )
    if endpoint is not None and body_type in BODY_TYPES and not param_problems + header_problems:
        problems += _template_problems(
            model_template(endpoint, candidate), param_lines, header_lines, default_keywords
        )
    if problems or endpoint is None:
        raise InvalidInput(problems)
    values = ModelValues(
        endpoint=endpoint,
        name=name,
        description=_text(fields.get("description")),
        params=candidate.params,
        headers=candidate.headers,
        body=body,
        body_type=body_type,
        default_keywords="\n".join(keywords),
    )
    return values, tags


def _template_problems(
    template: SearchTemplate, params: list[Line], headers: list[Line], default_keywords: str
) -> list[str]:
    # The endpoint's headers come first in the merged list, so a problem's index counts
    # from after the endpoint headers the model keeps.
    offset = len(template.headers) - len(headers)

    def locate(found: list[str]) -> list[str]:
        return _located(found, params=params, headers=headers, offset=offset)

    problems = locate(template.problems())
    if problems:
        return problems
    # A default keyword that cannot go into the request (a control character where a
    # header value carries the keyword) is refused now, not at every evaluation's start.
    for number, raw in enumerate(default_keywords.splitlines(), 1):
        keyword = raw.strip()
        if not keyword:
            continue
        try:
            template.build(keyword)
        except RequestError as exc:
            problems += [f"default_keywords line {number}: {p}" for p in locate(exc.problems)]
    return problems


def _check_name(
    name: str,
    team: Team,
    model: type[SearchEndpoint] | type[SearchModel],
    existing: Model | None,
    problems: list[str],
) -> str:
    name = _text(name)
    if not name:
        problems.append("name: required")
        return name
    if _check_length("name", name, model, problems):
        taken = model.objects.filter(team=team, name=name)
        if existing is not None:
            taken = taken.exclude(pk=existing.pk)
        if taken.exists():
            problems.append(name_taken(model, name))
    return name


def name_taken(model: type[SearchEndpoint] | type[SearchModel], name: str) -> str:
    kind = "an endpoint" if model is SearchEndpoint else "a model"
    return f"name: the team already has {kind} named {name!r}"


def _check_length(field: str, value: str, model: type[Model], problems: list[str]) -> bool:
    column = model._meta.get_field(field)
    limit = column.max_length if isinstance(column, Field) else None  # relations have none
    if limit is not None and len(value) > limit:
        problems.append(f"{field}: at most {limit} characters (got {len(value)})")
        return False
    return True


def _parse_mapper(mapper: object, problems: list[str]) -> dict[str, object] | None:
    """The mapper as data; text (from a form) is parsed as JSON first."""
    if isinstance(mapper, str):
        if not mapper.strip():
            problems.append("mapper: required")
            return None
        try:
            mapper = bounded_json.loads(mapper)
        except bounded_json.JsonLimitError as exc:
            problems.append(f"mapper: {exc}")
            return None
        except json.JSONDecodeError as exc:
            problems.append(
                f"mapper: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            )
            return None
    mapper_problems = validate_mapper(mapper)
    problems += mapper_problems
    return mapper if not mapper_problems and isinstance(mapper, dict) else None


def _check_keywords(text: str, problems: list[str]) -> list[str]:
    for number, raw in enumerate(text.splitlines(), 1):
        if len(raw.strip()) > KEYWORD_LIMIT:
            problems.append(
                f"default_keywords line {number}: at most {KEYWORD_LIMIT} characters "
                f"(got {len(raw.strip())})"
            )
    return keyword_lines(text)


def _located(
    problems: list[str], *, params: list[Line], headers: list[Line], offset: int = 0
) -> list[str]:
    """Core locations ("headers[3].name: ...") as the lines the lead typed.

    Header indexes below `offset` belong to the endpoint's own headers."""
    located = []
    for problem in problems:
        match = _INDEXED.match(problem)
        if match is None:
            located.append(problem)
            continue
        field, index = match.group(1), int(match.group(2))
        rest = problem[match.end() :].removeprefix(".name").removeprefix(".value")
        lines = params if field == "params" else headers
        index -= offset if field == "headers" else 0
        where = f"{field} line {lines[index].number}" if 0 <= index < len(lines) else field
        if field == "headers" and index < 0:
            where = "endpoint headers"
        located.append(f"{where}{rest}")
    return located


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _pairs(lines: list[Line]) -> list[tuple[str, str]]:
    return [(line.name, line.value) for line in lines]


def _stored(lines: list[Line]) -> list[list[str]]:
    return [[line.name, line.value] for line in lines]
