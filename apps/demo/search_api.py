"""The demo search API: a stand-in for a team's search system, served by Relevo itself.

`make run` seeds a search endpoint and model pointing here, so a newcomer can test a
model and start an evaluation that calls a real HTTP API without setting one up. It
answers like a small Elasticsearch: ``GET /demo/search?q=red+shoes&size=8``. It answers
404 unless the DEMO_SEARCH_API setting is on (by default, when DEBUG is).
"""

from django.conf import settings
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from apps.core.typed import parse_int

from .seed import demo_search

MAX_SIZE = 50


@require_GET
def search(request: HttpRequest) -> JsonResponse:
    if not settings.DEMO_SEARCH_API:
        raise Http404("the demo search API is off")
    query = request.GET.get("q", "").strip()
    size = parse_int(request.GET.get("size", "10"), 1, MAX_SIZE)
    if size is None:
        return JsonResponse({"error": f"size: a whole number from 1 to {MAX_SIZE}"}, status=400)
    found = demo_search(query, size) if query else []
    hits = [
        {
            "_id": product.sku,
            "_source": {
                "title": product.name,
                "brand": product.brand,
                "colour": product.colour,
                "price": product.price,
            },
        }
        for product in found
    ]
    return JsonResponse({"hits": {"total": len(hits), "hits": hits}})
