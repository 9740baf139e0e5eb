"""/api/v1/evaluations/{id}/decisive-order/: order an evaluation's queue by what decides
its comparison with a rival, and read when judging can stop (apps/judging/decisive.py)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.judging.decisive import (
    decisive_order_clear,
    decisive_order_set,
    decisive_status,
)

from .evaluations import evaluation_of


class DecisiveOrderIn(serializers.Serializer):
    rival = serializers.IntegerField(help_text="another evaluation of the team")
    metric = serializers.CharField(max_length=40, help_text="one additive metric@k: dcg@10")
    min_change = serializers.FloatField(
        default=0.0, help_text="the smallest mean difference that matters, 0 to 1000"
    )


class DecisiveOrderOut(serializers.Serializer):
    on = serializers.BooleanField(help_text="whether the queue is in decision order")
    rival = serializers.IntegerField(allow_null=True)
    metric = serializers.CharField(allow_null=True, help_text="metric@k")
    min_change = serializers.FloatField(allow_null=True)
    decided = serializers.BooleanField(help_text="no remaining grade can change the verdict")
    verdict = serializers.ChoiceField(
        choices=["this evaluation ahead", "rival ahead", "no difference that matters"],
        allow_null=True,
        help_text="null while it can still change",
    )
    low = serializers.FloatField(allow_null=True, help_text="the lowest mean difference left")
    high = serializers.FloatField(allow_null=True, help_text="the highest mean difference left")
    keywords = serializers.IntegerField(help_text="common keywords")
    open_results = serializers.IntegerField(help_text="unjudged results that can still move it")
    remaining_grades = serializers.IntegerField()
    message = serializers.CharField()


class DecisiveOrderDetail(APIView):
    @extend_schema(
        summary="Where the comparison the queue is ordered by stands", responses=DecisiveOrderOut
    )
    def get(self, request: Request, evaluation_id: int) -> Response:
        return Response(_answer(evaluation_of(request, evaluation_id)))

    @extend_schema(
        summary="Order the queue by what decides the comparison with a rival",
        description="The unjudged results that can still change the verdict on the metric "
        "come first, for people and AI judges. 400 naming the field for a rival that is "
        "not another evaluation of the team, or a metric that is not additive (P@k under "
        "trec, num_rel_ret, RBP, CG, DCG).",
        request=DecisiveOrderIn,
        responses=DecisiveOrderOut,
    )
    def put(self, request: Request, evaluation_id: int) -> Response:
        evaluation = evaluation_of(request, evaluation_id)
        data = DecisiveOrderIn(data=request.data)
        data.is_valid(raise_exception=True)
        decisive_order_set(
            evaluation=evaluation,
            rival_id=data.validated_data["rival"],
            metric=data.validated_data["metric"],
            min_change=data.validated_data["min_change"],
            lead=None,
        )
        return Response(_answer(evaluation))

    @extend_schema(summary="Back to keyword order", responses={204: None})
    def delete(self, request: Request, evaluation_id: int) -> Response:
        decisive_order_clear(evaluation=evaluation_of(request, evaluation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _answer(evaluation: Any) -> dict[str, Any]:
    current = decisive_status(evaluation=evaluation)
    if current is None:
        return {
            "on": False,
            "rival": None,
            "metric": None,
            "min_change": None,
            "decided": False,
            "verdict": None,
            "low": None,
            "high": None,
            "keywords": 0,
            "open_results": 0,
            "remaining_grades": 0,
            "message": "The queue is in keyword order.",
        }
    now = current.standing
    return {
        "on": True,
        "rival": current.option.rival_id,
        "metric": current.metric_text,
        "min_change": current.option.min_change,
        "decided": now.verdict is not None,
        "verdict": None if now.verdict is None else now.verdict.value,
        "low": now.low,
        "high": now.high,
        "keywords": now.keywords,
        "open_results": now.open_results,
        "remaining_grades": current.remaining_grades,
        "message": current.sentence,
    }
