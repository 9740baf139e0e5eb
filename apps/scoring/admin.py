from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin

from .models import KeywordMetric


@admin.register(KeywordMetric)
class KeywordMetricAdmin(ReadOnlyAdmin):
    """Computed values, shown only: the pipeline owns them (an edit would be overwritten,
    and the evaluation's means would not follow it meanwhile)."""

    list_display = ["keyword", "metric", "k", "value", "computed_at"]
    list_filter = ["metric", "k"]
    raw_id_fields = ["keyword", "evaluation"]
