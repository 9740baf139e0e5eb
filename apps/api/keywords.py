"""/api/v1/evaluations/{id}/keywords and /judgements: what was judged, and how."""

from typing import Any

from django.db.models import Prefetch, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.evaluations.metric_list import cutoff_out
from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot
from apps.scoring.models import KeywordMetric

from .evaluations import evaluation_of
from .pagination import Pages


class SnapshotOut(serializers.Serializer):
    position = serializers.IntegerField()
    doc_id = serializers.CharField()
    name = serializers.CharField()
    image = serializers.CharField()
    attributes = serializers.DictField()
    value = serializers.FloatField(allow_null=True, help_text="stage 1, native scale")


class KeywordMetricOut(serializers.Serializer):
    metric = serializers.CharField()
    k = serializers.IntegerField(allow_null=True, help_text="the cutoff; null: the whole list")
    value = serializers.FloatField(allow_null=True)


class KeywordOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField(source="text")
    position = serializers.IntegerField()
    failed = serializers.BooleanField()
    http_status = serializers.IntegerField(allow_null=True)
    execution_message = serializers.CharField()
    graded_slots = serializers.IntegerField()
    metrics = serializers.SerializerMethodField()
    snapshots = SnapshotOut(many=True)

    @extend_schema_field(KeywordMetricOut(many=True))
    def get_metrics(self, keyword: Keyword) -> list[dict[str, Any]]:
        return [
            {"metric": m.metric, "k": cutoff_out(m.k), "value": m.value}
            for m in keyword.metric_values.all()
        ]


class KeywordList(generics.ListAPIView):
    """Keywords of an evaluation, with their metric values and results."""

    serializer_class = KeywordOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[Keyword]:
        evaluation = evaluation_of(self.request, self.kwargs["evaluation_id"])
        return (
            Keyword.objects.filter(evaluation=evaluation)
            .order_by("position")
            .prefetch_related(
                Prefetch("snapshots", queryset=Snapshot.objects.order_by("position")),
                Prefetch("metric_values", queryset=KeywordMetric.objects.order_by("metric", "k")),
            )
        )


class JudgementOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField(source="keyword.text")
    position = serializers.IntegerField(source="snapshot_position")
    doc_id = serializers.CharField(source="snapshot.doc_id")
    slot = serializers.IntegerField(source="index")
    grade = serializers.IntegerField(allow_null=True)
    grader = serializers.SerializerMethodField()
    reason = serializers.CharField()
    assigned_at = serializers.DateTimeField(allow_null=True)
    graded_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_grader(self, slot: FeedbackSlot) -> str | None:
        if slot.grader is not None:
            return slot.grader.email
        return slot.external_grader or None


class JudgementList(generics.ListAPIView):
    """Every feedback slot of an evaluation, with grader, grade and reason."""

    serializer_class = JudgementOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[FeedbackSlot]:
        evaluation = evaluation_of(self.request, self.kwargs["evaluation_id"])
        slots = (
            FeedbackSlot.objects.filter(evaluation=evaluation)
            .select_related("keyword", "snapshot", "grader")
            .order_by("keyword_position", "snapshot_position", "index")
        )
        if self.request.query_params.get("graded") in ("true", "1"):
            slots = slots.filter(grade__isnull=False)
        return slots

    @extend_schema(
        parameters=[OpenApiParameter("graded", OpenApiTypes.BOOL, description="only graded slots")]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)
