from django.contrib import admin
from django.urls import include, path

# Each app's routes are named in its own namespace, its app_name: "judging:feedback".
urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("", include("apps.accounts.urls")),
    path("", include("apps.judging.urls")),
    path("", include("apps.interchange.urls")),
    path("", include("apps.insights.urls")),
    path("evaluations/", include("apps.lifecycle.urls")),
    path("", include("apps.library.urls")),
    path("", include("apps.behaviour.urls")),
    path("", include("apps.tries.urls")),
    path("demo/", include("apps.demo.urls")),
    path("", include("apps.endpoints.urls")),
    path("", include("apps.judges.urls")),
    path("", include("apps.notifications.urls")),
    path("", include("apps.schedules.urls")),
    path("", include("apps.sso.urls")),
]

# An error raised outside any view (in a middleware, e.g. a session saved as the response
# leaves) while the database is unavailable answers 503 too; every other error answers
# templates/500.html (Relevo's own page, rendered without the request). Views' errors are
# answered by apps.core.unavailable's middleware.
handler500 = "apps.core.unavailable.server_error"
# A request refused before any view ran (an unknown Host) answers Relevo's 400 page.
handler400 = "apps.core.error_pages.bad_request"
# An unknown path under /api/ answers JSON, as the rest of the API does.
handler404 = "apps.api.not_found.page_not_found"
