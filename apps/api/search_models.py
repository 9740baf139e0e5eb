"""/api/v1/models: the team's search models, list and get.

Headers, query parameters and the body template are left out on purpose: they often
carry the search system's own credentials (an API key header, a token parameter), and
an integration that reads models needs what to call them by, not how to call the search
system. The endpoint is summarised the same way (no headers, no mapper).
"""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.endpoints import selectors
from apps.endpoints.models import BodyType, HttpMethod, SearchModel
from apps.endpoints.name_value_lines import keyword_lines

from .pagination import Pages


class EndpointSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    method = serializers.ChoiceField(choices=HttpMethod.choices)
    url = serializers.CharField(help_text="may hold #query#, where each keyword goes")
    timeout_seconds = serializers.FloatField()


class SearchModelOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    endpoint = EndpointSummaryOut()
    body_type = serializers.ChoiceField(choices=BodyType.choices)
    tags = serializers.SerializerMethodField()
    default_keywords = serializers.SerializerMethodField()
    evaluations = serializers.IntegerField(
        source="evaluation_count", help_text="evaluations created from this model"
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_tags(self, model: SearchModel) -> list[str]:
        return [tag.name for tag in model.tags.all()]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_default_keywords(self, model: SearchModel) -> list[str]:
        return keyword_lines(model.default_keywords)


def team_models(request: Request) -> QuerySet[SearchModel]:
    return selectors.team_models(team_id=request.user.team_id)


@extend_schema_view(get=extend_schema(summary="List the team's search models"))
class SearchModelList(generics.ListAPIView):
    serializer_class = SearchModelOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[SearchModel]:
        return team_models(self.request)


class SearchModelDetail(APIView):
    @extend_schema(summary="One search model", responses=SearchModelOut)
    def get(self, request: Request, model_id: int) -> Response:
        model = get_object_or_404(team_models(request), id=model_id)
        return Response(SearchModelOut(model).data)
