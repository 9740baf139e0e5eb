"""/api/v1/gate/runs/{id}/: a search model run now for the regression gate (POST
/api/v1/gate/ starts one). While the model's try runs, and while its candidate evaluation
is graded, the answer is undecided (exit_code 3); then it is the gate's verdict on the
candidate against the baseline, as GET /api/v1/gate/ gives it. A run that failed (the
model's endpoint could not be read) answers exit_code 2 with the reason."""

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.api.gate import GateOut, gate_answer
from apps.core.errors import InvalidInput
from apps.insights.comparison.selectors import parse_metric_filter
from apps.insights.gate import SAME_SOURCES, SOURCE_RULES, gate
from apps.schedules.gate_asking import candidate_run_of
from apps.schedules.models import RunState, ScheduledRun

UNDECIDED = 3
RUN_FAILED = 2  # as the command's usage problems: nothing to wait for


class GateRunOut(serializers.Serializer):
    run = serializers.IntegerField()
    state = serializers.ChoiceField(choices=RunState.choices)
    try_id = serializers.IntegerField(allow_null=True)
    queries_done = serializers.IntegerField(help_text="the model's queries run so far")
    queries_total = serializers.IntegerField()
    candidate = serializers.IntegerField(
        allow_null=True, help_text="the candidate evaluation, once the model has run"
    )
    candidate_name = serializers.CharField(allow_blank=True)
    exit_code = serializers.IntegerField(help_text="0 pass, 1 fail, 2 failed to run, 3 wait")
    reason = serializers.CharField()
    gate = GateOut(allow_null=True, help_text="the verdict, once there is a candidate")


class GateRunDetail(APIView):
    @extend_schema(
        summary="A model run now for the gate: its progress, then the verdict",
        parameters=[
            OpenApiParameter(
                "metric", OpenApiTypes.STR, description="only these metric@k: ndcg@10,p@5"
            ),
            OpenApiParameter("sources", OpenApiTypes.STR, enum=list(SOURCE_RULES)),
        ],
        responses=GateRunOut,
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = candidate_run_of(request.user.team, run_id)
        if run is None:
            raise Http404
        params = request.query_params
        for name in ("metric", "sources"):
            if "\x00" in params.get(name, ""):
                raise InvalidInput([f"{name}: must not contain NUL (0x00) characters"])
        sources = params.get("sources", SAME_SOURCES)
        if sources not in SOURCE_RULES:
            raise InvalidInput([f"sources: one of {', '.join(SOURCE_RULES)}"])
        metrics = parse_metric_filter(params.get("metric", ""), field="metric")
        return Response(_answer(run, metrics, sources))


def _answer(run: ScheduledRun, metrics: Any, sources: str) -> dict[str, Any]:
    attempt, candidate = run.attempt, run.evaluation
    answer: dict[str, Any] = {
        "run": run.id,
        "state": run.state,
        "try_id": run.attempt_id,
        "queries_done": attempt.queries_done if attempt else 0,
        "queries_total": attempt.queries_total if attempt else 0,
        "candidate": candidate.id if candidate else None,
        "candidate_name": candidate.name if candidate else "",
        "gate": None,
    }
    if run.state == RunState.FAILED:
        return {**answer, "exit_code": RUN_FAILED, "reason": run.note or "the run failed"}
    if candidate is None or run.baseline_id is None:
        done = f"{answer['queries_done']} of {answer['queries_total']} queries"
        reason = f"the model is running on the baseline's keywords: {done}"
        return {**answer, "exit_code": UNDECIDED, "reason": reason}
    verdict = gate_answer(
        gate(
            team_id=candidate.team_id,
            baseline_id=run.baseline_id,
            candidate_id=candidate.id,
            metrics=metrics,
            min_change=run.min_change,
            sources=sources,
        )
    )
    return {
        **answer,
        "exit_code": verdict["exit_code"],
        "reason": verdict["reason"],
        "gate": verdict,
    }
