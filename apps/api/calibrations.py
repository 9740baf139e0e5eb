"""/api/v1/gold-sets/, /api/v1/calibrations/ and /api/v1/judge-gate/: calibrating the
team's AI judges against people (apps/judges/calibration.py).

A gold set is drawn from a baseline evaluation people graded (and a candidate, to see
whether a judge would change a decision) and frozen; its answer carries the report:
people's ceiling and every calibration on it side by side, each figure with its 95%
bootstrap interval over keywords. A calibration is one judge grading the gold set; it
runs in a worker, and its progress, failures (retried on request) and call log (JSON
Lines) are read as a judge run's are. The judge gate is the team's minimum agreement
before a judge grades live evaluations.

Figures are plain JSON numbers; one that is not defined is null, with `reason` saying
why. Everything is the token's team's: another team's gold sets, calibrations and judges
answer 404.
"""

import math
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.core.typed import ID_MAX, parse_int
from apps.judges import controls, gold_sets
from apps.judges.calibration import (
    GoldReport,
    RunReport,
    calibration_cancel,
    gate_set,
    gold_report,
)
from apps.judges.call_log import calibration_log_lines
from apps.judges.models import (
    CalibrationGrade,
    CalibrationRun,
    CalibrationStatus,
    GoldItem,
    GoldSet,
    Judge,
    JudgeGate,
)

from .pagination import Pages

SAMPLES_DEFAULT = 1_000
SAMPLES_MAX = 2_000
GOLD_SET_FIELDS = ("name", "baseline", "candidate", "keywords", "seed")


# --- Reading what was given -----------------------------------------------------------


def json_object_body(request: Request, allowed: tuple[str, ...], what: str) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise InvalidInput(["body: must be a JSON object"])
    unknown = sorted(str(name)[:100] for name in set(request.data) - set(allowed))
    if unknown:
        raise InvalidInput([f"{name}: not a field of {what}" for name in unknown])
    return dict(request.data)


def _whole_param(request: Request, name: str, *, high: int | None = None) -> int | None:
    """An optional whole-number query parameter (an id, or up to `high`)."""
    given = request.query_params.get(name)
    if given is None:
        return None
    number = parse_int(given, 0, ID_MAX if high is None else high)
    if number is None:
        bound = f"from 0 to {high:,}" if high is not None else "an id"
        raise InvalidInput([f"{name}: must be a whole number {bound}"])
    return number


# --- What comes back ------------------------------------------------------------------


class FiniteFloatField(serializers.FloatField):
    """A float as a plain JSON number; one that is not finite (never expected) as null."""

    def to_representation(self, value: Any) -> float | None:
        number = float(value)
        return number if math.isfinite(number) else None


class CalibrationOut(serializers.Serializer):
    id = serializers.IntegerField()
    gold_set = serializers.IntegerField(source="gold_set_id")
    gold_set_name = serializers.CharField(source="gold_set.name")
    judge = serializers.IntegerField(source="judge_id")
    judge_name = serializers.CharField(source="judge.name")
    model_name = serializers.CharField()
    prompt_version = serializers.CharField()
    status = serializers.ChoiceField(choices=CalibrationStatus.choices)
    note = serializers.CharField(help_text="why it stopped")
    items = serializers.IntegerField(source="item_count", help_text="results to grade")
    graded = serializers.IntegerField()
    from_cache = serializers.IntegerField(help_text="of graded: reused, no call paid for")
    failed = serializers.IntegerField(help_text="results it could not grade (see failures/)")
    progress = serializers.SerializerMethodField()
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6)
    alpha = FiniteFloatField(
        allow_null=True, help_text="Krippendorff's alpha once finished: what the gate reads"
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_progress(self, run: CalibrationRun) -> float:
        """(graded + failed) / items, from 0 to 1."""
        total = run.item_count  # type: ignore[attr-defined]
        return min(1.0, (run.graded + run.failed) / total) if total else 1.0


class FigureOut(serializers.Serializer):
    value = FiniteFloatField(allow_null=True, help_text="null when not defined: see reason")
    low = FiniteFloatField(
        allow_null=True,
        help_text="the 95% bootstrap interval over keywords; null with samples=0, while "
        "the calibration runs, or when fewer than half the resamples define the figure",
    )
    high = FiniteFloatField(allow_null=True)
    n = serializers.IntegerField(help_text="results (keywords, for ranking_tau) it rests on")
    reason = serializers.CharField(help_text="why value is null; empty otherwise")


class CeilingOut(serializers.Serializer):
    alpha = FigureOut(help_text="Krippendorff's alpha among people's own grades")
    agreement = FigureOut(help_text="the share of agreeing pairs among people's grades")


class DecisionOut(serializers.Serializer):
    metric = serializers.CharField(help_text='e.g. "ndcg@10"')
    people = serializers.CharField(
        help_text='candidate against baseline with people\'s grades: "better", "worse", '
        '"no significant difference" or "no keyword to compare"'
    )
    judge = serializers.CharField(help_text="the same verdict with the judge's grades")
    people_difference = FiniteFloatField(allow_null=True, help_text="mean candidate - baseline")
    judge_difference = FiniteFloatField(allow_null=True)
    same = serializers.BooleanField(help_text="the judge reaches people's verdict")


class ConfusionOut(serializers.Serializer):
    grades = serializers.ListField(child=serializers.IntegerField(), help_text="the scale's")
    labels = serializers.ListField(child=serializers.CharField(), help_text="of the grades")
    matrix = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="rows: people's consensus (its nearest grade); columns: the judge's grade",
    )


class VerdictOut(serializers.Serializer):
    verdict = serializers.CharField(
        help_text="as_people, worse_than_people, chance (do not use), no_ceiling or undecided"
    )
    sentence = serializers.CharField(help_text="the verdict in one sentence, as the page says it")
    warns = serializers.BooleanField(help_text="the sentence advises against the judge")


class RunReportOut(serializers.Serializer):
    calibration = serializers.SerializerMethodField()
    verdict = serializers.SerializerMethodField(
        help_text="the calibration's verdict against people; null until it is over"
    )
    stale = serializers.CharField(
        help_text="why these figures no longer describe the judge (its model or prompt "
        "changed since); empty when they do"
    )
    compared = serializers.IntegerField(
        source="figures.compared", help_text="results with people's consensus and a grade"
    )
    alpha = FigureOut(
        source="figures.alpha",
        help_text="Krippendorff's alpha against people's consensus: ordinal, nominal on "
        "the binary scale",
    )
    exact = FigureOut(source="figures.exact", help_text="share of the same grade")
    within_one = FigureOut(
        source="figures.within_one", help_text="share at most one grade from the consensus"
    )
    ranking_tau = FigureOut(
        source="figures.ranking_tau",
        help_text="Kendall's tau-b between the keywords' nDCG@10 with people's and with "
        "the judge's grades",
    )
    confusion = serializers.SerializerMethodField()
    decisions = DecisionOut(
        source="figures.decisions", many=True, help_text="with a candidate: per metric"
    )
    changes_a_decision = serializers.BooleanField(source="figures.changes_a_decision")

    @extend_schema_field(CalibrationOut)
    def get_calibration(self, report: RunReport) -> dict[str, Any]:
        return CalibrationOut(self.context["calibrations"][report.run.id]).data

    @extend_schema_field(VerdictOut(allow_null=True))
    def get_verdict(self, report: RunReport) -> dict[str, Any] | None:
        verdict = report.verdict
        if verdict is None:
            return None
        return {
            "verdict": str(verdict.verdict),
            "sentence": verdict.sentence,
            "warns": verdict.warns,
        }

    @extend_schema_field(ConfusionOut)
    def get_confusion(self, report: RunReport) -> dict[str, Any]:
        scale = self.context["scale"]
        return {
            "grades": list(scale.grades),
            "labels": list(scale.labels),
            "matrix": report.figures.confusion,
        }


class GoldReportOut(serializers.Serializer):
    samples = serializers.SerializerMethodField(help_text="bootstrap resamples per interval")
    keywords = serializers.IntegerField()
    items = serializers.IntegerField()
    ceiling = CeilingOut(help_text="people's agreement with each other: the best to expect")
    calibrations = RunReportOut(
        source="runs", many=True, help_text="every calibration on the gold set, oldest first"
    )

    def get_samples(self, report: GoldReport) -> int:
        return int(self.context["samples"])


class GoldSetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    baseline = serializers.IntegerField(
        source="baseline_id", allow_null=True, help_text="null once that evaluation is deleted"
    )
    baseline_name = serializers.CharField()
    candidate = serializers.IntegerField(source="candidate_id", allow_null=True)
    candidate_name = serializers.CharField()
    scale = serializers.CharField()
    profile = serializers.CharField()
    metrics = serializers.SerializerMethodField()
    seed = serializers.IntegerField(help_text="the same seed draws the same sample")
    keywords = serializers.IntegerField(source="keyword_count")
    items = serializers.IntegerField(source="item_count", help_text="results people graded")
    calibrations = serializers.IntegerField(source="calibration_count")
    created_at = serializers.DateTimeField()

    def get_metrics(self, gold_set: GoldSet) -> list[str]:
        return [f"{name}@{k}" for name, k in gold_set.metrics]


class GoldSetDetailOut(GoldSetOut):
    report = serializers.SerializerMethodField()

    @extend_schema_field(GoldReportOut)
    def get_report(self, gold_set: GoldSet) -> dict[str, Any]:
        samples = self.context["samples"]
        report = gold_report(gold_set, samples=samples)
        runs = CalibrationRun.objects.filter(gold_set=gold_set)
        context = {
            "scale": report.scale,
            "samples": samples,
            "calibrations": {run.id: run for run in with_item_counts(runs)},
        }
        return GoldReportOut(report, context=context).data


class GoldSetIn(serializers.Serializer):
    """Types and bounds, each problem naming its field; then the service checks the
    evaluations (the team's, graded by people, of one scale)."""

    name = serializers.CharField(max_length=gold_sets.NAME_MAX)
    baseline = serializers.IntegerField(help_text="an evaluation of the team people graded")
    candidate = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="an evaluation of the same keywords on the same scale: the figures then "
        "say whether the judge would change a decision",
    )
    keywords = serializers.IntegerField(
        required=False,
        min_value=gold_sets.KEYWORDS_MIN,
        max_value=gold_sets.KEYWORDS_MAX,
        help_text=f"how many keywords to sample; {gold_sets.KEYWORDS_DEFAULT} if missing",
    )
    seed = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=gold_sets.SEED_MAX,
        help_text="of the random draw; missing: a new one",
    )


class GoldItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField()
    doc_id = serializers.CharField()
    title = serializers.CharField()
    people_grades = serializers.ListField(
        child=serializers.IntegerField(), help_text="a lead's decision alone when there is one"
    )
    baseline_position = serializers.IntegerField(allow_null=True)
    candidate_position = serializers.IntegerField(allow_null=True)
    judge = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "description": "with ?calibration=: its grade of the result (null: none yet)",
            "properties": {
                "grade": {"type": "integer", "nullable": True},
                "reason": {"type": "string"},
                "failure": {"type": "string", "description": "why there is no grade"},
                "cached": {"type": "boolean"},
            },
        }
    )
    def get_judge(self, item: GoldItem) -> dict[str, Any] | None:
        return self.context.get("grades", {}).get(item.id)


class CalibrationIn(serializers.Serializer):
    judge = serializers.IntegerField(help_text="a judge of the team")


class CalibrationFailureOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    keyword = serializers.CharField(source="item.keyword")
    doc_id = serializers.CharField(source="item.doc_id")
    title = serializers.CharField(source="item.title")
    reason = serializers.CharField(source="failure")


class JudgeGateOut(serializers.Serializer):
    min_alpha = FiniteFloatField(
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="the Krippendorff's alpha a judge must reach on a calibration with its "
        "current model and prompt before it grades evaluations; null: no requirement",
    )


# --- Querysets ------------------------------------------------------------------------


def _counted(related: QuerySet[Any], field: str, outer: str = "pk") -> Coalesce:
    """How many rows of `related` have `field` equal to the outer row's `outer`."""
    counted = (
        related.filter(**{field: OuterRef(outer)})
        .order_by()
        .values(field)
        .annotate(count=Count("id"))
        .values("count")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def team_gold_sets(request: Request) -> QuerySet[GoldSet]:
    return (
        GoldSet.objects.filter(team_id=request.user.team_id)
        .annotate(
            item_count=Count("items"),
            keyword_count=Count("items__keyword_index", distinct=True),
            calibration_count=_counted(CalibrationRun.objects.all(), "gold_set"),
        )
        .order_by("-created_at", "-id")
    )


def with_item_counts(runs: QuerySet[CalibrationRun]) -> QuerySet[CalibrationRun]:
    return runs.select_related("judge", "gold_set").annotate(
        item_count=_counted(GoldItem.objects.all(), "gold_set", outer="gold_set_id")
    )


def team_calibrations(request: Request) -> QuerySet[CalibrationRun]:
    runs = CalibrationRun.objects.filter(gold_set__team_id=request.user.team_id)
    return with_item_counts(runs).order_by("-created_at", "-id")


def _team_gold_set(request: Request, gold_set_id: int) -> GoldSet:
    return get_object_or_404(team_gold_sets(request), id=gold_set_id)


def _calibration_answer(
    request: Request, calibration_id: int, code: int = status.HTTP_200_OK
) -> Response:
    run = get_object_or_404(team_calibrations(request), id=calibration_id)
    return Response(CalibrationOut(run).data, status=code)


# --- Gold sets ------------------------------------------------------------------------


class GoldSetListCreate(generics.ListAPIView):
    serializer_class = GoldSetOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[GoldSet]:
        return team_gold_sets(self.request)

    @extend_schema(summary="The team's gold sets, newest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Draw a gold set: a seeded sample of the keywords people graded, frozen",
        request=GoldSetIn,
        responses={201: GoldSetOut},
    )
    def post(self, request: Request) -> Response:
        checked = GoldSetIn(data=json_object_body(request, GOLD_SET_FIELDS, "a gold set"))
        checked.is_valid(raise_exception=True)
        gold = gold_sets.gold_set_create(team=request.user.team, **checked.validated_data)
        return Response(
            GoldSetOut(_team_gold_set(request, gold.id)).data, status=status.HTTP_201_CREATED
        )


class GoldSetDetail(APIView):
    @extend_schema(
        summary="One gold set with its report: people's ceiling and every calibration "
        "on it, each figure with its interval",
        parameters=[
            OpenApiParameter(
                "samples",
                int,
                description=f"bootstrap resamples per interval, 0 to {SAMPLES_MAX:,} "
                f"(default {SAMPLES_DEFAULT:,}; 0: no intervals, fastest)",
            )
        ],
        responses=GoldSetDetailOut,
    )
    def get(self, request: Request, gold_set_id: int) -> Response:
        samples = _whole_param(request, "samples", high=SAMPLES_MAX)
        gold = _team_gold_set(request, gold_set_id)
        context = {"samples": SAMPLES_DEFAULT if samples is None else samples}
        return Response(GoldSetDetailOut(gold, context=context).data)

    @extend_schema(
        summary="Remove a gold set and its calibrations (the judges' live grades stay)",
        responses={204: None},
    )
    def delete(self, request: Request, gold_set_id: int) -> Response:
        gold_sets.gold_set_delete(gold_set=_team_gold_set(request, gold_set_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class GoldSetItems(generics.ListAPIView):
    serializer_class = GoldItemOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[GoldItem]:
        gold = _team_gold_set(self.request, self.kwargs["gold_set_id"])
        return GoldItem.objects.filter(gold_set=gold).order_by("keyword_index", "id")

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "grades": getattr(self, "grades", {})}

    @extend_schema(
        summary="The gold set's frozen results: people's grades and positions",
        parameters=[
            OpenApiParameter(
                "calibration", int, description="a calibration on it: each result's grade"
            )
        ],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run_id = _whole_param(request, "calibration")
        if run_id is not None:
            gold = _team_gold_set(request, kwargs["gold_set_id"])
            run = CalibrationRun.objects.filter(gold_set=gold, id=run_id).first()
            if run is None:
                raise InvalidInput([f"calibration: no calibration {run_id} on this gold set"])
            self.grades = {
                grade.item_id: {
                    "grade": grade.grade,
                    "reason": grade.reason,
                    "failure": grade.failure,
                    "cached": grade.cached,
                }
                for grade in CalibrationGrade.objects.filter(run=run)
            }
        return super().get(request, *args, **kwargs)


# --- Calibrations ---------------------------------------------------------------------


class CalibrationStart(APIView):
    @extend_schema(
        summary="Calibrate a judge on the gold set (in a worker)",
        request=CalibrationIn,
        responses={201: CalibrationOut},
    )
    def post(self, request: Request, gold_set_id: int) -> Response:
        gold = _team_gold_set(request, gold_set_id)
        given = json_object_body(request, ("judge",), "a calibration").get("judge")
        if type(given) is not int:
            raise InvalidInput(["judge: the id of a judge of the team"])
        judge = get_object_or_404(Judge, id=given, team_id=request.user.team_id)
        run = controls.calibration_start(gold_set=gold, judge=judge)
        return _calibration_answer(request, run.id, status.HTTP_201_CREATED)


class CalibrationList(generics.ListAPIView):
    serializer_class = CalibrationOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[CalibrationRun]:
        runs = team_calibrations(self.request)
        gold_set = _whole_param(self.request, "gold_set")
        judge = _whole_param(self.request, "judge")
        given_status = self.request.query_params.get("status")
        if given_status is not None and given_status not in CalibrationStatus.values:
            raise InvalidInput([f"status: one of {', '.join(CalibrationStatus.values)}"])
        if gold_set is not None:
            runs = runs.filter(gold_set_id=gold_set)
        if judge is not None:
            runs = runs.filter(judge_id=judge)
        if given_status is not None:
            runs = runs.filter(status=given_status)
        return runs

    @extend_schema(
        summary="The team's calibrations, newest first",
        parameters=[
            OpenApiParameter("gold_set", int, description="one gold set's calibrations"),
            OpenApiParameter("judge", int, description="one judge's calibrations"),
            OpenApiParameter("status", str, enum=CalibrationStatus.values),
        ],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class CalibrationDetail(APIView):
    @extend_schema(
        summary="One calibration: progress, calls, tokens, cost, alpha", responses=CalibrationOut
    )
    def get(self, request: Request, calibration_id: int) -> Response:
        return _calibration_answer(request, calibration_id)


def _retry(*, run: CalibrationRun) -> None:
    controls.calibration_retry(run=run)


class CalibrationControl(APIView):
    """POST .../cancel/, .../retry-failures/."""

    action = ""
    ACTIONS = {"cancel": calibration_cancel, "retry-failures": _retry}

    @extend_schema(
        summary="Cancel the calibration, or ask again about what it could not grade",
        request=None,
        responses=CalibrationOut,
    )
    def post(self, request: Request, calibration_id: int) -> Response:
        self.ACTIONS[self.action](
            run=get_object_or_404(team_calibrations(request), id=calibration_id)
        )
        return _calibration_answer(request, calibration_id)


class CalibrationFailures(generics.ListAPIView):
    serializer_class = CalibrationFailureOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[CalibrationGrade]:
        run = get_object_or_404(team_calibrations(self.request), id=self.kwargs["calibration_id"])
        return (
            CalibrationGrade.objects.filter(run=run, grade__isnull=True)
            .select_related("item")
            .order_by("item__keyword_index", "item_id")
        )

    @extend_schema(summary="The results the calibration could not grade, with why")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class CalibrationCallLog(APIView):
    @extend_schema(
        summary="The calibration's call log as JSON Lines",
        responses={(200, "application/x-ndjson"): str},
    )
    def get(self, request: Request, calibration_id: int) -> StreamingHttpResponse:
        run = get_object_or_404(team_calibrations(request), id=calibration_id)
        lines = calibration_log_lines(run)
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="calibration-{run.id}-calls.jsonl"'
        return response


# --- The team's gate ------------------------------------------------------------------


class JudgeGateDetail(APIView):
    @extend_schema(
        summary="The agreement a judge must reach before it grades", responses=JudgeGateOut
    )
    def get(self, request: Request) -> Response:
        gate = JudgeGate.objects.filter(team_id=request.user.team_id).first()
        return Response({"min_alpha": gate.min_alpha if gate else None})

    @extend_schema(
        summary="Set or clear (null) the team's gate", request=JudgeGateOut, responses=JudgeGateOut
    )
    def put(self, request: Request) -> Response:
        given = json_object_body(request, ("min_alpha",), "the judge gate")
        if "min_alpha" not in given:
            raise InvalidInput(["min_alpha: required: a number from 0 to 1, or null for none"])
        value = given["min_alpha"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InvalidInput(["min_alpha: a number from 0 to 1, or null for none"])
        gate = gate_set(team=request.user.team, min_alpha=value)
        return Response({"min_alpha": gate.min_alpha})

    @extend_schema(
        summary="Set or clear (null) the team's gate; without min_alpha, unchanged",
        request=JudgeGateOut(partial=True),
        responses=JudgeGateOut,
    )
    def patch(self, request: Request) -> Response:
        if isinstance(request.data, dict) and not request.data:
            return self.get(request)
        return self.put(request)
