from django.contrib import admin

from .models import (
    Evaluation,
    EvaluationMetric,
    EvaluationMetricPoint,
    FeedbackSlot,
    Keyword,
    Snapshot,
    SnapshotSkip,
)


class EvaluationMetricInline(admin.TabularInline):
    model = EvaluationMetric
    extra = 0
    fields = ["metric", "k", "value", "value_count", "means_exact"]
    readonly_fields = ["value", "value_count", "means_exact"]


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "scale", "strategy", "profile", "status", "progress", "pinned"]
    list_filter = ["team", "status", "scale", "profile", "archived", "pinned"]
    search_fields = ["name", "description"]
    filter_horizontal = ["tags"]
    readonly_fields = [
        "total_slots",
        "graded_slots",
        "progress",
        "created_at",
        "started_at",
        "finished_at",
    ]
    inlines = [EvaluationMetricInline]


@admin.register(Keyword)
class KeywordAdmin(admin.ModelAdmin):
    list_display = ["text", "evaluation", "position", "failed", "needs_scoring", "graded_slots"]
    list_filter = ["failed", "needs_scoring"]
    search_fields = ["text"]
    raw_id_fields = ["evaluation"]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "name", "keyword", "position", "value"]
    search_fields = ["doc_id", "name"]
    raw_id_fields = ["keyword"]


@admin.register(FeedbackSlot)
class FeedbackSlotAdmin(admin.ModelAdmin):
    list_display = ["id", "snapshot", "index", "grader", "external_grader", "grade", "graded_at"]
    list_filter = ["grade"]
    raw_id_fields = ["evaluation", "keyword", "snapshot", "grader"]


@admin.register(SnapshotSkip)
class SnapshotSkipAdmin(admin.ModelAdmin):
    list_display = ["snapshot", "user", "created_at"]
    raw_id_fields = ["snapshot", "user"]


@admin.register(EvaluationMetricPoint)
class EvaluationMetricPointAdmin(admin.ModelAdmin):
    list_display = ["evaluation_metric", "minute", "value", "progress"]
    raw_id_fields = ["evaluation_metric"]
