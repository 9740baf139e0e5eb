from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import KeywordMetric


@admin.register(KeywordMetric)
class KeywordMetricAdmin(admin.ModelAdmin):
    """Computed values, shown only: the pipeline owns them (an edit would be overwritten,
    and the evaluation's means would not follow it meanwhile)."""

    list_display = ["keyword", "metric", "k", "value", "computed_at"]
    list_filter = ["metric", "k"]
    raw_id_fields = ["keyword", "evaluation"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
