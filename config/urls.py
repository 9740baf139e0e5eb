from django.contrib import admin
from django.urls import include, path

from apps.api.urls import urlpatterns as api_pages
from apps.api.urls import v1 as api_v1
from apps.evaluations import demo_api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/", include(api_pages)),
    path("", include("apps.accounts.urls")),
    path("", include("apps.judging.urls")),
    path("", include("apps.insights.urls")),
    path("evaluations/", include("apps.evaluations.urls")),
    path("demo/search", demo_api.search, name="demo_search"),
    path("", include("apps.endpoints.urls")),
]
