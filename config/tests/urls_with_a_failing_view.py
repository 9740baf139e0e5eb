"""The project's URLs, its error handlers, and one view that fails: the 500 page's test
needs a request that really raises inside Relevo."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config import urls


def failing_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [path("failing/", failing_view), *urls.urlpatterns]
handler400 = urls.handler400
handler404 = urls.handler404
handler500 = urls.handler500
