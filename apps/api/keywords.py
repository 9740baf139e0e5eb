"""/api/v1/evaluations/{id}/keywords and /judgements: what was judged, and how."""

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.evaluations.keyword_notes import (
    INFORMATION_NEED_MAX_LENGTH,
    NOTES_MAX_LENGTH,
    keyword_notes_set,
    notes_of,
)
from apps.evaluations.metric_list import cutoff_out
from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot, Source
from apps.evaluations.services import KEYWORD_LIMIT
from apps.judging.sources import PROVENANCE_JOINS, provenance_of
from apps.lifecycle.keyword_editing import (
    MAX_ADDED_AT_ONCE,
    evaluation_keywords_add,
    keyword_remove,
    keyword_rename,
)
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
    information_need = serializers.SerializerMethodField(
        help_text="what the searcher wants; graders read it beside the keyword"
    )
    notes = serializers.SerializerMethodField(help_text="the lead's notes on the keyword")
    metrics = serializers.SerializerMethodField()
    snapshots = SnapshotOut(many=True)

    def get_information_need(self, keyword: Keyword) -> str:
        return notes_of(keyword)["information_need"]

    def get_notes(self, keyword: Keyword) -> str:
        return notes_of(keyword)["notes"]

    @extend_schema_field(KeywordMetricOut(many=True))
    def get_metrics(self, keyword: Keyword) -> list[dict[str, Any]]:
        return [
            {"metric": m.metric, "k": cutoff_out(m.k), "value": m.value}
            for m in keyword.metric_values.all()
        ]


def _with_results(keywords: QuerySet[Keyword]) -> QuerySet[Keyword]:
    """The keywords with what KeywordOut reads, in two more queries however many."""
    return keywords.select_related("notes").prefetch_related(
        Prefetch("snapshots", queryset=Snapshot.objects.order_by("position")),
        Prefetch("metric_values", queryset=KeywordMetric.objects.order_by("metric", "k")),
    )


class KeywordsAddIn(serializers.Serializer):
    keywords = serializers.ListField(
        child=serializers.CharField(max_length=KEYWORD_LIMIT, allow_blank=True),
        allow_empty=False,
        max_length=MAX_ADDED_AT_ONCE,
        help_text="one query each; trimmed, blanks, repeats and those listed already skipped",
    )


class KeywordAddedOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField(source="text")
    position = serializers.IntegerField()


class KeywordsAddOut(serializers.Serializer):
    added = KeywordAddedOut(many=True)
    skipped = serializers.IntegerField(help_text="blank, repeated or listed already")


class KeywordList(generics.ListAPIView):
    """Keywords of an evaluation, with their metric values and results."""

    serializer_class = KeywordOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[Keyword]:
        evaluation = evaluation_of(self.request, self.kwargs["evaluation_id"])
        return _with_results(Keyword.objects.filter(evaluation=evaluation).order_by("position"))

    @extend_schema(
        summary="Add keywords to a pending evaluation",
        description="After its keywords, in order. With a search model they run at the next "
        "start or resume. 409 unless the evaluation is pending and not starting.",
        request=KeywordsAddIn,
        responses={201: KeywordsAddOut},
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        evaluation = evaluation_of(request, evaluation_id)
        data = KeywordsAddIn(data=request.data)
        data.is_valid(raise_exception=True)
        typed = data.validated_data["keywords"]
        added = evaluation_keywords_add(evaluation=evaluation, texts=typed)
        body = {"added": added, "skipped": len(typed) - len(added)}
        return Response(KeywordsAddOut(body).data, status=status.HTTP_201_CREATED)


class KeywordChangeIn(serializers.Serializer):
    keyword = serializers.CharField(max_length=KEYWORD_LIMIT, help_text="the new text")


class KeywordDetail(APIView):
    """One keyword of a pending evaluation: rename it or remove it (apps.evaluations.
    keyword_editing has the rules)."""

    def _keyword(self, request: Request, evaluation_id: int, keyword_id: int) -> Keyword:
        evaluation = evaluation_of(request, evaluation_id)
        return get_object_or_404(Keyword, id=keyword_id, evaluation=evaluation)

    @extend_schema(
        summary="Rename a keyword of a pending evaluation",
        description="Its results, grades and metric values go with the old text, and it runs "
        "again at the next start or resume; without a search model a keyword with results "
        "cannot be renamed (409). 400 naming `keyword` for an empty, too long or listed text.",
        request=KeywordChangeIn,
        responses=KeywordOut,
    )
    def patch(self, request: Request, evaluation_id: int, keyword_id: int) -> Response:
        keyword = self._keyword(request, evaluation_id, keyword_id)
        data = KeywordChangeIn(data=request.data)
        data.is_valid(raise_exception=True)
        keyword_rename(keyword=keyword, text=data.validated_data["keyword"])
        renamed = _with_results(Keyword.objects.filter(id=keyword.id)).get()
        return Response(KeywordOut(renamed).data)

    @extend_schema(
        summary="Remove a keyword of a pending evaluation, with its results, grades and values",
        request=None,
        responses={204: None},
    )
    def delete(self, request: Request, evaluation_id: int, keyword_id: int) -> Response:
        keyword_remove(keyword=self._keyword(request, evaluation_id, keyword_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class KeywordNotesIn(serializers.Serializer):
    information_need = serializers.CharField(
        max_length=INFORMATION_NEED_MAX_LENGTH, allow_blank=True, trim_whitespace=True
    )
    notes = serializers.CharField(
        max_length=NOTES_MAX_LENGTH, allow_blank=True, trim_whitespace=True
    )


class KeywordNotesDetail(APIView):
    """A keyword's information need and the lead's notes: set at any time, whatever the
    evaluation's status (they move no grade and no metric)."""

    @extend_schema(
        summary="Set a keyword's information need and notes",
        description="Both replace what was there (empty clears). 400 naming the field that "
        "is too long (2,000 and 5,000 characters).",
        request=KeywordNotesIn,
        responses=KeywordOut,
    )
    def put(self, request: Request, evaluation_id: int, keyword_id: int) -> Response:
        evaluation = evaluation_of(request, evaluation_id)
        keyword = get_object_or_404(Keyword, id=keyword_id, evaluation=evaluation)
        data = KeywordNotesIn(data=request.data)
        data.is_valid(raise_exception=True)
        keyword_notes_set(keyword=keyword, **data.validated_data)
        written = _with_results(Keyword.objects.filter(id=keyword.id)).get()
        return Response(KeywordOut(written).data)


class VoteOut(serializers.Serializer):
    by = serializers.CharField(help_text="the member's name, or 'sample 2'")
    grade = serializers.IntegerField()
    judge = serializers.IntegerField(
        required=False, allow_null=True, help_text="the member's id (a panel's vote)"
    )


class AiJudgeOut(serializers.Serializer):
    judge = serializers.IntegerField(
        allow_null=True,
        help_text="the judge's id (/api/v1/judges/{id}/); null for a judge's grade a file brought",
    )
    name = serializers.CharField()
    model = serializers.CharField(
        allow_null=True, help_text="the model that made the grade, as the grade recorded it"
    )
    prompt_version = serializers.CharField(allow_null=True, help_text="likewise")
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="0 to 1, as the model said; null for a grade copied or imported",
    )
    agreement = serializers.FloatField(
        allow_null=True,
        help_text="a panel's or a sampled judge's grade: the share of its members or "
        "samples that gave it (1: all); null otherwise, and for a grade copied or imported",
    )
    votes = VoteOut(
        many=True,
        allow_null=True,
        help_text="each member's or sample's grade, in order; null as agreement is",
    )


class ReusedFromOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class SourceOut(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=Source.choices, help_text="who gave the grade (a copy keeps its original's)"
    )
    name = serializers.CharField(
        allow_null=True, help_text="the AI judge's name or the import's label"
    )
    judge = serializers.IntegerField(allow_null=True, help_text="the team's judge, if any")
    model = serializers.CharField(allow_null=True)
    prompt_version = serializers.CharField(allow_null=True)
    chain_link = serializers.CharField(
        allow_null=True, help_text="the link of a chain that gave it, e.g. 'next judge'"
    )
    reused_from = ReusedFromOut(
        allow_null=True, help_text="the evaluation a reused grade was copied from"
    )


class JudgementOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField(source="keyword.text")
    position = serializers.IntegerField(source="snapshot_position")
    doc_id = serializers.CharField(source="snapshot.doc_id")
    slot = serializers.IntegerField(source="index")
    grade = serializers.IntegerField(allow_null=True)
    grader = serializers.SerializerMethodField()
    reason = serializers.CharField(help_text="the grader's; an AI judge's one sentence")
    source = serializers.SerializerMethodField()
    ai_judge = serializers.SerializerMethodField()
    assigned_at = serializers.DateTimeField(allow_null=True)
    graded_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(
        serializers.CharField(
            allow_null=True,
            help_text="a member's email, an AI judge's name, or an imported grader's name",
        )
    )
    def get_grader(self, slot: FeedbackSlot) -> str | None:
        made = provenance_of(slot)
        if made is not None and made.is_judge:
            return made.name
        if slot.grader is not None:
            return slot.grader.email
        return slot.external_grader or None

    @extend_schema_field(SourceOut(allow_null=True))
    def get_source(self, slot: FeedbackSlot) -> dict[str, Any] | None:
        """Who gave the grade, written with it; null for an ungraded slot."""
        made = provenance_of(slot)
        return None if made is None else made.as_json()

    @extend_schema_field(AiJudgeOut(allow_null=True))
    def get_ai_judge(self, slot: FeedbackSlot) -> dict[str, Any] | None:
        """What made an AI judge's grade; null for anyone else's."""
        made = provenance_of(slot)
        if made is None or not made.is_judge:
            return None
        # The call's confidence belongs to a grade the judge gave here, not to a copy.
        call = getattr(slot, "judge_grade", None) if not slot.reused else None
        return {
            "judge": made.judge_id,
            "name": made.name,
            "model": made.model_name or None,
            "prompt_version": made.prompt_version or None,
            "confidence": call.confidence if call else None,
            "agreement": call.agreement if call else None,
            "votes": call.votes if call else None,
        }


@extend_schema_view(
    get=extend_schema(
        parameters=[OpenApiParameter("graded", OpenApiTypes.BOOL, description="only graded slots")]
    )
)
class JudgementList(generics.ListAPIView):
    """Every feedback slot of an evaluation, with grader, grade and reason; an AI judge's
    grade names the judge (not its grader address) and its model and prompt version."""

    serializer_class = JudgementOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[FeedbackSlot]:
        evaluation = evaluation_of(self.request, self.kwargs["evaluation_id"])
        slots = (
            FeedbackSlot.objects.filter(evaluation=evaluation)
            # The grade's source, and for a judge's grade the call's confidence: left
            # joins on unique keys.
            .select_related("keyword", "snapshot", "grader", "judge_grade", *PROVENANCE_JOINS)
            .order_by("keyword__position", "snapshot_position", "index")
        )
        if self.request.query_params.get("graded") in ("true", "1"):
            slots = slots.filter(grade__isnull=False)
        return slots
