"""What a request gives the API: its JSON body as an object, and its query parameters.

Every problem is an InvalidInput naming the field, which the exception handler
(errors.py) answers 400 with.
"""

from collections.abc import Collection
from typing import Any

from rest_framework.request import Request

from apps.core.errors import InvalidInput
from apps.core.typed import ID_MAX, parse_int


def json_object_body(
    request: Request, *, fields: Collection[str] | None = None, of: str = ""
) -> dict[str, Any]:
    """The body as a dict; 400 unless it is a JSON object, or when it has a field not
    in `fields` (each named as "not a field of `of`"). Without `fields` the service
    checks the names."""
    if not isinstance(request.data, dict):
        raise InvalidInput(["body: must be a JSON object"])
    if fields is not None:
        unknown = sorted(str(name)[:100] for name in set(request.data) - set(fields))
        if unknown:
            raise InvalidInput([f"{name}: not a field of {of}" for name in unknown])
    return dict(request.data)


def whole_param(request: Request, name: str, *, high: int | None = None) -> int | None:
    """An optional whole-number query parameter (an id, or up to `high`)."""
    given = request.query_params.get(name)
    if given is None:
        return None
    number = parse_int(given, 0, ID_MAX if high is None else high)
    if number is None:
        bound = f"from 0 to {high:,}" if high is not None else "an id"
        raise InvalidInput([f"{name}: must be a whole number {bound}"])
    return number


def choice_param(request: Request, name: str, allowed: list[str]) -> str | None:
    """An optional query parameter that must be one of `allowed`."""
    given = request.query_params.get(name)
    if given is not None and given not in allowed:
        raise InvalidInput([f"{name}: one of {', '.join(allowed)}"])
    return given
