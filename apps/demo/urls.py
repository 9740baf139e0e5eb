"""The demo's search API, mounted at /demo/ (DEMO_SEARCH_URL in config/settings.py)."""

from django.urls import path

from . import search_api

app_name = "demo"

urlpatterns = [
    path("search", search_api.search, name="search"),
]
