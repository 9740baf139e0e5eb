"""/api/v1/library: the team's judgement library (docs/library.md). The judgements of
given query texts with their library grades; the library as a judgement list in any
format; imported lists, added whole or not at all, and removed."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.evaluations.models import Scale
from apps.library import formats, lists
from apps.library.browsing import Filters
from apps.library.entries import BASIS_LABELS, Entry, team_entries
from apps.library.models import JudgementList

# The most query texts one read may ask for; a whole library goes by the export.
QUERIES_PER_READ = 200


class LibraryJudgementOut(serializers.Serializer):
    grade = serializers.IntegerField()
    kind = serializers.CharField(help_text="person, judge, import or decision")
    source = serializers.CharField(help_text="what gave it, as the pages name it")
    grader = serializers.CharField(help_text="the person; empty for an AI judge or a list")
    judged_at = serializers.DateTimeField(allow_null=True)
    origin = serializers.CharField(help_text="the evaluation or list it is kept in")
    evaluation_id = serializers.IntegerField(allow_null=True)
    list_id = serializers.IntegerField(allow_null=True)
    stale = serializers.BooleanField(help_text="the document's content changed since")


class LibraryEntryOut(serializers.Serializer):
    query = serializers.CharField()
    doc_id = serializers.CharField()
    scale = serializers.CharField()
    grade = serializers.IntegerField(allow_null=True, help_text="the library grade")
    basis = serializers.CharField(help_text="a lead's decision, people or AI judges")
    stale = serializers.BooleanField(help_text="the grade rests on stale judgements alone")
    disagreeing = serializers.BooleanField()
    agreement = serializers.FloatField(allow_null=True)
    judgements = LibraryJudgementOut(many=True, help_text="newest first")


def _entry_out(entry: Entry) -> dict[str, Any]:
    return {
        "query": entry.query,
        "doc_id": entry.doc_id,
        "scale": entry.scale,
        "grade": entry.grade,
        "basis": BASIS_LABELS.get(entry.basis_tier, ""),
        "stale": entry.stale,
        "disagreeing": entry.disagreeing,
        "agreement": entry.agreement,
        "judgements": [
            {
                "grade": j.grade,
                "kind": j.kind,
                "source": j.source,
                "grader": j.grader,
                "judged_at": j.judged_at,
                "origin": j.origin,
                "evaluation_id": j.evaluation_id,
                "list_id": j.list_id,
                "stale": entry.is_stale(j),
            }
            for j in entry.judgements
        ],
    }


class LibraryRead(APIView):
    @extend_schema(
        summary="The team's judgements of some query texts, with their library grades",
        parameters=[
            OpenApiParameter("query", OpenApiTypes.STR, many=True, required=True),
            OpenApiParameter("scale", OpenApiTypes.STR, description="one scale; default all"),
        ],
        responses=LibraryEntryOut(many=True),
    )
    def get(self, request: Request) -> Response:
        queries = request.query_params.getlist("query")
        problems = []
        if not queries:
            problems.append("query: give at least one query text")
        if len(queries) > QUERIES_PER_READ:
            problems.append(f"query: at most {QUERIES_PER_READ} query texts a read")
        if any(len(query) > formats.QUERY_LIMIT for query in queries):
            problems.append(f"query: at most {formats.QUERY_LIMIT} characters each")
        if any("\x00" in query for query in queries):
            problems.append("query: a query text never holds a NUL character")
        if problems:
            raise InvalidInput(problems)
        entries = team_entries(
            team_id=request.user.team_id,
            queries=queries,
            scale=request.query_params.get("scale") or None,
        )
        ordered = sorted(entries.values(), key=lambda e: (e.query, e.doc_id, e.scale))
        return Response([_entry_out(entry) for entry in ordered])


class LibraryExport(APIView):
    @extend_schema(
        summary="The library as a judgement list",
        description="One line per query and document with its library grade, on one scale. "
        "format: qrels, qrels-queries (the qrels' qid<TAB>query file), quepid, srw or "
        "ranklib. people_only=1 leaves out what only AI judges judged.",
        parameters=[
            OpenApiParameter("format", OpenApiTypes.STR, required=True),
            OpenApiParameter("scale", OpenApiTypes.STR, required=True),
            OpenApiParameter("people_only", OpenApiTypes.BOOL),
        ],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> HttpResponse:
        download = lists.library_download(
            team_id=request.user.team_id,
            file_format=request.query_params.get("format", ""),
            scale=request.query_params.get("scale", ""),
            filters=Filters(),
            people_only=request.query_params.get("people_only") in ("1", "true"),
        )
        response = HttpResponse(download.text, content_type=download.media_type)
        response["Content-Disposition"] = f'attachment; filename="{download.file_name}"'
        return response


class JudgementListOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    file_format = serializers.CharField()
    scale = serializers.CharField()
    scale_levels = serializers.JSONField(allow_null=True)
    made_by = serializers.SerializerMethodField()
    judgement_count = serializers.IntegerField()
    imported_at = serializers.DateTimeField()

    def get_made_by(self, judgement_list: JudgementList) -> str:
        return "judge" if judgement_list.source.kind == "judge" else "people"


class JudgementListIn(serializers.Serializer):
    judgements = serializers.FileField()
    queries = serializers.FileField(required=False, help_text="qrels only: qid<TAB>query")
    format = serializers.ChoiceField(choices=list(formats.FORMATS))
    name = serializers.CharField(max_length=200)
    scale = serializers.ChoiceField(choices=Scale.choices)
    made_by = serializers.ChoiceField(choices=["people", "judge"], default="people")


def team_lists(request: Request) -> QuerySet[JudgementList]:
    return JudgementList.objects.filter(team_id=request.user.team_id).select_related("source")


class ListListImport(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="The lists imported into the library", responses=JudgementListOut(many=True)
    )
    def get(self, request: Request) -> Response:
        return Response(
            JudgementListOut(team_lists(request).order_by("-imported_at"), many=True).data
        )

    @extend_schema(
        summary="Import a judgement list into the library, without an evaluation",
        description="A list with any problem is refused whole, every problem named by its "
        "line or field; nothing is written.",
        request={"multipart/form-data": JudgementListIn},
        responses={201: JudgementListOut},
    )
    def post(self, request: Request) -> Response:
        given = JudgementListIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        imported = lists.judgement_list_import(
            team=request.user.team,
            name=data["name"].strip(),
            file_format=data["format"],
            judgements=data["judgements"],
            queries=data.get("queries"),
            scale=data["scale"],
            made_by=data["made_by"],
        )
        listed = get_object_or_404(team_lists(request), id=imported.id)
        return Response(JudgementListOut(listed).data, status=status.HTTP_201_CREATED)


class ListDetail(APIView):
    @extend_schema(summary="One imported list", responses=JudgementListOut)
    def get(self, request: Request, list_id: int) -> Response:
        return Response(JudgementListOut(get_object_or_404(team_lists(request), id=list_id)).data)

    @extend_schema(summary="Remove an imported list and its judgements", responses={204: None})
    def delete(self, request: Request, list_id: int) -> Response:
        judgement_list = get_object_or_404(team_lists(request), id=list_id)
        lists.judgement_list_delete(judgement_list=judgement_list)
        return Response(status=status.HTTP_204_NO_CONTENT)
