"""/api/v1/judges/{id}/runs/ and /api/v1/judge-runs/: a judge assigned to an evaluation,
its progress and spending, pause, resume, cancel, its failed results (retried on
request) and its call log as JSON Lines."""

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.core.typed import parse_id
from apps.evaluations.models import Evaluation
from apps.judges import controls
from apps.judges.call_log import call_log_lines
from apps.judges.models import BatchState, Judge, JudgeFailure, JudgeRun, RunStatus

from .pagination import Pages


class BatchOut(serializers.Serializer):
    at = serializers.CharField(source="provider_host", help_text="the host it was sent to")
    provider_batch_id = serializers.CharField()
    provider_status = serializers.CharField(help_text="as the provider last said")
    submitted_at = serializers.DateTimeField(allow_null=True)
    requests = serializers.IntegerField(help_text="calls in it")


class JudgeRunOut(serializers.Serializer):
    id = serializers.IntegerField()
    judge = serializers.IntegerField(source="judge_id")
    judge_name = serializers.CharField(source="judge.name")
    evaluation = serializers.IntegerField(source="evaluation_id")
    status = serializers.ChoiceField(choices=RunStatus.choices)
    note = serializers.CharField(help_text="why it paused or stopped by itself")
    prompt_version = serializers.CharField()
    slots_per_result = serializers.IntegerField(
        help_text="how many of each result's slots AI judges fill while it grades: 1 "
        "leaves the rest to people, the evaluation's grades per result is AI only"
    )
    urgent = serializers.BooleanField(
        help_text="false: not urgent, its calls go through the provider's batch interface "
        "at half the price, results within 24 h"
    )
    batches_out = serializers.SerializerMethodField()
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6)
    graded = serializers.IntegerField()
    from_cache = serializers.IntegerField(help_text="of graded: reused, no call paid for")
    failed = serializers.IntegerField()
    failures_open = serializers.SerializerMethodField()
    wait_until = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_failures_open(self, run: JudgeRun) -> int:
        return JudgeFailure.objects.filter(run=run, open=True).count()

    @extend_schema_field(BatchOut(many=True))
    def get_batches_out(self, run: JudgeRun) -> list[dict[str, object]]:
        """A not-urgent run's batches at the provider (empty once applied)."""
        batches = run.batches.filter(state=BatchState.OUT).select_related("run__judge")
        return list(BatchOut(batches, many=True).data)


class JudgeRunIn(serializers.Serializer):
    evaluation = serializers.IntegerField(help_text="an evaluation of the team")
    slots_per_result = serializers.IntegerField(
        required=False,
        default=1,
        help_text="how many of each result's slots AI judges fill: 1 (default) leaves the "
        "rest to people; the evaluation's grades per result (strategy) is AI only. 400 "
        "outside 1 to the strategy",
    )
    urgent = serializers.BooleanField(
        required=False,
        default=True,
        help_text="false: not urgent, its calls go through the provider's batch interface "
        "(OpenAI's Batch API, Anthropic's Message Batches) at half the price, results "
        "within 24 h. 400 unless true or false",
    )


class FailureOut(serializers.Serializer):
    slot = serializers.IntegerField(source="slot_id")
    keyword = serializers.CharField(source="slot.keyword.text")
    doc_id = serializers.CharField(source="slot.snapshot.doc_id")
    reason = serializers.CharField()
    failed_at = serializers.DateTimeField()


def team_runs(request: Request) -> QuerySet[JudgeRun]:
    return JudgeRun.objects.filter(judge__team_id=request.user.team_id).select_related("judge")


class JudgeRunStart(APIView):
    @extend_schema(
        summary="Assign the judge to an evaluation (or resume its run there)",
        request=JudgeRunIn,
        responses={201: JudgeRunOut},
    )
    def post(self, request: Request, judge_id: int) -> Response:
        judge = get_object_or_404(Judge, id=judge_id, team_id=request.user.team_id)
        given = request.data.get("evaluation") if isinstance(request.data, dict) else None
        if type(given) is not int:
            raise InvalidInput(["evaluation: the id of an evaluation of the team"])
        evaluation = get_object_or_404(Evaluation, id=given, team_id=request.user.team_id)
        share = request.data.get("slots_per_result", 1)
        urgent = request.data.get("urgent", True)
        run = controls.run_assign(
            judge=judge, evaluation=evaluation, slots_per_result=share, urgent=urgent
        )
        return Response(JudgeRunOut(run).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    get=extend_schema(
        summary="The team's judge runs",
        parameters=[OpenApiParameter("evaluation", int, description="one evaluation's runs")],
    )
)
class JudgeRunList(generics.ListAPIView):
    serializer_class = JudgeRunOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[JudgeRun]:
        runs = team_runs(self.request)
        evaluation = self.request.query_params.get("evaluation")
        if evaluation is not None:
            evaluation_id = parse_id(evaluation)
            if evaluation_id is None:
                raise InvalidInput(["evaluation: must be an evaluation's id"])
            runs = runs.filter(evaluation_id=evaluation_id)
        return runs


class JudgeRunDetail(APIView):
    @extend_schema(summary="One judge run: progress, calls, tokens, cost", responses=JudgeRunOut)
    def get(self, request: Request, run_id: int) -> Response:
        return Response(JudgeRunOut(get_object_or_404(team_runs(request), id=run_id)).data)


class JudgeRunControl(APIView):
    """POST .../pause/, .../resume/, .../cancel/, .../retry-failures/."""

    action = ""
    ACTIONS = {
        "pause": controls.run_pause,
        "resume": controls.run_resume,
        "cancel": controls.run_cancel,
        "retry-failures": controls.failures_retry,
    }

    @extend_schema(
        summary="Pause, resume or cancel the run, or retry its failed results",
        request=None,
        responses=JudgeRunOut,
    )
    def post(self, request: Request, run_id: int) -> Response:
        run = get_object_or_404(team_runs(request), id=run_id)
        self.ACTIONS[self.action](run=run)
        if self.action == "retry-failures":
            controls.run_resume(run=run, retrying=True)
        run.refresh_from_db()
        return Response(JudgeRunOut(run).data)


@extend_schema_view(get=extend_schema(summary="The results the judge could not grade, with why"))
class JudgeRunFailures(generics.ListAPIView):
    serializer_class = FailureOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[JudgeFailure]:
        run = get_object_or_404(team_runs(self.request), id=self.kwargs["run_id"])
        return JudgeFailure.objects.filter(run=run, open=True).select_related(
            "slot__keyword", "slot__snapshot"
        )


class JudgeRunCallLog(APIView):
    @extend_schema(
        summary="The run's call log as JSON Lines", responses={(200, "application/x-ndjson"): str}
    )
    def get(self, request: Request, run_id: int) -> StreamingHttpResponse:
        run = get_object_or_404(team_runs(request).select_related("evaluation"), id=run_id)
        response = StreamingHttpResponse(call_log_lines(run), content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="judge-run-{run.id}-calls.jsonl"'
        return response
