"""/api/v1/gate/: the regression gate a CI job asks (apps/insights/gate.py). GET answers
for a baseline and a candidate evaluation; POST runs a search model now on the
baseline's keywords (apps/schedules/candidates.py) and names the run to poll
(apps/api/gate_runs.py)."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from apps.api.input_errors import serializer_problems
from apps.core.errors import InvalidInput
from apps.insights.comparison.selectors import parse_evaluation_ids, parse_metric_filter
from apps.insights.gate import SAME_SOURCES, SOURCE_RULES, GateVerdict, gate
from apps.schedules.candidates import candidate_start
from apps.schedules.gate_asking import min_change_parse


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
    sources_differ = serializers.BooleanField(
        help_text="people graded one and AI judges the other (or other judges): undecided "
        "unless sources=people or sources=any"
    )
    baseline_judged_by = serializers.CharField(help_text="People, AI, Clicks or Mixed")
    candidate_judged_by = serializers.CharField(help_text="People, AI, Clicks or Mixed")
    baseline = serializers.CharField()
    candidate = serializers.CharField()
    min_change = serializers.FloatField()
    reason = serializers.CharField()
    report = serializers.CharField(help_text="the report relevance_gate prints")
    metrics = GateMetricOut(many=True)


class CandidateIn(serializers.Serializer):
    baseline = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, help_text="the baseline evaluation's id"
    )
    model = serializers.CharField(
        max_length=200, help_text="a search model of the team: its id or its name"
    )
    judge = serializers.CharField(
        required=False,
        max_length=200,
        help_text="an AI judge of the team to grade the run (id or name)",
    )
    min_change = serializers.FloatField(
        required=False, min_value=0, max_value=1000, help_text="0 to 1000 (default 0)"
    )


class CandidateOut(serializers.Serializer):
    run = serializers.IntegerField()
    try_id = serializers.IntegerField(help_text="the try the model runs as")
    try_url = serializers.CharField(help_text="the try: its progress and its lists")
    poll = serializers.CharField(help_text="the run: GET it until exit_code is not 3")


class GateView(APIView):
    @extend_schema(
        summary="May a candidate ship? The regression gate",
        description="Compares the candidate with the baseline as Compare does and answers "
        "fail (exit_code 1) when it is worse on a metric, significantly (Holm-adjusted p < "
        "0.05) and by at least min_change; pass (0) otherwise; undecided (3) while either "
        "has results left to grade, or when they were judged by different sources (people "
        "against an AI judge) and `sources` does not say how to compare them.",
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
            OpenApiParameter(
                "sources",
                OpenApiTypes.STR,
                enum=list(SOURCE_RULES),
                description="when the two were judged by different sources: same (default) "
                "answers undecided; people compares the keywords no AI judge or click model "
                "graded; any compares them as they are",
            ),
        ],
        responses=GateOut,
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        for name in ("baseline", "candidate", "metric", "min_change", "sources"):
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
            min_change=min_change_parse(params.get("min_change", "0")),
            sources=params.get("sources", SAME_SOURCES),
        )
        return Response(gate_answer(verdict))

    @extend_schema(
        summary="Run a search model now against a baseline, for the gate",
        description="Runs the baseline's keywords on the model as a try, then copies its "
        "results into a copy of the baseline's setup, reusing the grades still valid; the "
        "rest is graded by people or by `judge`. Answers 202 with the run: GET `poll` until "
        "its exit_code is not 3.",
        request=CandidateIn,
        responses={202: CandidateOut},
    )
    def post(self, request: Request) -> Response:
        given = CandidateIn(data=request.data)
        if not given.is_valid():
            raise InvalidInput(serializer_problems(given.errors))
        run = candidate_start(team=request.user.team, **given.validated_data)
        assert run.attempt_id is not None
        answer = {
            "run": run.id,
            "try_id": run.attempt_id,
            "try_url": reverse("api:try_detail", args=[run.attempt_id]),
            "poll": reverse("api:gate_run", args=[run.id]),
        }
        return Response(answer, status=status.HTTP_202_ACCEPTED)


def gate_answer(verdict: GateVerdict) -> dict[str, Any]:
    """The gate's verdict as the API answers it (GateOut)."""
    return {
        "outcome": verdict.outcome,
        "exit_code": verdict.exit_code,
        "sources_differ": verdict.sources_differ,
        "baseline_judged_by": verdict.baseline_judged_by,
        "candidate_judged_by": verdict.candidate_judged_by,
        "baseline": verdict.baseline,
        "candidate": verdict.candidate,
        "min_change": verdict.min_change,
        "reason": verdict.reason,
        "report": verdict.report(),
        "metrics": [vars(metric) for metric in verdict.metrics],
    }
