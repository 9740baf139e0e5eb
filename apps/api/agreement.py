"""/api/v1/evaluations/{id}/agreement/: how far the graders agree, and what is left to settle."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.insights.agreement import readings
from apps.insights.agreement.selectors import evaluation_agreement
from apps.stats.agreement import Statistic

from .evaluations import evaluation_of


class StatisticOut(serializers.Serializer):
    method = serializers.CharField(help_text='e.g. "Krippendorff\'s alpha (ordinal)"')
    value = serializers.FloatField(allow_null=True, help_text="null when not defined")
    items = serializers.IntegerField(help_text="results (snapshots) the value is computed over")
    reason = serializers.CharField(help_text="why the value is null; empty otherwise")
    band = serializers.CharField(
        allow_null=True, help_text="Landis & Koch (1977) band, a convention"
    )


class GraderAgreementOut(serializers.Serializer):
    grader = serializers.CharField(help_text="a member's email, or an imported grader's name")
    imported = serializers.BooleanField()
    graded = serializers.IntegerField()
    compared = serializers.IntegerField(
        help_text="grades on results where the other graders have a consensus"
    )
    agreeing = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True, help_text="agreeing / compared")
    mean_distance = serializers.FloatField(
        allow_null=True, help_text="mean |grade - consensus| on the native scale"
    )


class AgreementOut(serializers.Serializer):
    scale = serializers.CharField()
    ratings_per_item = serializers.IntegerField(help_text="the evaluation's strategy")
    items = serializers.IntegerField(help_text="results with at least one grade")
    graders = serializers.IntegerField()
    grades = serializers.IntegerField()
    kappa = StatisticOut(help_text="Fleiss' kappa over results with every slot graded")
    alpha = StatisticOut(
        help_text="Krippendorff's alpha: nominal for binary, ordinal for graded and detail"
    )
    observed_agreement = StatisticOut(help_text="share of equal pairs, not chance-corrected")
    per_grader = GraderAgreementOut(many=True)
    open_disagreements = serializers.IntegerField(
        help_text="binary ties or spreads of 2 or more grades that no lead has settled"
    )
    decisions = serializers.IntegerField(help_text="results a lead has settled")


def _statistic(statistic: Statistic, *, chance_corrected: bool = True) -> dict[str, Any]:
    return {
        "method": statistic.name,
        "value": statistic.value,
        "items": statistic.items,
        "reason": statistic.reason,
        # The bands are meant for chance-corrected values only.
        "band": readings.landis_koch_band(statistic.value) if chance_corrected else None,
    }


class EvaluationAgreement(APIView):
    """Agreement between the evaluation's graders and the count of open disagreements."""

    @extend_schema(responses=AgreementOut)
    def get(self, request: Request, evaluation_id: int) -> Response:
        agreement = evaluation_agreement(evaluation_of(request, evaluation_id))
        report = agreement.report
        body = {
            "scale": report.scale,
            "ratings_per_item": report.ratings_per_item,
            "items": report.items,
            "graders": report.graders,
            "grades": report.grades,
            "kappa": _statistic(report.kappa),
            "alpha": _statistic(report.alpha),
            "observed_agreement": _statistic(report.observed, chance_corrected=False),
            "per_grader": [
                {
                    "grader": row.name,
                    "imported": row.imported,
                    "graded": row.graded,
                    "compared": row.compared,
                    "agreeing": row.agreeing,
                    "agreement": row.agreement,
                    "mean_distance": row.mean_distance,
                }
                for row in agreement.graders
            ],
            "open_disagreements": agreement.open_disagreements,
            "decisions": agreement.decisions,
        }
        return Response(AgreementOut(body).data)
