"""The demo's search API and its judge's model, mounted at /demo/ (DEMO_SEARCH_URL and
DEMO_JUDGE_URL in config/settings.py)."""

from django.urls import path

from . import judge_api, search_api

app_name = "demo"

urlpatterns = [
    path("search", search_api.search, name="search"),
    path("llm/v1/chat/completions", judge_api.chat_completions, name="judge_model"),
]
