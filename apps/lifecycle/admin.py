from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.core.errors import InvalidInput
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    EvaluationMetricPoint,
    FeedbackSlot,
    Keyword,
    Snapshot,
    SnapshotSkip,
)
from apps.judging.judgements import Action, Giver, check_grade, slot_judge


class EvaluationMetricInline(admin.TabularInline):
    # Metrics are chosen on the evaluation's edit page, which recomputes their values.
    model = EvaluationMetric
    extra = 0
    fields = ["metric", "k", "value", "value_count", "means_exact"]
    readonly_fields = ["metric", "k", "value", "value_count", "means_exact"]
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "scale", "strategy", "profile", "status", "progress", "pinned"]
    list_filter = ["team", "status", "scale", "profile", "archived", "pinned"]
    search_fields = ["name", "description"]
    filter_horizontal = ["tags"]
    # What decides the metric values is changed on the evaluation's edit page
    # (editing.evaluation_update), which checks the lock and marks every keyword for
    # recomputation; a change here would leave the stored values of the old settings.
    readonly_fields = [
        "scale",
        "scale_levels",
        "strategy",
        "profile",
        "transformers",
        "zero_without_results",
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
    # The result's value is computed from its grades by the pipeline, which would only
    # overwrite an edit here (and the metrics would not follow it meanwhile).
    readonly_fields = ["value"]


class FeedbackSlotForm(forms.ModelForm):
    class Meta:
        model = FeedbackSlot
        fields = ["grade", "reason"]
        help_texts = {
            "grade": "Saved as any grade is: the keyword's metrics are recomputed. Empty "
            "clears the slot (grade and grader) so the queue offers it again."
        }

    def clean_grade(self) -> int | None:
        grade = self.cleaned_data["grade"]
        if grade is not None:
            try:
                check_grade(grade, self.instance.evaluation.grading_scale)
            except InvalidInput as error:
                raise forms.ValidationError(error.message) from error
        return grade


SLOT_FIELDS = (
    "evaluation",
    "keyword",
    "snapshot",
    "index",
    "grader",
    "external_grader",
    "grade",
    "reason",
    "assigned_at",
    "graded_at",
    "reused",
)
# Through the grade writer (FeedbackSlotForm, save_model); the rest is read-only.
EDITABLE_SLOT_FIELDS = ("grade", "reason")


@admin.register(FeedbackSlot)
class FeedbackSlotAdmin(admin.ModelAdmin):
    """A slot's grade and reason go through the judging services, as every grade does: a
    grade is checked against the evaluation's scale and its keyword is marked for its
    metrics, whose recompute is queued (slot_record_grade); an emptied grade is the lead's
    reset (slot_reset). Saving the row directly left the metrics wrong. The rest of a slot
    is kept by those services and is read-only here, and slots are never added or deleted
    here: they come and go with their results, and the evaluation counts them."""

    form = FeedbackSlotForm
    list_display = ["id", "snapshot", "index", "grader", "external_grader", "grade", "graded_at"]
    list_filter = ["grade"]
    fields = SLOT_FIELDS
    readonly_fields = [name for name in SLOT_FIELDS if name not in EDITABLE_SLOT_FIELDS]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not form.has_changed():
            return
        if obj.grade is None:
            slot_judge(slot_id=obj.id, giver=Giver.lead(request.user), action=Action.CLEAR)
            return
        # The grade stays its grader's; a slot nobody held is recorded as the admin's.
        giver = Giver.lead(request.user)
        if obj.grader is None and not obj.external_grader:
            giver = Giver.recorded(name=request.user.get_username())
        slot_judge(slot_id=obj.id, giver=giver, grade=obj.grade, reason=obj.reason)


@admin.register(SnapshotSkip)
class SnapshotSkipAdmin(admin.ModelAdmin):
    list_display = ["snapshot", "user", "created_at"]
    raw_id_fields = ["snapshot", "user"]


@admin.register(EvaluationMetricPoint)
class EvaluationMetricPointAdmin(admin.ModelAdmin):
    list_display = ["evaluation_metric", "minute", "value", "progress"]
    raw_id_fields = ["evaluation_metric"]
