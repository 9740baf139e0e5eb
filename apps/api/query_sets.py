"""/api/v1/query-sets/: query texts the team keeps under a name, to run tries over, and
sets sampled from a behaviour log with the design that drew them
(docs/query-sets-from-logs.md)."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.engine.query_sampling import MAX_BANDS, METHODS
from apps.tries.log_samples import MAX_SEED, query_set_sample
from apps.tries.models import SavedQuerySet
from apps.tries.query_sets import MAX_QUERIES, query_set_save

from .given import json_object_body


class QuerySetIn(serializers.Serializer):
    name = serializers.JSONField(help_text="1 to 200 characters, not the name of another set")
    queries = serializers.JSONField(help_text="up to 1,000 query texts")


class QuerySetSampleIn(serializers.Serializer):
    name = serializers.CharField(help_text="1 to 200 characters, not the name of another set")
    log = serializers.JSONField(help_text="a behaviour log of the team: its id or name")
    method = serializers.ChoiceField(
        choices=METHODS,
        help_text="top: the most searched; bands: a random sample by band of searches; "
        "pps: probability proportional to searches",
    )
    size = serializers.IntegerField(min_value=1, max_value=MAX_QUERIES)
    seed = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_SEED, help_text="drawn and recorded if not given"
    )
    bands = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_BANDS,
        help_text="method bands only; 3 if not given",
    )


class DesignLogOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    first_event_at = serializers.CharField(help_text="as the log's timestamps say")
    last_event_at = serializers.CharField()


class DesignPopulationOut(serializers.Serializer):
    queries = serializers.IntegerField()
    searches = serializers.IntegerField(help_text="the sum of the queries' rank-1 impressions")


class DesignBandOut(serializers.Serializer):
    band = serializers.IntegerField(help_text="1: the most searched")
    low = serializers.IntegerField(help_text="searches, inclusive")
    high = serializers.IntegerField()
    queries = serializers.IntegerField(help_text="in the whole log")
    searches = serializers.IntegerField()
    sampled = serializers.IntegerField()


class DesignQueryOut(serializers.Serializer):
    query = serializers.CharField()
    searches = serializers.IntegerField()
    probability = serializers.FloatField(
        allow_null=True, help_text="its inclusion probability; null for top (not random)"
    )
    band = serializers.IntegerField(allow_null=True)


class DesignOut(serializers.Serializer):
    log = DesignLogOut()
    method = serializers.CharField()
    size_asked = serializers.IntegerField()
    size = serializers.IntegerField(help_text="fewer than asked when the log has fewer queries")
    seed = serializers.IntegerField()
    population = DesignPopulationOut()
    bands_asked = serializers.IntegerField(allow_null=True)
    bands = DesignBandOut(many=True, allow_null=True)
    certain = serializers.IntegerField(allow_null=True, help_text="pps: taken with probability 1")
    queries = DesignQueryOut(many=True)
    sampled_at = serializers.DateTimeField()


class QuerySetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    queries = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    design = DesignOut(allow_null=True, help_text="how it was sampled; null for a hand-made set")


def _out(saved: SavedQuerySet) -> dict[str, Any]:
    return {
        "id": saved.id,
        "name": saved.name,
        "queries": saved.queries,
        "created_at": saved.created_at,
        "design": saved.design,
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


class QuerySetSample(APIView):
    @extend_schema(
        summary="Sample a query set from a behaviour log",
        description="A query's frequency is its searches: the sum of its rank-1 impressions "
        "in the log. `top` takes the most searched; `bands` a random sample in bands of "
        "searches equally wide on a log scale, shared equally between them; `pps` draws "
        "with probability proportional to searches. The set is saved with its design: the "
        "log, method, sizes, seed, population, bands and each query's inclusion "
        "probability. A log the team does not have answers 404.",
        request=QuerySetSampleIn,
        responses={201: QuerySetOut},
    )
    def post(self, request: Request) -> Response:
        data = json_object_body(request, fields=QuerySetSampleIn().fields, of="a sample")
        saved = query_set_sample(
            team=request.user.team,
            user=None,
            name=data.get("name"),
            log=data.get("log"),
            method=data.get("method"),
            size=data.get("size"),
            seed=data.get("seed"),
            bands=data.get("bands"),
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
