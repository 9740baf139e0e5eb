"""Judgements from clicks over the API (docs/behaviour.md):
/api/v1/click-logs/{id}/judgements/ checks the settings and answers 202 with a job, in
which a worker fits a click model to the log and keeps its judgements in the library as
a list whose source is the clicks; /api/v1/click-judgement-jobs/{id}/ says where the job
stands; /api/v1/evaluations/{id}/click-grades/ grades an evaluation with such a list,
under the team's calibration rule."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from apps.behaviour.click_jobs import click_judgements_request
from apps.behaviour.click_judgements import SCALE_CHOICES
from apps.behaviour.fitting import ClickModel
from apps.behaviour.grading import evaluation_grade_with_clicks
from apps.behaviour.models import ClickJudgementJob, ClickJudgementSet, ClickLog, JobStatus
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation
from apps.library.models import JudgementList

from .given import json_object_body

FIELDS = ("model", "scale", "min_impressions", "thresholds", "name")


class ClickJudgementsIn(serializers.Serializer):
    model = serializers.ChoiceField(choices=ClickModel.choices)
    scale = serializers.ChoiceField(choices=SCALE_CHOICES)
    min_impressions = serializers.IntegerField(
        required=False, help_text="below this an estimate makes no judgement (default 10)"
    )
    thresholds = serializers.ListField(
        child=serializers.FloatField(),
        required=False,
        help_text="ascending, one per grade above the lowest; left out: fitted against "
        "people's grades on the pairs both have",
    )
    name = serializers.CharField(
        required=False, help_text='the list\'s name (default "clicks: PBM, <dates>")'
    )


class ClickJudgementsOut(serializers.Serializer):
    judgement_list = serializers.IntegerField(source="judgement_list_id")
    name = serializers.CharField(source="judgement_list.name")
    source = serializers.CharField(
        source="judgement_list.source.name", help_text="whose judgements: the clicks"
    )
    log = serializers.IntegerField(source="log_id", allow_null=True)
    log_name = serializers.CharField()
    model = serializers.ChoiceField(choices=ClickModel.choices)
    scale = serializers.CharField(source="judgement_list.scale")
    min_impressions = serializers.IntegerField()
    thresholds = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        help_text="null: a grade no estimate reached when they were fitted",
    )
    fitted_on = serializers.IntegerField(help_text="people's pairs they were fitted on; 0: set")
    fitted_agreement = serializers.FloatField(allow_null=True)
    estimated = serializers.IntegerField(help_text="pairs the model estimated")
    too_thin = serializers.IntegerField(help_text="of those, below min_impressions")
    judgements = serializers.IntegerField(source="judgement_list.judgement_count")
    created_at = serializers.DateTimeField()


class ClickJudgementJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    log = serializers.IntegerField(source="log_id")
    status = serializers.ChoiceField(
        choices=JobStatus.choices, help_text="queued, running, done or failed; GET until done"
    )
    problems = serializers.ListField(
        child=serializers.CharField(), help_text="why nothing was made, each naming its field"
    )
    settings = serializers.DictField(
        help_text="as checked: model, scale, min_impressions, thresholds (null: fitted), name"
    )
    judgement_set = ClickJudgementsOut(
        source="result", allow_null=True, help_text="the judgements made, once done"
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()

    def get_url(self, job: ClickJudgementJob) -> str:
        return reverse("api:click_judgement_job", args=[job.id], request=self.context["request"])


def job_answer(request: Request, job_id: int) -> dict[str, Any]:
    job = get_object_or_404(
        ClickJudgementJob.objects.select_related("result__judgement_list__source"),
        id=job_id,
        team_id=request.user.team_id,
    )
    return ClickJudgementJobOut(job, context={"request": request}).data


class ClickJudgementsListCreate(APIView):
    def _log(self, request: Request, log_id: int) -> ClickLog:
        return get_object_or_404(ClickLog, id=log_id, team_id=request.user.team_id)

    @extend_schema(
        summary="The judgements click models made from a behaviour log",
        responses=ClickJudgementsOut(many=True),
    )
    def get(self, request: Request, log_id: int) -> Response:
        made = ClickJudgementSet.objects.filter(log=self._log(request, log_id))
        made = made.select_related("judgement_list__source").order_by("-created_at", "-id")
        return Response(ClickJudgementsOut(made, many=True).data)

    @extend_schema(
        summary="Fit a click model to the log and keep its judgements in the library",
        description="The settings are checked at once (400 naming each field that is "
        "wrong); then a worker fits the model and stores the judgements, which takes a "
        "while on a big log. Answers 202 with the job: GET its `url` until `status` is "
        "done (with `judgement_set`) or failed (with `problems`).",
        request=ClickJudgementsIn,
        responses={202: ClickJudgementJobOut},
    )
    def post(self, request: Request, log_id: int) -> Response:
        log = self._log(request, log_id)
        body: dict[str, Any] = json_object_body(request, fields=FIELDS, of="click judgements")
        job = click_judgements_request(
            team=request.user.team,
            user=None,
            log=log,
            model=body.get("model"),
            scale=body.get("scale"),
            min_impressions=body.get("min_impressions", 10),
            thresholds=body.get("thresholds"),
            name=body.get("name"),
        )
        answer = job_answer(request, job.id)
        return Response(
            answer, status=status.HTTP_202_ACCEPTED, headers={"Location": answer["url"]}
        )


class ClickJudgementJobDetail(APIView):
    @extend_schema(
        summary="Where a job making judgements from clicks stands",
        responses=ClickJudgementJobOut,
    )
    def get(self, request: Request, job_id: int) -> Response:
        return Response(job_answer(request, job_id))


class ClickGradesIn(serializers.Serializer):
    judgement_list = serializers.IntegerField(help_text="a click model's list in the library")


class ClickGradesOut(serializers.Serializer):
    graded = serializers.IntegerField(help_text="results graded now")
    unknown = serializers.IntegerField(help_text="results the clicks have no grade for")
    taken = serializers.IntegerField(
        help_text="results graded by clicks before, or whose slots were all taken"
    )


class EvaluationClickGrades(APIView):
    @extend_schema(
        summary="Grade the evaluation's results with a click model's judgements",
        description="Each result the list knows gets one grade, in a slot nobody holds or "
        "graded, with the clicks as its source. Refused (409) while the team's calibration "
        "rule keeps the list out: calibrate it on a gold set first.",
        request=ClickGradesIn,
        responses={200: ClickGradesOut},
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        evaluation = get_object_or_404(Evaluation, id=evaluation_id, team_id=request.user.team_id)
        given = json_object_body(request, fields=("judgement_list",), of="click grades")
        listed = given.get("judgement_list")
        if type(listed) is not int:
            raise InvalidInput(["judgement_list: the id of a click model's list in the library"])
        judgement_list = get_object_or_404(JudgementList, id=listed, team_id=evaluation.team_id)
        done = evaluation_grade_with_clicks(
            evaluation=evaluation, judgement_list=judgement_list, user=None
        )
        return Response(ClickGradesOut(done).data)
