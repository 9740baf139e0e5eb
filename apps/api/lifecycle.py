"""/api/v1/evaluations/{id}: edit (PATCH), clone, archive, pin and the team baseline."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.services import tags_get_or_create
from apps.evaluations.models import Profile, Reuse, Scale
from apps.lifecycle import steps
from apps.lifecycle.editing import evaluation_update

from .evaluations import (
    EvaluationDetail,
    EvaluationOut,
    MetricIn,
    answer,
    evaluation_of,
    team_search_model,
)


class EvaluationChangeIn(serializers.Serializer):
    """Every field optional: only those sent change."""

    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    scale = serializers.ChoiceField(choices=Scale.choices, required=False)
    scale_levels = serializers.JSONField(required=False, allow_null=True)
    strategy = serializers.ChoiceField(choices=[1, 3], required=False)
    profile = serializers.ChoiceField(choices=Profile.choices, required=False)
    show_position = serializers.BooleanField(required=False)
    scoring_guidelines = serializers.CharField(required=False, allow_blank=True)
    reuse = serializers.ChoiceField(choices=Reuse.choices, required=False)
    auto_restart = serializers.BooleanField(required=False)
    zero_without_results = serializers.BooleanField(required=False)
    transformers = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()), required=False
    )
    tags = serializers.ListField(child=serializers.CharField(max_length=60), required=False)
    model = serializers.IntegerField(required=False, allow_null=True)
    metrics = MetricIn(many=True, allow_empty=False, required=False)


class EvaluationEdit(EvaluationDetail):
    @extend_schema(
        summary="Edit a pending evaluation",
        description="Scale, strategy, profile, transformers, reuse and model lock once the "
        "evaluation has started (409 while active or starting; 400 naming a locked field).",
        request=EvaluationChangeIn,
        responses=EvaluationOut,
    )
    def patch(self, request: Request, evaluation_id: int) -> Response:
        evaluation = evaluation_of(request, evaluation_id)
        data = EvaluationChangeIn(data=request.data)
        data.is_valid(raise_exception=True)
        changes: dict[str, Any] = dict(data.validated_data)
        team = request.user.team
        if "model" in changes:
            changes["search_model"] = team_search_model(team, changes.pop("model"))
        if "metrics" in changes:
            changes["metrics"] = [(m["metric"], m["k"]) for m in changes["metrics"]]
        if "tags" in changes:
            changes["tags"] = tags_get_or_create(team=team, names=changes["tags"])
        evaluation_update(evaluation=evaluation, **changes)
        return answer(request, evaluation_id)


class CloneIn(serializers.Serializer):
    name = serializers.CharField(
        max_length=200, required=False, help_text="default: the name's trailing number + 1"
    )


class EvaluationClone(APIView):
    @extend_schema(
        summary="Copy an evaluation (settings, keywords; results unless it has a model)",
        request=CloneIn,
        responses={201: EvaluationOut},
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        data = CloneIn(data=request.data)
        data.is_valid(raise_exception=True)
        copy = steps.evaluation_clone(
            evaluation=evaluation_of(request, evaluation_id), name=data.validated_data.get("name")
        )
        return answer(request, copy.id, status.HTTP_201_CREATED)


def _flag_view(summary_on: str, summary_off: str, change: Any) -> type[APIView]:
    """POST sets a flag, DELETE clears it; both answer the evaluation."""

    class FlagView(APIView):
        @extend_schema(summary=summary_on, request=None, responses=EvaluationOut)
        def post(self, request: Request, evaluation_id: int) -> Response:
            change(request, evaluation_of(request, evaluation_id), True)
            return answer(request, evaluation_id)

        @extend_schema(summary=summary_off, request=None, responses=EvaluationOut)
        def delete(self, request: Request, evaluation_id: int) -> Response:
            change(request, evaluation_of(request, evaluation_id), False)
            return answer(request, evaluation_id)

    return FlagView


def _baseline(request: Request, evaluation: Any, on: bool) -> None:
    team = request.user.team
    if on:
        steps.team_set_baseline(team=team, evaluation=evaluation)
    elif team.baseline_evaluation_id == evaluation.id:
        steps.team_set_baseline(team=team, evaluation=None)


EvaluationArchive = _flag_view(
    "Archive an evaluation (refused while active or starting)",
    "Bring an archived evaluation back",
    lambda request, evaluation, on: steps.evaluation_archive(evaluation=evaluation, archived=on),
)
EvaluationPin = _flag_view(
    "Pin an evaluation to the team's dashboard",
    "Unpin an evaluation",
    lambda request, evaluation, on: steps.evaluation_pin(evaluation=evaluation, pinned=on),
)
EvaluationBaseline = _flag_view(
    "Make a finished evaluation the team's baseline",
    "Stop using this evaluation as the team's baseline",
    _baseline,
)
