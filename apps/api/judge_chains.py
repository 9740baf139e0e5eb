"""/api/v1/evaluations/{id}/judge-chain/ and .../steps/: an evaluation's chain of AI
judges (apps/judges/chains.py). A first judge grades every result; the results it is
unsure of (its confidence, or its panel's or samples' agreement, below the chain's
threshold), that a second opinion disputes, or that fall in the audit sample go on to a
stronger judge or to people (escalate_to null), whose grade becomes the result's value.

POST sets the chain up (and starts its first judge); GET reads its settings and what it
did: counts by status and reason, people asked and graded since, what it spent against
the next judge alone, and the first judge's agreement on the audited results, each
figure {value, low, high, n, reason} as the calibration report's. steps/ lists what it
did with each result. Everything is the token's team's: another team's evaluation, or
one without a chain, answers 404.
"""

from typing import Any

from django.db.models import QuerySet
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

from apps.judges import controls, gold_sets, selectors
from apps.judges.calibration_figures import JudgeFigures
from apps.judges.chains import ChainSummary, chain_summary
from apps.judges.models import ChainStep, EscalationReason, JudgeChain, StepStatus

from .evaluations import evaluation_of
from .figure_fields import FigureOut, FiniteFloatField
from .given import choice_param, json_object_body
from .pagination import Pages

REASONS = [why for why in EscalationReason.values if why]
# A judge's id, as the service reads one (more digits name no judge).
JUDGE_ID_MAX = 999_999_999
BUDGET_MAX = 10_000_000
MONEY = {"max_digits": 24, "decimal_places": 6}


# --- What is given --------------------------------------------------------------------


def _link(help_text: str, *, optional: bool = True) -> serializers.IntegerField:
    """A link of the chain: a judge's id (the service checks it is the team's)."""
    return serializers.IntegerField(
        required=not optional,
        allow_null=optional,
        min_value=1,
        max_value=JUDGE_ID_MAX,
        help_text=help_text,
    )


class ChainIn(serializers.Serializer):
    """Types and bounds, each problem naming its field; then the service checks the
    judges (the team's, each link another) and the evaluation (one grade per result)."""

    first = _link("the judge that grades every result", optional=False)
    second_opinion = _link(
        "a judge asked about the same results; where it gives another grade, the result goes on"
    )
    escalate_to = _link(
        "the judge a result goes on to; null or missing: people (the result goes back to "
        "the graders' queue)"
    )
    confidence_below = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="a result goes on when the first judge's confidence is below this; "
        "null: never for its confidence",
    )
    agreement_below = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="a result goes on when fewer than this share of the first judge's panel "
        "members or samples gave its grade (the first judge must be a panel or ask more "
        "than once); null: never for its agreement",
    )
    audit_percent = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=100,
        help_text="the share of results that go on whatever the judges said; 10 if missing",
    )
    escalation_budget = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=BUDGET_MAX,
        help_text="the most results that go on, for every reason together; null: no limit",
    )
    seed = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=gold_sets.SEED_MAX,
        help_text="of the audit sample; missing: a new one",
    )


CHAIN_FIELDS = tuple(ChainIn().fields)  # what a chain takes; any other field is refused


# --- What comes back ------------------------------------------------------------------


class AuditOut(serializers.Serializer):
    compared = serializers.IntegerField(help_text="audited results with a final grade")
    alpha = FigureOut(help_text="Krippendorff's alpha, the first judge against the final grade")
    exact = FigureOut(help_text="share of the first judge's grades that were the final one")
    within_one = FigureOut(help_text="share at most one grade from the final one")


class ChainSummaryOut(serializers.Serializer):
    results = serializers.IntegerField(help_text="the evaluation's results")
    looked_at = serializers.IntegerField(help_text="results the chain has decided about")
    by_status = serializers.SerializerMethodField()
    by_reason = serializers.SerializerMethodField()
    people_asked = serializers.IntegerField(help_text="results sent to people")
    people_graded = serializers.IntegerField(help_text="of those, graded by a person since")
    settled_without_people = serializers.IntegerField()
    spent = serializers.DecimalField(**MONEY, help_text="every link's judge together")
    next_judge_alone = serializers.DecimalField(
        **MONEY,
        allow_null=True,
        help_text="what the next judge would have cost on every result (its cost per "
        "result asked, times the results); null for people, or before it was asked",
    )
    audit = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "object",
            "description": "results looked at by what became of them: "
            + ", ".join(f"{value} ({label})" for value, label in StepStatus.choices),
            "additionalProperties": {"type": "integer"},
        }
    )
    def get_by_status(self, summary: ChainSummary) -> dict[str, int]:
        return {value: summary.by_status.get(value, 0) for value in StepStatus.values}

    @extend_schema_field(
        {
            "type": "object",
            "description": "results that went on, by why (within the budget or not): "
            + ", ".join(REASONS),
            "additionalProperties": {"type": "integer"},
        }
    )
    def get_by_reason(self, summary: ChainSummary) -> dict[str, int]:
        return {why: summary.by_reason.get(why, 0) for why in REASONS}

    @extend_schema_field(AuditOut(allow_null=True))
    def get_audit(self, summary: ChainSummary) -> dict[str, Any] | None:
        """The first judge against the final grade on the audited results; null until an
        audited result has one."""
        figures: JudgeFigures | None = summary.audit
        return AuditOut(figures).data if figures is not None else None


class ChainOut(serializers.Serializer):
    evaluation = serializers.IntegerField(source="evaluation_id")
    first = serializers.IntegerField(source="first_id")
    first_name = serializers.CharField(source="first.name")
    second_opinion = serializers.IntegerField(source="second_opinion_id", allow_null=True)
    second_opinion_name = serializers.CharField(source="second_opinion.name", allow_null=True)
    escalate_to = serializers.IntegerField(
        source="escalate_to_id", allow_null=True, help_text="null: people"
    )
    escalate_to_name = serializers.CharField(
        source="escalate_to.name", allow_null=True, help_text="null: people"
    )
    confidence_below = FiniteFloatField(allow_null=True)
    agreement_below = FiniteFloatField(allow_null=True)
    audit_percent = serializers.IntegerField()
    escalation_budget = serializers.IntegerField(allow_null=True)
    seed = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    summary = serializers.SerializerMethodField()

    @extend_schema_field(ChainSummaryOut)
    def get_summary(self, chain: JudgeChain) -> dict[str, Any]:
        """What the chain did, measured by the view (context "summary")."""
        return ChainSummaryOut(self.context["summary"]).data


class ChainStepOut(serializers.Serializer):
    slot = serializers.IntegerField(source="slot_id")
    keyword = serializers.CharField(source="slot.keyword.text")
    position = serializers.IntegerField(source="slot.snapshot_position")
    doc_id = serializers.CharField(source="slot.snapshot.doc_id")
    first_grade = serializers.IntegerField()
    first_reason = serializers.CharField()
    first_confidence = FiniteFloatField(allow_null=True)
    first_agreement = FiniteFloatField(
        allow_null=True,
        help_text="the share of the first judge's panel members or samples that gave its "
        "grade; null for a judge of one answer",
    )
    second_grade = serializers.IntegerField(allow_null=True)
    second_reason = serializers.CharField()
    why = serializers.ChoiceField(
        choices=EscalationReason.choices, help_text="why it went on; empty: it did not"
    )
    status = serializers.ChoiceField(choices=StepStatus.choices)
    next_grade = serializers.IntegerField(allow_null=True, help_text="the next judge's")
    next_reason = serializers.CharField()
    note = serializers.CharField()
    grade = serializers.IntegerField(
        source="slot.grade",
        allow_null=True,
        help_text="the result's value now: the last link's grade (a person's once given)",
    )


# --- Reading the chain ----------------------------------------------------------------


def _chain_of(request: Request, evaluation_id: int) -> JudgeChain:
    evaluation = evaluation_of(request, evaluation_id)
    return get_object_or_404(selectors.chains_with_links(), evaluation=evaluation)


def _chain_answer(chain: JudgeChain, code: int = status.HTTP_200_OK) -> Response:
    """The chain with what it did (measured here, once: the audit's intervals)."""
    return Response(ChainOut(chain, context={"summary": chain_summary(chain)}).data, status=code)


# --- Views ----------------------------------------------------------------------------


class ChainDetail(APIView):
    @extend_schema(
        summary="The evaluation's chain of judges: its links and what it did",
        responses=ChainOut,
    )
    def get(self, request: Request, evaluation_id: int) -> Response:
        return _chain_answer(_chain_of(request, evaluation_id))

    @extend_schema(
        summary="Set up the evaluation's chain and start its first judge",
        request=ChainIn,
        responses={201: ChainOut},
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        evaluation = evaluation_of(request, evaluation_id)
        checked = ChainIn(data=json_object_body(request, fields=CHAIN_FIELDS, of="a chain"))
        checked.is_valid(raise_exception=True)
        controls.chain_start(evaluation=evaluation, **checked.validated_data)
        return _chain_answer(_chain_of(request, evaluation_id), status.HTTP_201_CREATED)


@extend_schema_view(
    get=extend_schema(
        summary="What the chain did with each result it looked at, in the keywords' order",
        parameters=[
            OpenApiParameter("status", str, enum=StepStatus.values),
            OpenApiParameter("why", str, enum=REASONS, description="why it went on"),
        ],
    )
)
class ChainSteps(generics.ListAPIView):
    serializer_class = ChainStepOut
    pagination_class = Pages

    def get_queryset(self) -> QuerySet[ChainStep]:
        chain = _chain_of(self.request, self.kwargs["evaluation_id"])
        return selectors.chain_steps(
            chain,
            status=choice_param(self.request, "status", StepStatus.values),
            why=choice_param(self.request, "why", REASONS),
        )
