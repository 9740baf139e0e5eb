"""A try's draft: a search model's request settings with some overridden and its named
knobs filled in. Pure: no Django; the caller passes the model's settings as values.

A draft overrides by name. A parameter or header named in the draft replaces every one
of that name the model sends (any case for headers); a null value drops it. A body given
replaces the model's body template. Then each knob `#name#` in the URL, parameter
values, header values and body becomes the knob's value, before `#query#` is filled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apps.search import SearchTemplate

MAX_PAIRS = 100
MAX_NAME = 200
MAX_VALUE = 2_000
MAX_BODY = 100_000
MAX_KNOBS = 20
MAX_KNOB_VALUE = 200
KNOB_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")

Pairs = list[tuple[str, str | None]]


@dataclass(frozen=True)
class Draft:
    params: Pairs = field(default_factory=list)
    headers: Pairs = field(default_factory=list)
    body: str | None = None
    knobs: dict[str, str] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.params or self.headers or self.body is not None or self.knobs)


@dataclass(frozen=True)
class ModelSettings:
    """The request settings of a search model on its endpoint."""

    method: str
    url: str
    params: Sequence[tuple[str, str]]
    headers: Sequence[tuple[str, str]]
    body: str
    body_type: str


def draft_parse(
    params: Any = None, headers: Any = None, body: Any = None, knobs: Any = None
) -> tuple[Draft, list[str]]:
    """The draft from what a person or a client sent, and every problem, each naming its
    field: `params` and `headers` are [[name, value or null], ...] or {name: value}."""
    problems: list[str] = []
    parsed_params = _pairs(params, "params", problems)
    parsed_headers = _pairs(headers, "headers", problems)
    parsed_body: str | None = None
    if body is not None:
        if not isinstance(body, str):
            problems.append("body: a text (the body template), or null to keep the model's")
        elif len(body) > MAX_BODY:
            problems.append(f"body: at most {MAX_BODY:,} characters")
        else:
            parsed_body = body
    return Draft(parsed_params, parsed_headers, parsed_body, _knobs(knobs, problems)), problems


def _pairs(value: Any, field_name: str, problems: list[str]) -> Pairs:
    if value is None:
        return []
    if isinstance(value, Mapping):
        value = list(value.items())
    if not isinstance(value, list):
        problems.append(f"{field_name}: a list of [name, value] pairs or an object")
        return []
    if len(value) > MAX_PAIRS:
        problems.append(f"{field_name}: at most {MAX_PAIRS} entries")
        return []
    pairs: Pairs = []
    for index, pair in enumerate(value):
        where = f"{field_name}[{index}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            problems.append(f"{where}: a [name, value] pair")
            continue
        name, text = pair
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            problems.append(f"{where}: the name is a text of 1 to {MAX_NAME} characters")
            continue
        if text is not None and (not isinstance(text, str | int | float) or isinstance(text, bool)):
            problems.append(f"{where}: the value is a text, a number or null (to drop it)")
            continue
        if text is not None and len(str(text)) > MAX_VALUE:
            problems.append(f"{where}: the value is at most {MAX_VALUE:,} characters")
            continue
        pairs.append((name.strip(), None if text is None else str(text)))
    return pairs


def _knobs(value: Any, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append('knobs: an object of name to value, e.g. {"boost": 2}')
        return {}
    if len(value) > MAX_KNOBS:
        problems.append(f"knobs: at most {MAX_KNOBS}")
        return {}
    knobs: dict[str, str] = {}
    for name, knob in value.items():
        if not isinstance(name, str) or not KNOB_NAME.fullmatch(name) or name == "query":
            problems.append(
                f"knobs.{str(name)[:40]}: a name of lower-case letters, digits and _ "
                "(up to 40, not 'query')"
            )
            continue
        if isinstance(knob, bool) or not isinstance(knob, str | int | float):
            problems.append(f"knobs.{name}: a text or a number")
            continue
        text = str(knob)
        if len(text) > MAX_KNOB_VALUE or "#" in text:
            problems.append(f"knobs.{name}: at most {MAX_KNOB_VALUE} characters, without '#'")
            continue
        knobs[name] = text
    return knobs


def _overridden(base: Sequence[tuple[str, str]], draft: Pairs, *, any_case: bool) -> list:
    def key(name: str) -> str:
        return name.lower() if any_case else name

    replaced = {key(name) for name, _ in draft}
    kept = [(name, value) for name, value in base if key(name) not in replaced]
    return kept + [(name, value) for name, value in draft if value is not None]


def _filled(text: str, knobs: Mapping[str, str]) -> str:
    for name, value in knobs.items():
        text = text.replace(f"#{name}#", value)
    return text


def draft_template(model: ModelSettings, draft: Draft) -> SearchTemplate:
    """The request template the draft sends: `model` with the draft applied."""
    params = _overridden(model.params, draft.params, any_case=False)
    headers = _overridden(model.headers, draft.headers, any_case=True)
    body = model.body if draft.body is None else draft.body
    knobs = draft.knobs
    return SearchTemplate(
        method=model.method,
        url=_filled(model.url, knobs),
        params=[(name, _filled(value, knobs)) for name, value in params],
        headers=[(name, _filled(value, knobs)) for name, value in headers],
        body_template=_filled(body, knobs) or None,
        body_type=model.body_type,
    )


@dataclass(frozen=True)
class Promoted:
    """A search model's own settings with the draft applied: what promoting saves."""

    params: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    body: str


def draft_promoted(
    params: Sequence[tuple[str, str]],
    headers: Sequence[tuple[str, str]],
    body: str,
    draft: Draft,
) -> Promoted:
    """The model's own `params`, `headers` and `body` (not its endpoint's) with the
    draft's overrides and knobs in them; `#query#` stays for each search."""
    knobs = draft.knobs
    return Promoted(
        params=[
            (n, _filled(v, knobs)) for n, v in _overridden(params, draft.params, any_case=False)
        ],
        headers=[
            (n, _filled(v, knobs)) for n, v in _overridden(headers, draft.headers, any_case=True)
        ],
        body=_filled(body if draft.body is None else draft.body, knobs),
    )


def unused_knobs(model: ModelSettings, draft: Draft) -> list[str]:
    """Knobs whose #name# appears nowhere in the draft's request: a typo, most likely."""
    params = _overridden(model.params, draft.params, any_case=False)
    headers = _overridden(model.headers, draft.headers, any_case=True)
    body = model.body if draft.body is None else draft.body
    places = [model.url, body, *(v for _, v in params), *(v for _, v in headers)]
    return [name for name in draft.knobs if not any(f"#{name}#" in place for place in places)]


def settings_diff(before: Draft, after: Draft) -> list[str]:
    """What changed from one draft to the next, a line each ("knob boost: 1 -> 2"), so a
    try's history reads as the changes that were tried. Header values never appear."""
    lines = _pair_changes("param", dict(before.params), dict(after.params), show_values=True)
    lines += _pair_changes("header", dict(before.headers), dict(after.headers), show_values=False)
    if before.body != after.body:
        lines.append("body: changed" if after.body is not None else "body: the model's again")
    lines += _pair_changes("knob", dict(before.knobs), dict(after.knobs), show_values=True)
    return lines


def _pair_changes(
    kind: str, old: Mapping[str, str | None], new: Mapping[str, str | None], *, show_values: bool
) -> list[str]:
    def shown(value: str | None) -> str:
        if value is None:
            return "dropped"
        return value if show_values else "(hidden)"

    lines = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            lines.append(f"{kind} {name}: {shown(old[name])} -> the model's")
        elif name not in old:
            lines.append(f"{kind} {name}: {shown(new[name])}")
        elif old[name] != new[name]:
            lines.append(f"{kind} {name}: {shown(old[name])} -> {shown(new[name])}")
    return lines
