"""/api/v1/query-sets/: query texts the team keeps under a name, to run tries over."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.tries.models import SavedQuerySet
from apps.tries.query_sets import query_set_save


class QuerySetIn(serializers.Serializer):
    name = serializers.JSONField(help_text="1 to 200 characters, not the name of another set")
    queries = serializers.JSONField(help_text="up to 1,000 query texts")


class QuerySetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    queries = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


def _out(saved: SavedQuerySet) -> dict[str, Any]:
    return {
        "id": saved.id,
        "name": saved.name,
        "queries": saved.queries,
        "created_at": saved.created_at,
    }


class QuerySetListCreate(APIView):
    @extend_schema(summary="The team's saved query sets", responses=QuerySetOut(many=True))
    def get(self, request: Request) -> Response:
        saved = SavedQuerySet.objects.filter(team_id=request.user.team_id).order_by("name")
        return Response([_out(one) for one in saved])

    @extend_schema(
        summary="Save query texts under a name",
        request=QuerySetIn,
        responses={201: QuerySetOut},
    )
    def post(self, request: Request) -> Response:
        data = request.data if isinstance(request.data, dict) else {}
        saved = query_set_save(
            team=request.user.team, user=None, name=data.get("name"), queries=data.get("queries")
        )
        return Response(_out(saved), status=status.HTTP_201_CREATED)


class QuerySetDetail(APIView):
    @extend_schema(summary="A saved query set", responses=QuerySetOut)
    def get(self, request: Request, set_id: int) -> Response:
        return Response(_out(self._saved(request, set_id)))

    @extend_schema(
        summary="Remove a saved query set (tries made from it keep their queries)",
        responses={204: None},
    )
    def delete(self, request: Request, set_id: int) -> Response:
        self._saved(request, set_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _saved(self, request: Request, set_id: int) -> SavedQuerySet:
        return get_object_or_404(SavedQuerySet, id=set_id, team_id=request.user.team_id)
