from django.contrib import admin
from django.urls import include, path

from apps.api.urls import urlpatterns as api_pages
from apps.api.urls import v1 as api_v1
from apps.demo import search_api as demo_api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/", include(api_pages)),
    path("", include("apps.accounts.urls")),
    path("", include("apps.judging.urls")),
    path("", include("apps.interchange.urls")),
    path("", include("apps.insights.urls")),
    path("evaluations/", include("apps.evaluations.urls")),
    path("demo/search", demo_api.search, name="demo_search"),
    path("", include("apps.endpoints.urls")),
]

# An error raised outside any view (in a middleware, e.g. a session saved as the response
# leaves) while the database is unavailable answers 503 too; every other error is
# Django's 500. Views' errors are answered by apps.core.unavailable's middleware.
handler500 = "apps.core.unavailable.server_error"
# An unknown path under /api/ answers JSON, as the rest of the API does.
handler404 = "apps.api.not_found.page_not_found"
