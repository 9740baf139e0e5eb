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

These are the views: what they take and answer is calibration_serializers.py, what
they read apps/judges/calibration_selectors.py.
"""

from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.judges import calibration_selectors as selectors
from apps.judges import controls, gold_sets
from apps.judges.calibration import calibration_cancel, gate_set, gold_report
from apps.judges.call_log import calibration_log_lines
from apps.judges.list_calibration import list_calibration_make
from apps.judges.models import (
    CalibrationGrade,
    CalibrationRun,
    CalibrationStatus,
    GoldItem,
    GoldSet,
    Judge,
)
from apps.library.models import JudgementList

from .calibration_serializers import (
    CalibrationFailureOut,
    CalibrationIn,
    CalibrationOut,
    GoldItemOut,
    GoldSetDetailOut,
    GoldSetIn,
    GoldSetOut,
    JudgeGateOut,
)
from .given import choice_param, json_object_body, whole_param
from .pagination import Pages

SAMPLES_DEFAULT = 1_000
SAMPLES_MAX = 2_000
GOLD_SET_FIELDS = ("name", "baseline", "candidate", "keywords", "seed")


def _team_gold_set(request: Request, gold_set_id: int) -> GoldSet:
    return get_object_or_404(selectors.team_gold_sets(request.user.team_id), id=gold_set_id)


def _team_calibration(request: Request, calibration_id: int) -> CalibrationRun:
    return get_object_or_404(selectors.team_calibrations(request.user.team_id), id=calibration_id)


def _calibration_answer(
    request: Request, calibration_id: int, code: int = status.HTTP_200_OK
) -> Response:
    return Response(CalibrationOut(_team_calibration(request, calibration_id)).data, status=code)


# --- Gold sets ------------------------------------------------------------------------


@extend_schema_view(get=extend_schema(summary="The team's gold sets, newest first"))
class GoldSetListCreate(generics.ListAPIView):
    serializer_class = GoldSetOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[GoldSet]:
        return selectors.team_gold_sets(self.request.user.team_id)

    @extend_schema(
        summary="Draw a gold set: a seeded sample of the keywords people graded, frozen",
        request=GoldSetIn,
        responses={201: GoldSetOut},
    )
    def post(self, request: Request) -> Response:
        checked = GoldSetIn(data=json_object_body(request, fields=GOLD_SET_FIELDS, of="a gold set"))
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
        samples = whole_param(request, "samples", high=SAMPLES_MAX)
        gold = _team_gold_set(request, gold_set_id)
        samples = SAMPLES_DEFAULT if samples is None else samples
        # The bootstrap intervals are measured here, once; the serializer only writes them.
        context = {
            "report": gold_report(gold, samples=samples),
            "samples": samples,
            "calibrations": selectors.gold_set_calibrations(gold),
        }
        return Response(GoldSetDetailOut(gold, context=context).data)

    @extend_schema(
        summary="Remove a gold set and its calibrations (the judges' live grades stay)",
        responses={204: None},
    )
    def delete(self, request: Request, gold_set_id: int) -> Response:
        gold_sets.gold_set_delete(gold_set=_team_gold_set(request, gold_set_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    get=extend_schema(
        summary="The gold set's frozen results: people's grades and positions",
        parameters=[
            OpenApiParameter(
                "calibration", int, description="a calibration on it: each result's grade"
            )
        ],
    )
)
class GoldSetItems(generics.ListAPIView):
    serializer_class = GoldItemOut
    pagination_class = Pages
    grades: dict[int, dict[str, Any]] = {}  # with ?calibration=: its grade of each item

    def get_queryset(self) -> QuerySet[GoldItem]:
        run_id = whole_param(self.request, "calibration")
        gold = _team_gold_set(self.request, self.kwargs["gold_set_id"])
        if run_id is not None:
            grades = selectors.calibration_grades(gold, run_id)
            if grades is None:
                raise InvalidInput([f"calibration: no calibration {run_id} on this gold set"])
            self.grades = grades
        return selectors.gold_items(gold)

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "grades": self.grades}


# --- Calibrations ---------------------------------------------------------------------


class CalibrationStart(APIView):
    @extend_schema(
        summary="Calibrate a judge on the gold set (in a worker), or a judgement list (at once)",
        description="`judge`: the judge grades the gold set in a worker; poll the answer's "
        "calibration. `judgement_list`: the library's list (a click model's judgements, say) "
        "is read against the gold set and the calibration is finished in the answer.",
        request=CalibrationIn,
        responses={201: CalibrationOut},
    )
    def post(self, request: Request, gold_set_id: int) -> Response:
        gold = _team_gold_set(request, gold_set_id)
        body = json_object_body(
            request, fields=("judge", "judgement_list", "with_images"), of="a calibration"
        )
        if "judgement_list" in body and "judge" in body:
            raise InvalidInput(["judgement_list: a judge or a judgement list, not both"])
        if "judgement_list" in body:
            listed = body["judgement_list"]
            if type(listed) is not int:
                raise InvalidInput(["judgement_list: the id of a list in the team's library"])
            judgement_list = get_object_or_404(
                JudgementList, id=listed, team_id=request.user.team_id
            )
            run = list_calibration_make(gold_set=gold, judgement_list=judgement_list)
            return _calibration_answer(request, run.id, status.HTTP_201_CREATED)
        given = body.get("judge")
        if type(given) is not int:
            raise InvalidInput(["judge: the id of a judge of the team (or judgement_list alone)"])
        with_images = body.get("with_images")
        if with_images is not None and not isinstance(with_images, bool):
            raise InvalidInput(["with_images: true, false, or left out for the judge's own"])
        judge = get_object_or_404(Judge, id=given, team_id=request.user.team_id)
        run = controls.calibration_start(gold_set=gold, judge=judge, with_images=with_images)
        return _calibration_answer(request, run.id, status.HTTP_201_CREATED)


@extend_schema_view(
    get=extend_schema(
        summary="The team's calibrations, newest first",
        parameters=[
            OpenApiParameter("gold_set", int, description="one gold set's calibrations"),
            OpenApiParameter("judge", int, description="one judge's calibrations"),
            OpenApiParameter("status", str, enum=CalibrationStatus.values),
        ],
    )
)
class CalibrationList(generics.ListAPIView):
    serializer_class = CalibrationOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[CalibrationRun]:
        return selectors.team_calibrations(
            self.request.user.team_id,
            gold_set=whole_param(self.request, "gold_set"),
            judge=whole_param(self.request, "judge"),
            status=choice_param(self.request, "status", CalibrationStatus.values),
        )


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
        self.ACTIONS[self.action](run=_team_calibration(request, calibration_id))
        return _calibration_answer(request, calibration_id)


@extend_schema_view(
    get=extend_schema(summary="The results the calibration could not grade, with why")
)
class CalibrationFailures(generics.ListAPIView):
    serializer_class = CalibrationFailureOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[CalibrationGrade]:
        run = _team_calibration(self.request, self.kwargs["calibration_id"])
        return selectors.calibration_failures(run)


class CalibrationCallLog(APIView):
    @extend_schema(
        summary="The calibration's call log as JSON Lines",
        responses={(200, "application/x-ndjson"): str},
    )
    def get(self, request: Request, calibration_id: int) -> StreamingHttpResponse:
        run = _team_calibration(request, calibration_id)
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
        return Response({"min_alpha": selectors.gate_min_alpha(request.user.team_id)})

    @extend_schema(
        summary="Set or clear (null) the team's gate", request=JudgeGateOut, responses=JudgeGateOut
    )
    def put(self, request: Request) -> Response:
        given = json_object_body(request, fields=("min_alpha",), of="the judge gate")
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
