"""/api/v1/judges/{id}/fit-weights/: fit a panel's weights on one of its finished
calibrations (apps/judges/panels.py). The members' grades of the gold items are weighed
against people's by least squares, each weight at least 0 and together 1, and the
panel's fitted rule uses them from then on.

Everything is the token's team's: another team's panel or calibration answers 404. A
judge that is not a panel, a calibration still running or another judge's, and too few
gold items with every member's grade answer 4xx naming the field.
"""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput, InvalidState, NotFound
from apps.core.typed import parse_id
from apps.judges.models import CalibrationRun, Judge
from apps.judges.panels import FIT_ITEMS_MIN, fitted_weights_shown, panel_fit_weights

from .figure_fields import FiniteFloatField
from .given import json_object_body


class FitWeightsIn(serializers.Serializer):
    calibration = serializers.IntegerField(
        help_text=f"a finished calibration of the panel, with at least {FIT_ITEMS_MIN} gold "
        "items every member graded"
    )


class MemberWeightOut(serializers.Serializer):
    judge = serializers.IntegerField(help_text="the member judge's id")
    name = serializers.CharField()
    weight = FiniteFloatField(help_text="from 0 to 1; the members' weights add up to 1")


class PanelFitOut(serializers.Serializer):
    judge = serializers.IntegerField(help_text="the panel's id")
    name = serializers.CharField()
    rule = serializers.CharField(help_text="the panel's rule: the fitted one uses the weights")
    weights = MemberWeightOut(many=True, help_text="in the members' order")
    calibration = serializers.IntegerField(help_text="the calibration they were fitted on")
    gold_set = serializers.IntegerField()
    items = serializers.IntegerField(help_text="gold items with every member's grade and people's")
    squared_error = FiniteFloatField(
        help_text="the mean squared difference between people's mean grade and the "
        "weighted grade, over those items"
    )
    fitted_at = serializers.DateTimeField()


def fit_answer(panel: Judge) -> dict[str, Any]:
    fit = panel.panel_fit or {}
    return {
        "judge": panel.id,
        "name": panel.name,
        "rule": panel.panel_rule,
        "weights": [
            {"judge": member.id, "name": member.name, "weight": weight}
            for member, weight in fitted_weights_shown(panel)
        ],
        "calibration": fit["calibration"],
        "gold_set": fit["gold_set"],
        "items": fit["items"],
        "squared_error": fit["squared_error"],
        "fitted_at": fit["fitted_at"],
    }


class PanelFitWeights(APIView):
    @extend_schema(
        summary="Fit a panel's weights on its finished calibration",
        description="The weights its fitted rule weighs the members' grades by: least squares "
        "against the mean of people's grades on the gold items, each weight at least 0 and "
        "together 1. Fitting again replaces them.",
        request=FitWeightsIn,
        responses=PanelFitOut,
    )
    def post(self, request: Request, judge_id: int) -> Response:
        panel = get_object_or_404(Judge, id=judge_id, team_id=request.user.team_id)
        body = json_object_body(request, fields=("calibration",), of="a fit of weights")
        calibration_id = parse_id(body.get("calibration"))
        if calibration_id is None:
            raise InvalidInput(["calibration: required: the id of a calibration of the panel"])
        if not panel.is_panel:
            raise InvalidState(f"{panel.name} is not a panel", field="judge")
        theirs = CalibrationRun.objects.filter(gold_set__team_id=request.user.team_id)
        if not theirs.filter(id=calibration_id).exists():
            raise NotFound(f"calibration: the team has no calibration {calibration_id}")
        fitted = panel_fit_weights(panel=panel, calibration=calibration_id)
        return Response(PanelFitOut(fit_answer(fitted)).data)
