"""/api/v1/panels: the team's panels of AI judges: list, add, read, change.

A panel is a judge made of two to five of the team's judges of one model (`members`, by
id, in order) whose grades its `rule` makes one (apps/judges/panels.py). It answers as
a judge does (/api/v1/judges/{id}/ reads, runs and removes it too), with `panel` set.
Every problem names its field (400); another team's panel, or a judge that is not a
panel, answers 404.
"""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.judges import panels
from apps.judges.models import Judge, PanelRule

from .judges import JudgeOut, judge_body

# The services' own arguments: a body naming one is refused at once (the service names
# every other field it does not know, with the rest of its problems).
ARGUMENTS = ("team", "created_by", "panel")


class PanelIn(serializers.Serializer):
    """For the schema: the service checks every field and names each problem."""

    name = serializers.CharField(max_length=100)
    members = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        min_length=panels.MEMBERS_MIN,
        max_length=panels.MEMBERS_MAX,
        help_text="the team's judges of one model (no panel), by id, in order; changing "
        "them forgets fitted weights",
    )
    rule = serializers.ChoiceField(
        choices=PanelRule.choices,
        help_text="median: the middle grade (of an even count the lower middle); majority: "
        "the grade most members gave, a tie left for people; fitted: weights fitted on a "
        "calibration of the panel (it grades once they are)",
    )
    prompt = serializers.IntegerField(
        required=False, allow_null=True, help_text="a team prompt's id; null: the default"
    )
    results_per_call = serializers.IntegerField(required=False, min_value=1, max_value=20)
    calls_at_once = serializers.IntegerField(required=False, min_value=1, max_value=32)
    budget_calls = serializers.IntegerField(
        required=False, allow_null=True, help_text="every member's call counts"
    )
    budget_tokens = serializers.IntegerField(required=False, allow_null=True)
    budget_cost = serializers.DecimalField(
        max_digits=10, decimal_places=2, required=False, allow_null=True
    )


def team_panels(request: Request) -> QuerySet[Judge]:
    return Judge.objects.filter(team_id=request.user.team_id).exclude(panel_rule="")


class PanelListCreate(APIView):
    @extend_schema(summary="List the team's panels of AI judges", responses=JudgeOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(JudgeOut(team_panels(request), many=True).data)

    @extend_schema(
        summary="Add a panel of AI judges",
        description="400 naming `members` (fewer than 2 or more than 5, a panel, another "
        "team's or an unknown judge, one given twice), `rule`, or any other field.",
        request=PanelIn,
        responses={201: JudgeOut},
    )
    def post(self, request: Request) -> Response:
        given = judge_body(request, ARGUMENTS, of="a panel")
        panel = panels.panel_create(
            team=request.user.team,
            members=given.pop("members", None),
            rule=given.pop("rule", None),
            **given,
        )
        return Response(JudgeOut(panel).data, status=status.HTTP_201_CREATED)


class PanelDetail(APIView):
    @extend_schema(summary="One panel of AI judges", responses=JudgeOut)
    def get(self, request: Request, panel_id: int) -> Response:
        return Response(JudgeOut(get_object_or_404(team_panels(request), id=panel_id)).data)

    @extend_schema(
        summary="Change a panel of AI judges",
        description="Only the fields given change; new members forget the fitted weights. "
        "400 naming the field as when adding one.",
        request=PanelIn(partial=True),
        responses=JudgeOut,
    )
    def patch(self, request: Request, panel_id: int) -> Response:
        panel = get_object_or_404(team_panels(request), id=panel_id)
        given = judge_body(request, ARGUMENTS, of="a panel")
        panel = panels.panel_update(
            panel=panel,
            members=given.pop("members", None),
            rule=given.pop("rule", None),
            **given,
        )
        return Response(JudgeOut(panel).data)
