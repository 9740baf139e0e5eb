"""503 instead of 500 while the database is unavailable (a restart, a failover).

A request that meets django.db.OperationalError or InterfaceError (the server refused the
connection, closed it under us, cancelled or deadlocked the statement) did not fail
because of what it asked: the same request a few seconds later succeeds. So it is
answered 503 Service Unavailable with Retry-After, in the shape its client reads:

- the API (/api/...): JSON in the API's error shape, {"detail": ..., "errors": []};
- htmx requests (the grading page posting a grade): a short fragment; the page keeps the
  grade and sends it again (static/js/grading.js), nothing on the page is swapped;
- pages: templates/503.html, which says to try again (a page that was only being read
  reloads itself).

The 503 page is rendered without the request: no context processor, session or user is
read, because the database they live in is what is down.

Three places call this module, so no path answers 500 for it: the middleware below (any
view), the API's exception handler (apps/api/errors.py, which sees DRF views' errors
first) and `server_error`, the handler500 of config/urls.py (errors raised in another
middleware, such as a session saved as the response leaves).
"""

import logging
import sys
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

logger = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
# A PostgreSQL restart takes a few seconds; clients wait this long before trying again.
RETRY_AFTER_SECONDS = 5
MESSAGE = "The database is briefly unavailable, so this could not be done. Try again in a moment."


def is_database_unavailable(error: BaseException | None) -> bool:
    return isinstance(error, DATABASE_UNAVAILABLE)


def database_unavailable_response(request: HttpRequest, error: BaseException) -> HttpResponse:
    """The 503 answer for this request (see the module's docstring)."""
    logger.warning(
        "database unavailable: %s %s answered 503", request.method, request.path, exc_info=error
    )
    response: HttpResponse
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": MESSAGE, "errors": []}, status=503)
    elif request.headers.get("HX-Request") == "true":
        response = HttpResponse(f'<p class="error" role="alert">{MESSAGE}</p>', status=503)
        response["HX-Reswap"] = "none"  # keep what the page shows (the grade to resend)
    else:
        page = render_to_string(
            "503.html",
            # A page being read may simply load again; a form sent must be sent again
            # by the person (reloading it would not send it, and could send it twice).
            {"retry_after": RETRY_AFTER_SECONDS, "reload": request.method in ("GET", "HEAD")},
        )
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """Answer 503 (not 500) to a view that failed because the database is unavailable."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_database_unavailable(exception):
            return database_unavailable_response(request, exception)
        return None  # every other error goes on to Django's handling


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the 503 answer when the error was the database's, else Django's 500."""
    error = sys.exc_info()[1]  # Django calls handler500 while it handles the error
    if error is not None and is_database_unavailable(error):
        return database_unavailable_response(request, error)
    return defaults.server_error(request)
