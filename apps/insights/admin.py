from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import SnapshotDecision


@admin.register(SnapshotDecision)
class SnapshotDecisionAdmin(admin.ModelAdmin):
    """Read only: a decision changed here would not re-queue its keyword's metrics; leads
    set and clear decisions in the disagreement queue (apps.insights.agreement.services)."""

    list_display = ["snapshot", "evaluation", "grade", "decided_by", "decided_at"]
    raw_id_fields = ["snapshot", "evaluation", "decided_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
