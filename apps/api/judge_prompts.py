"""/api/v1/judge-prompts: the team's own prompts for AI judges, and their versions.

A change of `instructions` makes a new version (an unchanged text makes none); the old
versions stay, because the judgements they made name them. A judge takes a prompt by
its id (`"prompt": 12` on /api/v1/judges/), or `null` for the scale's default prompt.
"""

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.judges import prompts
from apps.judges.models import JudgePrompt

from .given import json_object_body


class PromptVersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    version = serializers.CharField(help_text="what judgements record, e.g. prompt-12-v3")
    instructions = serializers.CharField()
    created_at = serializers.DateTimeField()


class PromptOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    versions = PromptVersionOut(many=True, source="versions.all", help_text="newest first")
    created_at = serializers.DateTimeField()


class PromptIn(serializers.Serializer):
    """For the schema: the service checks both fields and names each problem."""

    name = serializers.CharField(max_length=prompts.NAME_MAX)
    instructions = serializers.CharField(
        required=False,
        max_length=prompts.INSTRUCTIONS_MAX,
        help_text="the system message, with {scale} where the scale's meanings go; "
        "missing on creation: a copy of the default",
    )


def team_prompts(request: Request) -> QuerySet[JudgePrompt]:
    return JudgePrompt.objects.filter(team_id=request.user.team_id).prefetch_related("versions")


def _given(request: Request) -> dict[str, Any]:
    return json_object_body(request, fields=("name", "instructions"), of="a prompt")


class PromptListCreate(APIView):
    @extend_schema(summary="List the team's judge prompts", responses=PromptOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(PromptOut(team_prompts(request), many=True).data)

    @extend_schema(summary="Add a judge prompt", request=PromptIn, responses={201: PromptOut})
    def post(self, request: Request) -> Response:
        given = _given(request)
        prompt = prompts.prompt_create(
            team=request.user.team, name=given.get("name"), instructions=given.get("instructions")
        )
        return Response(PromptOut(prompt).data, status=status.HTTP_201_CREATED)


class PromptDetail(APIView):
    @extend_schema(summary="One judge prompt with its versions", responses=PromptOut)
    def get(self, request: Request, prompt_id: int) -> Response:
        return Response(PromptOut(get_object_or_404(team_prompts(request), id=prompt_id)).data)

    @extend_schema(
        summary="Rename a judge prompt or save new instructions (a new version)",
        request=PromptIn(partial=True),
        responses=PromptOut,
    )
    def patch(self, request: Request, prompt_id: int) -> Response:
        prompt = get_object_or_404(team_prompts(request), id=prompt_id)
        prompts.prompt_update(prompt=prompt, **_given(request))
        return Response(PromptOut(get_object_or_404(team_prompts(request), id=prompt_id)).data)

    @extend_schema(summary="Remove a judge prompt no judge has used", responses={204: None})
    def delete(self, request: Request, prompt_id: int) -> Response:
        prompts.prompt_delete(prompt=get_object_or_404(team_prompts(request), id=prompt_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
