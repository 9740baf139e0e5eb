"""Browsers ask for /favicon.ico on their own, whatever a page links: send them to the
icon the pages link (static/favicon.svg), under its collected, hashed name."""

from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.views.decorators.http import require_safe


@require_safe
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    response = HttpResponseRedirect(static("favicon.svg"))
    # Not permanent: the hashed name changes when the icon does.
    response["Cache-Control"] = "public, max-age=86400"
    return response
