"""Checking an AI judge as a lead typed it (a form or the API): every problem at once,
each naming its field; nothing here writes.

Numbers come as numbers (the API) or as text (a form); each has a range, so no judge
can ask for a thousand calls at once or wait an hour for an answer. The base URL is
held to the address-safety rules here for what can be told without a lookup (the local
machine by name, private and loopback literals); the full check, with the name
resolved, runs on every call (apps/search/safe_transport.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx2 as httpx
from django.conf import settings

from apps.core.errors import InvalidInput
from apps.search.safety import refused_without_lookup

from .providers import Protocol

NAME_MAX = 100
MODEL_NAME_MAX = 200
BASE_URL_MAX = 500
API_KEY_MAX = 500


@dataclass(frozen=True)
class Range:
    low: Decimal
    high: Decimal
    kind: type = int  # what is stored: int, float or Decimal
    optional: bool = False  # empty or null: no value (no limit)


def _range(low: str, high: str, kind: type = int, optional: bool = False) -> Range:
    return Range(Decimal(low), Decimal(high), kind, optional)


NUMBERS: dict[str, Range] = {
    "temperature": _range("0", "2", float, optional=True),
    "timeout_seconds": _range("1", "300"),
    "results_per_call": _range("1", "20"),
    "calls_at_once": _range("1", "32"),
    "max_output_tokens": _range("16", "32000"),
    "samples": _range("1", "10"),
    "budget_calls": _range("1", "10000000", optional=True),
    "budget_tokens": _range("1", "1000000000000", optional=True),
    "budget_cost": _range("0.01", "1000000", Decimal, optional=True),
    "price_input_per_million": _range("0", "100000", Decimal),
    "price_output_per_million": _range("0", "100000", Decimal),
    "price_cached_input_per_million": _range("0", "100000", Decimal, optional=True),
}
TEXTS = {"name": NAME_MAX, "model_name": MODEL_NAME_MAX}
SWITCHES = ("structured_output", "sees_images")
ALL_FIELDS = {*NUMBERS, *TEXTS, "protocol", "base_url", "api_key", *SWITCHES}


def judge_values(given: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """The judge's checked values from what was given (on an update, only the fields
    given); `api_key` stays in the values as typed, for the service to encrypt."""
    problems: list[str] = []
    unknown = sorted(set(given) - ALL_FIELDS)
    problems.extend(f"{name}: not a field of a judge" for name in unknown)
    values: dict[str, Any] = {}
    required = ("name", "protocol", "base_url", "model_name") if creating else ()
    for name in required:
        if given.get(name) in (None, ""):
            problems.append(f"{name}: required")
    for name, limit in TEXTS.items():
        if name in given and given[name] not in (None, ""):
            values[name] = _text(name, given[name], limit, problems)
    if given.get("protocol") not in (None, ""):
        values["protocol"] = _protocol(given["protocol"], problems)
    if given.get("base_url") not in (None, ""):
        values["base_url"] = _base_url(given["base_url"], problems)
    if "api_key" in given and given["api_key"] is not None:
        values["api_key"] = _api_key(given["api_key"], problems)
    for name in SWITCHES:
        if name not in given:
            continue
        if not isinstance(given[name], bool):
            problems.append(f"{name}: must be true or false")
        else:
            values[name] = given[name]
    for name, allowed in NUMBERS.items():
        if name in given:
            values[name] = _number(name, given[name], allowed, problems)
    if problems:
        raise InvalidInput(problems)
    return values


def _text(name: str, value: Any, limit: int, problems: list[str]) -> str:
    text = str(value).strip() if isinstance(value, str) else ""
    if not text:
        problems.append(f"{name}: must be text")
    elif len(text) > limit:
        problems.append(f"{name}: at most {limit} characters, got {len(text)}")
    elif not text.isprintable():
        problems.append(f"{name}: may not hold control characters")
    return text


def _protocol(value: Any, problems: list[str]) -> str:
    choices = [protocol.value for protocol in Protocol]
    if value not in choices:
        problems.append(f"protocol: must be one of {', '.join(choices)}")
    return str(value)


def _base_url(value: Any, problems: list[str]) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > BASE_URL_MAX:
        problems.append(f"base_url: at most {BASE_URL_MAX} characters")
        return text
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, TypeError):
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        problems.append("base_url: must be an http:// or https:// URL with a host")
        return text
    if url.userinfo:
        problems.append("base_url: may not hold a user name or password (give the API key)")
    # The demo's own stand-in model (make run) is on loopback; its calls are still held
    # to AI_JUDGES_ALLOW_PRIVATE_ADDRESSES, which `make run` turns on.
    demo = settings.DEMO_SEARCH_API and text.rstrip("/") == settings.DEMO_JUDGE_URL.rstrip("/")
    reason = None if demo else refused_without_lookup(url.host)
    if reason and not settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES:
        problems.append(
            f"base_url: {reason}; a model server on this machine or network needs "
            "AI_JUDGES_ALLOW_PRIVATE_ADDRESSES=1 in the deployment's settings"
        )
    return text


def _api_key(value: Any, problems: list[str]) -> str:
    text = value.strip() if isinstance(value, str) else None
    if text is None:
        problems.append("api_key: must be text")
        return ""
    if len(text) > API_KEY_MAX:
        problems.append(f"api_key: at most {API_KEY_MAX} characters")
    elif text and not (text.isascii() and text.isprintable() and " " not in text):
        problems.append("api_key: may hold only visible ASCII characters, no spaces")
    return text


def _number(name: str, value: Any, allowed: Range, problems: list[str]) -> Any:
    if value in (None, "") and allowed.optional:
        return None
    number = _as_number(value)
    whole = allowed.kind is int
    if number is None or (whole and number != int(number)):
        problems.append(f"{name}: must be {'a whole number' if whole else 'a number'}")
        return None
    if not allowed.low <= number <= allowed.high:
        problems.append(f"{name}: must be from {allowed.low} to {allowed.high}, got {value}")
        return None
    return allowed.kind(number)


def _as_number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal | str):
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None
