from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin

from .models import SnapshotDecision


@admin.register(SnapshotDecision)
class SnapshotDecisionAdmin(ReadOnlyAdmin):
    """Read only: a decision changed here would not re-queue its keyword's metrics; leads
    set and clear decisions in the disagreement queue (apps.judging.decisions)."""

    list_display = ["snapshot", "evaluation", "grade", "decided_by", "decided_at"]
    raw_id_fields = ["snapshot", "evaluation", "decided_by"]
