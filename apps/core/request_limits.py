"""A limit on the size of every request body, answered 413 before the body is read.

Imports may send large files (IMPORT_MAX_REQUEST_BYTES, on the import endpoints and
page); every other request is held to REQUEST_MAX_BYTES. The size is read from the
Content-Length header, which Django's request stream also enforces (it never reads past
it), so the answer costs nothing however large the body would have been. The command
line imports read files and have no such limit.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

# The views that take an import's file, by URL name: the API's, also at their paths
# without the trailing slash (apps/api/urls.py), and the pages' (an evaluation, a judgement list).
IMPORT_VIEWS = (
    "api:evaluation_import",
    "api:evaluation_import_unslashed",
    "api:evaluation_import_trec",
    "api:evaluation_import_trec_unslashed",
    "interchange:evaluation_import",
    "library:list_import",
    "api:library_lists",
)


def _import_paths() -> frozenset[str]:
    return frozenset(reverse(name) for name in IMPORT_VIEWS)


class RequestSizeLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._imports: frozenset[str] | None = None  # resolved on the first request

    def __call__(self, request: HttpRequest) -> HttpResponse:
        header = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(header)
        except ValueError:
            return _refuse(request, 400, f"Content-Length {header[:40]!r} is not a number.")
        if size < 0:
            return _refuse(request, 400, "Content-Length must not be negative.")
        if self._imports is None:
            self._imports = _import_paths()
        is_import = request.path_info in self._imports
        limit = settings.IMPORT_MAX_REQUEST_BYTES if is_import else settings.REQUEST_MAX_BYTES
        if size > limit:
            what = "An import" if is_import else "A request"
            setting = "IMPORT_MAX_REQUEST_BYTES" if is_import else "REQUEST_MAX_BYTES"
            return _refuse(
                request,
                413,
                f"{what} may send at most {limit:,} bytes; this one has {size:,} "
                f"(the server's {setting}). Larger files can be imported from the command "
                f"line (manage.py import_evaluation / import_trec).",
            )
        return self.get_response(request)


def _refuse(request: HttpRequest, status: int, message: str) -> HttpResponse:
    # The body is never read: the connection closes after the answer.
    if request.path_info.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message, "errors": []}, status=status)
    else:
        response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    response["Connection"] = "close"
    return response
