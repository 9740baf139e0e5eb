"""/api/v1/judges: the team's AI judges: list, add, get, change, remove, and test the
connection to one's model (one small call: the answer, or the error and the address).

The API key is write-only: it goes in as `api_key` and never comes back; answers show
`api_key_hint` (its last four characters) and whether one is stored. In a change, a
missing `api_key` keeps the stored key and `"api_key": ""` removes it.

A judge may ask its model several times (`samples`); a panel (`panel`: its rule and
members, /api/v1/panels/) has no protocol, address or key of its own and is changed
there, not here (409).
"""

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.judges import panels, services
from apps.judges.connection_check import check_connection
from apps.judges.models import Judge, PanelRule
from apps.judges.providers import Protocol

from .given import json_object_body

PROTOCOLS = [protocol.value for protocol in Protocol]
# The services' own arguments: a body naming one is refused at once, as the service
# names every other field it does not know together with the rest of its problems.
ARGUMENTS = ("team", "created_by", "judge", "keep_key_when_blank")


class PanelMemberOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class PanelWeightOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="the member's")
    name = serializers.CharField()
    weight = serializers.FloatField(help_text="0 to 1; a panel's weights sum to 1")


class PanelOut(serializers.Serializer):
    rule = serializers.ChoiceField(
        choices=PanelRule.choices,
        help_text="median (of an even count the lower middle), majority (a tie left for "
        "people) or fitted (weights fitted on a calibration of the panel)",
    )
    members = PanelMemberOut(many=True, help_text="in their order")
    fitted_weights = PanelWeightOut(
        many=True,
        allow_null=True,
        help_text="the fitted rule's weights by member; null before a fit (the panel "
        "cannot grade until then) and for the other rules",
    )


def panel_of(judge: Judge) -> dict[str, Any] | None:
    """A panel's rule, members and fitted weights; None for a judge of one model."""
    if not judge.is_panel:
        return None
    weights = panels.fitted_weights_shown(judge)
    return {
        "rule": judge.panel_rule,
        "members": [{"id": member.id, "name": member.name} for member in judge.members()],
        "fitted_weights": [
            {"id": member.id, "name": member.name, "weight": weight} for member, weight in weights
        ]
        or None,
    }


class JudgeOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    protocol = serializers.ChoiceField(
        choices=PROTOCOLS, allow_blank=True, help_text="empty for a panel"
    )
    base_url = serializers.CharField(help_text="empty for a panel")
    model_name = serializers.CharField(
        help_text="a panel's names its rule and members' models: 'panel (median): m1, m2'"
    )
    samples = serializers.IntegerField(
        help_text="how many times each call is asked (1 to 10); above 1 the grade given "
        "most often is kept, with the share that gave it as its agreement"
    )
    panel = serializers.SerializerMethodField()
    has_api_key = serializers.SerializerMethodField()
    api_key_hint = serializers.CharField(help_text="the key's last four characters")
    temperature = serializers.FloatField(allow_null=True)
    timeout_seconds = serializers.IntegerField()
    results_per_call = serializers.IntegerField()
    calls_at_once = serializers.IntegerField()
    max_output_tokens = serializers.IntegerField()
    structured_output = serializers.BooleanField()
    sees_images = serializers.BooleanField(help_text="shown each result's image with its text")
    prompt = serializers.IntegerField(
        source="prompt_id", allow_null=True, help_text="a team prompt; null: the default"
    )
    budget_calls = serializers.IntegerField(allow_null=True)
    budget_tokens = serializers.IntegerField(allow_null=True)
    budget_cost = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    price_input_per_million = serializers.DecimalField(max_digits=10, decimal_places=4)
    price_output_per_million = serializers.DecimalField(max_digits=10, decimal_places=4)
    price_cached_input_per_million = serializers.DecimalField(
        max_digits=10, decimal_places=4, allow_null=True
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_has_api_key(self, judge: Judge) -> bool:
        return bool(judge.api_key_encrypted)

    @extend_schema_field(PanelOut(allow_null=True))
    def get_panel(self, judge: Judge) -> dict[str, Any] | None:
        """A panel's rule and members; null for a judge of one model."""
        return panel_of(judge)


class JudgeIn(serializers.Serializer):
    """For the schema: the service checks every field and names each problem."""

    name = serializers.CharField(max_length=100)
    protocol = serializers.ChoiceField(choices=PROTOCOLS)
    base_url = serializers.CharField(max_length=500, help_text="e.g. https://api.openai.com/v1")
    model_name = serializers.CharField(max_length=200)
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True)
    temperature = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=2)
    samples = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=10,
        help_text="ask each call this many times (default 1); above 1 needs a temperature "
        "above 0 and costs that many times as much",
    )
    timeout_seconds = serializers.IntegerField(required=False, min_value=1, max_value=300)
    results_per_call = serializers.IntegerField(required=False, min_value=1, max_value=20)
    calls_at_once = serializers.IntegerField(required=False, min_value=1, max_value=32)
    max_output_tokens = serializers.IntegerField(required=False, min_value=16, max_value=32000)
    structured_output = serializers.BooleanField(required=False)
    sees_images = serializers.BooleanField(
        required=False, help_text="show each result's image (models that take images)"
    )
    prompt = serializers.IntegerField(
        required=False, allow_null=True, help_text="a team prompt's id; null: the default"
    )
    budget_calls = serializers.IntegerField(required=False, allow_null=True)
    budget_tokens = serializers.IntegerField(required=False, allow_null=True)
    budget_cost = serializers.DecimalField(
        max_digits=10, decimal_places=2, required=False, allow_null=True
    )
    price_input_per_million = serializers.DecimalField(
        max_digits=10, decimal_places=4, required=False
    )
    price_output_per_million = serializers.DecimalField(
        max_digits=10, decimal_places=4, required=False
    )
    price_cached_input_per_million = serializers.DecimalField(
        max_digits=10,
        decimal_places=4,
        required=False,
        allow_null=True,
        help_text="input read from the provider's prompt cache; null: the input price",
    )


def judge_body(
    request: Request, arguments: tuple[str, ...] = ARGUMENTS, of: str = "a judge"
) -> dict[str, Any]:
    """The body as a JSON object, none of the service's own arguments among its names."""
    given = json_object_body(request)
    named = [name for name in arguments if name in given]
    if named:
        raise InvalidInput([f"{name}: not a field of {of}" for name in named])
    return given


def team_judges(request: Request) -> QuerySet[Judge]:
    return Judge.objects.filter(team_id=request.user.team_id)


class JudgeListCreate(APIView):
    @extend_schema(summary="List the team's AI judges", responses=JudgeOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(JudgeOut(team_judges(request), many=True).data)

    @extend_schema(summary="Add an AI judge", request=JudgeIn, responses={201: JudgeOut})
    def post(self, request: Request) -> Response:
        given = judge_body(request)
        judge = services.judge_create(team=request.user.team, **given)
        return Response(JudgeOut(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetail(APIView):
    @extend_schema(summary="One AI judge", responses=JudgeOut)
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(JudgeOut(get_object_or_404(team_judges(request), id=judge_id)).data)

    @extend_schema(
        summary="Change an AI judge",
        description="409 for a panel: change it at /api/v1/panels/{id}/.",
        request=JudgeIn(partial=True),
        responses=JudgeOut,
    )
    def patch(self, request: Request, judge_id: int) -> Response:
        judge = get_object_or_404(team_judges(request), id=judge_id)
        given = judge_body(request)
        judge = services.judge_update(judge=judge, keep_key_when_blank=False, **given)
        return Response(JudgeOut(judge).data)

    @extend_schema(summary="Remove an AI judge", responses={204: None})
    def delete(self, request: Request, judge_id: int) -> Response:
        services.judge_delete(judge=get_object_or_404(team_judges(request), id=judge_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConnectionOut(serializers.Serializer):
    ok = serializers.BooleanField(help_text="the model answered")
    address = serializers.CharField(help_text="the address called")
    model = serializers.CharField()
    answer = serializers.CharField(help_text="the model's answer (empty when it failed)")
    failure = serializers.CharField(help_text="the kind of failure, empty when it answered")
    error = serializers.CharField(help_text="the error, empty when it answered")
    latency_ms = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    sentence = serializers.CharField(help_text="the outcome as the judge's page says it")


class JudgeTestConnection(APIView):
    @extend_schema(
        summary="Test the connection: one small call to the judge's model",
        request=None,
        responses=ConnectionOut,
    )
    def post(self, request: Request, judge_id: int) -> Response:
        judge = get_object_or_404(team_judges(request), id=judge_id)
        return Response(ConnectionOut(check_connection(judge)).data)
