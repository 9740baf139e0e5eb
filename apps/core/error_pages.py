"""handler400: a request refused before any view ran answers templates/400.html.

Django's own handler renders 400.html with the request, so the context processors run;
but a request refused this early (an unknown Host header, raised by CommonMiddleware) has
no `user` yet, the team processor fails on it, and the 400 became a 500. The page needs
nothing from the request, so it is rendered without it, as 500.html is.
"""

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.loader import render_to_string


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return HttpResponseBadRequest(render_to_string("400.html"))
