"""/api/v1/gate/: the regression gate a CI job asks (apps/insights/gate.py)."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.insights.comparison.selectors import parse_evaluation_ids, parse_metric_filter
from apps.insights.gate import gate


class GateMetricOut(serializers.Serializer):
    label = serializers.CharField()
    baseline = serializers.FloatField(allow_null=True, help_text="the baseline's mean")
    candidate = serializers.FloatField(allow_null=True, help_text="the candidate's mean")
    difference = serializers.FloatField(allow_null=True, help_text="candidate - baseline")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    p_adjusted = serializers.FloatField(allow_null=True, help_text="Holm-adjusted p")
    regression = serializers.BooleanField(help_text="worse, significantly, by at least min_change")


class GateOut(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["pass", "fail", "undecided"])
    exit_code = serializers.IntegerField(help_text="0 pass, 1 fail, 3 undecided")
    baseline = serializers.CharField()
    candidate = serializers.CharField()
    min_change = serializers.FloatField()
    reason = serializers.CharField()
    report = serializers.CharField(help_text="the report relevance_gate prints")
    metrics = GateMetricOut(many=True)


class GateView(APIView):
    @extend_schema(
        summary="May a candidate ship? The regression gate",
        description="Compares the candidate with the baseline as Compare does and answers "
        "fail (exit_code 1) when it is worse on a metric, significantly (Holm-adjusted p < "
        "0.05) and by at least min_change; pass (0) otherwise; undecided (3) while either "
        "has results left to grade.",
        parameters=[
            OpenApiParameter("baseline", OpenApiTypes.INT, required=True),
            OpenApiParameter("candidate", OpenApiTypes.INT, required=True),
            OpenApiParameter(
                "metric", OpenApiTypes.STR, description="only these metric@k: ndcg@10,p@5"
            ),
            OpenApiParameter(
                "min_change",
                OpenApiTypes.NUMBER,
                description="the smallest drop that matters, 0 to 1000 (default 0)",
            ),
        ],
        responses=GateOut,
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        for name in ("baseline", "candidate", "metric", "min_change"):
            if "\x00" in params.get(name, ""):
                raise InvalidInput([f"{name}: must not contain NUL (0x00) characters"])
        baseline, candidate = parse_evaluation_ids(
            [params.get("baseline", ""), params.get("candidate", "")], field="baseline, candidate"
        )
        metrics = parse_metric_filter(params.get("metric", ""), field="metric")
        verdict = gate(
            team_id=request.user.team_id,
            baseline_id=baseline,
            candidate_id=candidate,
            metrics=metrics,
            min_change=_min_change(params.get("min_change", "0")),
        )
        answer: dict[str, Any] = {
            "outcome": verdict.outcome,
            "exit_code": verdict.exit_code,
            "baseline": verdict.baseline,
            "candidate": verdict.candidate,
            "min_change": verdict.min_change,
            "reason": verdict.reason,
            "report": verdict.report(),
            "metrics": [vars(metric) for metric in verdict.metrics],
        }
        return Response(answer)


def _min_change(text: str) -> float:
    try:
        value = float(text) if len(text) <= 40 else -1.0
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1000:
        raise InvalidInput([f"min_change: {text[:40]!r} is not a number from 0 to 1000"])
    return value
