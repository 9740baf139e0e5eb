"""404 for a path under /api/ that no route matches: JSON in the API's error shape, as
every other API answer, instead of the site's HTML page (an integration reads JSON)."""

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def page_not_found(request: HttpRequest, exception: Any) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse(
            {"detail": f"No API endpoint at {request.path_info}.", "errors": []}, status=404
        )
    return defaults.page_not_found(request, exception)
