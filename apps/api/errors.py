"""One exception handler: every error is JSON naming each field and its reason.

{"detail": "...", "errors": [{"field": "keywords[3].snapshots[0].position",
                              "message": "duplicate"}]}
"""

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import Http404
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core import unavailable
from apps.core.errors import (
    DomainError,
    InvalidInput,
    InvalidState,
    NotAllowed,
    NotFound,
    RateLimited,
)

logger = logging.getLogger(__name__)


def _split(problem: str) -> dict[str, str | None]:
    field, separator, message = problem.partition(": ")
    if not separator:
        return {"field": None, "message": problem}
    return {"field": field, "message": message}


def _flatten(detail: Any, prefix: str = "") -> list[dict[str, str | None]]:
    """DRF's nested error detail as a flat list with dotted/indexed field paths."""
    if isinstance(detail, dict):
        found = []
        for key, value in detail.items():
            if key == "non_field_errors":
                path = prefix
            elif isinstance(key, int):
                # DRF reports items of a list (ListField, many=True) by their int index.
                path = f"{prefix}[{key}]"
            else:
                path = f"{prefix}.{key}" if prefix else key
            found.extend(_flatten(value, path))
        return found
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [{"field": prefix or None, "message": str(item)} for item in detail]
        found = []
        for index, item in enumerate(detail):
            if item:
                found.extend(_flatten(item, f"{prefix}[{index}]"))
        return found
    return [{"field": prefix or None, "message": str(detail)}]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        # A form's fields (files aside) larger than DATA_UPLOAD_MAX_MEMORY_SIZE.
        return Response(
            {"detail": f"The request's fields are too large: {exc}", "errors": []},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return Response(
            {"detail": f"The request is not valid: {exc}", "errors": []},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if unavailable.is_database_unavailable(exc):
        # A restart or failover of the database, not a fault of the request: 503 and
        # when to try again, so a client retries instead of giving up on a 500.
        logger.warning("database unavailable: the API answered 503", exc_info=exc)
        return Response(
            {"detail": unavailable.MESSAGE, "errors": []},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(unavailable.RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, InvalidInput):
        errors = [_split(problem) for problem in exc.problems]
        return Response(
            {"detail": "The request is not valid.", "errors": errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, InvalidState):
        return Response(
            {"detail": exc.message, "errors": [{"field": exc.field, "message": exc.message}]},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, NotAllowed):
        return Response({"detail": exc.message, "errors": []}, status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, NotFound):
        return Response({"detail": exc.message, "errors": []}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, RateLimited):
        return Response(
            {"detail": exc.message, "errors": []},
            status=status.HTTP_429_TOO_MANY_REQUESTS,
            headers={"Retry-After": str(exc.retry_after)},
        )
    if isinstance(exc, DomainError):
        return Response({"detail": exc.message, "errors": []}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ValidationError):
        return Response(
            {"detail": "The request is not valid.", "errors": _flatten(exc.detail)},
            status=status.HTTP_400_BAD_REQUEST,
        )
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, APIException | Http404):
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        response.data = {"detail": str(detail), "errors": []}
    return response
