"""/api/v1/tries/: try a change to a search model (docs/tries.md). POST makes a try and
answers 202 with its URL; GET on it gives its state, each query's list beside the
baseline's, the metrics from the team's judgement library with judged@k, and the verdict.
Header values the draft overrides are secrets: only their names come back."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from apps.api.input_errors import serializer_problems
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id
from apps.tries.models import Try
from apps.tries.query_sets import MAX_QUERIES
from apps.tries.report import MetricLine, QueryRow, Side, TryReport, try_report
from apps.tries.starting import DEFAULT_DEPTH, MAX_DEPTH, MAX_NOTES, TryRequest, try_start
from apps.tries.verdict import EXIT_CODES

LIST_LIMIT = 200  # the newest; older tries stay reachable by id
PAIRS_HELP = "[[name, value], ...] or {name: value}; a null value drops the model's"


class TryIn(serializers.Serializer):
    model = serializers.CharField(max_length=200, help_text="a search model: id or name")
    evaluation = serializers.IntegerField(
        required=False, min_value=1, max_value=2**63 - 1, help_text="run its keywords"
    )
    queries = serializers.ListField(
        child=serializers.CharField(max_length=500, trim_whitespace=False),
        required=False,
        max_length=MAX_QUERIES,
        help_text="or run these query texts",
    )
    query_set = serializers.CharField(
        required=False, max_length=200, help_text="or run a saved query set's (id or name)"
    )
    params = serializers.JSONField(required=False, help_text=PAIRS_HELP)
    headers = serializers.JSONField(required=False, help_text=PAIRS_HELP)
    body = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )
    knobs = serializers.JSONField(required=False, help_text='{"boost": 2} fills #boost#')
    baseline_evaluation = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    baseline_try = serializers.IntegerField(
        required=False, min_value=1, max_value=2**31 - 1, help_text="a try number of the model"
    )
    metrics = serializers.CharField(required=False, max_length=500, help_text="ndcg@10,p@5")
    depth = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DEPTH)
    notes = serializers.CharField(required=False, allow_blank=True, max_length=MAX_NOTES)


class TryCreatedOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    url = serializers.CharField(help_text="GET it until state is done")


class TryOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    model = serializers.CharField()
    state = serializers.CharField(help_text="queued, running, done or failed")
    queries_total = serializers.IntegerField()
    queries_done = serializers.IntegerField()
    verdict = serializers.CharField(
        help_text="better, worse, no change, no significant change, not enough judged or "
        "no baseline: the first metric's"
    )
    exit_code = serializers.IntegerField(help_text="as try_model exits: 0, 1 worse, 3 undecided")
    baseline = serializers.CharField()
    metrics = serializers.ListField(child=serializers.DictField())
    queries = serializers.ListField(child=serializers.DictField())


def _side_out(side: Side | None) -> list[dict[str, Any]] | None:
    if side is None:
        return None
    return [
        {
            "doc_id": r.doc_id,
            "name": r.name,
            "grade": r.grade,
            "judged_by": r.basis,
            "stale": r.stale,
            "other_rank": r.other_rank,
        }
        for r in side.results
    ]


def _query_out(row: QueryRow) -> dict[str, Any]:
    return {
        "query": row.text,
        "error": row.error,
        "results": _side_out(row.tried),
        "baseline_results": _side_out(row.baseline),
        "new": row.new,
        "dropped": row.dropped,
        "tau": row.tau,
        "rbo": row.rbo,
        "values": {f"{m}@{k}": v for (m, k), v in (row.tried.values if row.tried else {}).items()},
        "baseline_values": {
            f"{m}@{k}": v for (m, k), v in (row.baseline.values if row.baseline else {}).items()
        },
    }


def _metric_out(line: MetricLine) -> dict[str, Any]:
    paired = line.paired
    return {
        "metric": line.label,
        "value": line.tried_mean,
        "baseline": line.baseline_mean,
        "judged": line.judged_tried,
        "baseline_judged": line.judged_baseline,
        "difference": paired.difference if paired else None,
        "ci_low": paired.ci_low if paired else None,
        "ci_high": paired.ci_high if paired else None,
        "p_adjusted": paired.p_adjusted if paired else None,
        "compared": paired.compared if paired else 0,
        "verdict": str(line.verdict),
        "condensed": _metric_out(line.condensed) if line.condensed else None,
    }


def try_out(report: TryReport) -> dict[str, Any]:
    attempt = report.attempt
    draft = attempt.draft()
    return {
        "id": attempt.id,
        "number": attempt.number,
        "model": attempt.search_model.name,
        "state": attempt.state,
        "error": attempt.error,
        "queries_total": attempt.queries_total,
        "queries_done": attempt.queries_done,
        "notes": attempt.notes,
        "params": [list(pair) for pair in draft.params],
        "header_names": [name for name, _ in draft.headers],
        "body": draft.body,
        "knobs": draft.knobs,
        "baseline": report.baseline_label,
        "verdict": str(report.verdict),
        "exit_code": EXIT_CODES[report.verdict],
        "tau": report.tau_mean,
        "rbo": report.rbo_mean,
        "unjudged": report.unjudged,
        "baseline_unjudged": report.baseline_unjudged,
        "judged_by": report.bases,
        "metrics": [_metric_out(line) for line in report.metrics],
        "queries": [_query_out(row) for row in report.queries],
    }


class TrySummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    model = serializers.CharField()
    state = serializers.CharField()
    notes = serializers.CharField()
    created_at = serializers.DateTimeField()
    url = serializers.CharField()


class TryListCreate(APIView):
    @extend_schema(
        summary="The team's tries, newest first",
        parameters=[
            OpenApiParameter("model", OpenApiTypes.INT, description="only this model's"),
        ],
        responses=TrySummaryOut(many=True),
    )
    def get(self, request: Request) -> Response:
        tries = Try.objects.filter(team_id=request.user.team_id).select_related("search_model")
        model = request.query_params.get("model", "")
        if model:
            model_id = parse_id(model)
            if model_id is None:
                raise InvalidInput(["model: a search model's id"])
            tries = tries.filter(search_model_id=model_id)
        newest = tries.order_by("-created_at", "-id")[:LIST_LIMIT]
        return Response(
            [
                {
                    "id": attempt.id,
                    "number": attempt.number,
                    "model": attempt.search_model.name,
                    "state": attempt.state,
                    "notes": attempt.notes,
                    "created_at": attempt.created_at,
                    "url": reverse("api:try_detail", args=[attempt.id], request=request),
                }
                for attempt in newest
            ]
        )

    @extend_schema(
        summary="Try a change to a search model",
        description="Runs the model with the draft's overrides and knobs over a query set "
        "(an evaluation's keywords or a list) in the background and scores it from the "
        "team's judgement library against the baseline: the evaluation or try named, else "
        "the model's last evaluation, else its last try. Answers 202 with the try's URL.",
        request=TryIn,
        responses={202: TryCreatedOut},
    )
    def post(self, request: Request) -> Response:
        given = TryIn(data=request.data)
        if not given.is_valid():
            raise InvalidInput(serializer_problems(given.errors))
        data = given.validated_data
        asked = TryRequest(
            **{key: value for key, value in data.items() if key not in ("depth", "notes")},
            depth=data.get("depth", DEFAULT_DEPTH),
            notes=data.get("notes", ""),
        )
        attempt = try_start(team=request.user.team, user=None, asked=asked)  # a team token
        url = reverse("api:try_detail", args=[attempt.id], request=request)
        return Response(
            {"id": attempt.id, "number": attempt.number, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


class TryDetail(APIView):
    @extend_schema(
        summary="A try: its state, lists, metrics and verdict",
        parameters=[
            OpenApiParameter(
                "clicks",
                OpenApiTypes.BOOL,
                description="count click models' judgements where nobody else judged "
                "(left out by default)",
            )
        ],
        responses=TryOut,
    )
    def get(self, request: Request, try_id: int) -> Response:
        attempt = get_object_or_404(
            Try.objects.select_related("search_model", "baseline_try", "baseline_evaluation"),
            id=try_id,
            team_id=request.user.team_id,
        )
        with_clicks = request.query_params.get("clicks") in ("true", "1")
        return Response(try_out(try_report(attempt, with_clicks=with_clicks)))
