"""/api/v1/click-logs/: a team's behaviour logs (docs/behaviour.md). POST imports one, UBI
JSON Lines (queries and events) or a CSV click log, stored whole or not at all; lines
that cannot be read are left out and listed on the log. Bigger files than a request may
carry go through `manage.py import_clicks`."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.behaviour.importing import click_log_import
from apps.behaviour.models import ClickLog, LogFormat


class ClickLogOut(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = ClickLog
        fields = [
            "id",
            "name",
            "file_format",
            "imported_at",
            "first_event_at",
            "last_event_at",
            "lines_read",
            "events_read",
            "clicks",
            "query_count",
            "problem_count",
            "problems",
        ]


class ClickLogIn(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    format = serializers.ChoiceField(choices=LogFormat.choices)
    queries = serializers.FileField(required=False, help_text="UBI: the ubi_queries export")
    events = serializers.FileField(required=False, help_text="UBI: the ubi_events export")
    log = serializers.FileField(required=False, help_text="CSV: query,document,position,clicked")


def team_logs(request: Request) -> QuerySet[ClickLog]:
    return ClickLog.objects.filter(team_id=request.user.team_id)


class ClickLogListImport(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(summary="The team's behaviour logs", responses=ClickLogOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(ClickLogOut(team_logs(request), many=True).data)

    @extend_schema(
        summary="Import a behaviour log",
        description="UBI (`queries` and `events`, JSON Lines) or CSV (`log`). Read as it "
        "streams into impressions and clicks per query, document and rank; lines that "
        "cannot be read are left out and listed in `problems`. A log in which nothing can "
        "be read is refused (400) and nothing is stored.",
        request={"multipart/form-data": ClickLogIn},
        responses={201: ClickLogOut},
    )
    def post(self, request: Request) -> Response:
        given = ClickLogIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        log = click_log_import(
            team=request.user.team,
            user=None,
            name=data["name"],
            file_format=data["format"],
            queries=data.get("queries"),
            events=data.get("events"),
            log=data.get("log"),
        )
        return Response(ClickLogOut(log).data, status=status.HTTP_201_CREATED)


class ClickLogDetail(APIView):
    @extend_schema(summary="One behaviour log", responses=ClickLogOut)
    def get(self, request: Request, log_id: int) -> Response:
        return Response(ClickLogOut(get_object_or_404(team_logs(request), id=log_id)).data)

    @extend_schema(summary="Remove a behaviour log and its counts", responses={204: None})
    def delete(self, request: Request, log_id: int) -> Response:
        get_object_or_404(team_logs(request), id=log_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
