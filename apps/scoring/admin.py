from django.contrib import admin

from .models import KeywordMetric


@admin.register(KeywordMetric)
class KeywordMetricAdmin(admin.ModelAdmin):
    list_display = ["keyword", "metric", "k", "value", "computed_at"]
    list_filter = ["metric", "k"]
    raw_id_fields = ["keyword", "evaluation"]
