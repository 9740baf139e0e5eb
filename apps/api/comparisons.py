"""/api/v1/comparisons/: two or more of the team's evaluations over their common keywords."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.evaluations.metric_list import cutoff_out
from apps.insights.comparison.selectors import (
    MAX_EVALUATIONS,
    Comparison,
    PairComparison,
    comparison_build,
    parse_evaluation_ids,
    parse_metric_filter,
)

from .evaluations import JudgedByOut

TRUE = ("1", "true", "yes")
BOOLEAN = ("0", "false", "no", *TRUE)


class ComparedEvaluationOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    keywords = serializers.IntegerField(help_text="all its keywords, common or not")
    judged_by = JudgedByOut(help_text="whose grades its numbers rest on")


class MetricComparisonOut(serializers.Serializer):
    metric = serializers.CharField()
    k = serializers.IntegerField(allow_null=True, help_text="the cutoff; null: the whole list")
    label = serializers.CharField()
    keywords_compared = serializers.IntegerField(help_text="common keywords with both values")
    keywords_excluded = serializers.IntegerField(help_text="common keywords without one")
    baseline_mean = serializers.FloatField(allow_null=True)
    mean = serializers.FloatField(allow_null=True)
    difference = serializers.FloatField(allow_null=True, help_text="mean of (this - baseline)")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True, help_text="two-sided, sign-flip test")
    p_exact = serializers.BooleanField(help_text="every sign assignment enumerated")
    p_adjusted = serializers.FloatField(
        allow_null=True, help_text="p adjusted by Holm's method over the metrics compared"
    )
    significant = serializers.BooleanField(help_text="p_adjusted below the significance level")
    wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    losses = serializers.IntegerField()
    summary = serializers.CharField(help_text="the comparison in one sentence")
    baseline_judged = serializers.FloatField(
        allow_null=True,
        help_text="the baseline's judged@k over the common keywords: the mean share of each "
        "top k that has a judgement",
    )
    judged = serializers.FloatField(allow_null=True, help_text="this evaluation's judged@k")
    baseline_unjudged = serializers.IntegerField(help_text="unjudged results in its top k")
    unjudged = serializers.IntegerField(help_text="unjudged results in this one's top k")
    coverage_warning = serializers.CharField(
        help_text="why uneven coverage biases this metric's comparison; empty when even"
    )
    detectable_change = serializers.FloatField(
        allow_null=True,
        help_text="the smallest mean difference these keywords could have detected with 80 % "
        "power at p < 0.05, from the spread of their differences (for gm_ap, in log AP)",
    )


class RankCorrelationOut(serializers.Serializer):
    kendall_tau_mean = serializers.FloatField(allow_null=True)
    kendall_tau_keywords = serializers.IntegerField(help_text="keywords sharing >= 2 documents")
    rbo_mean = serializers.FloatField(allow_null=True)
    rbo_keywords = serializers.IntegerField()


class ComparedKeywordMetricOut(serializers.Serializer):
    metric = serializers.CharField()
    k = serializers.IntegerField(allow_null=True, help_text="the cutoff; null: the whole list")
    baseline = serializers.FloatField(allow_null=True)
    value = serializers.FloatField(allow_null=True)
    difference = serializers.FloatField(allow_null=True)


class KeywordComparisonOut(serializers.Serializer):
    keyword = serializers.CharField()
    metrics = ComparedKeywordMetricOut(many=True)
    kendall_tau = serializers.FloatField(allow_null=True)
    rbo = serializers.FloatField(allow_null=True)


class ComparisonPairOut(serializers.Serializer):
    evaluation = ComparedEvaluationOut()
    metrics = MetricComparisonOut(many=True)
    rank_correlation = RankCorrelationOut()
    keywords = KeywordComparisonOut(
        many=True, required=False, help_text="only with keywords=true; in the baseline's order"
    )


class ComparisonMethodOut(serializers.Serializer):
    bootstrap_samples = serializers.IntegerField()
    permutations = serializers.IntegerField()
    confidence = serializers.FloatField()
    significance = serializers.FloatField()
    seed = serializers.IntegerField()
    tie_tolerance = serializers.FloatField()
    rbo_persistence = serializers.FloatField()


class ComparisonOut(serializers.Serializer):
    baseline = ComparedEvaluationOut()
    common_keywords = serializers.IntegerField()
    sources_differ = serializers.BooleanField(
        help_text="the evaluations were judged by different sources (people, AI judges): a "
        "difference may be the judges', not the rankings'; ask people_only=true"
    )
    people_only = serializers.BooleanField(
        help_text="compared on the common keywords no AI judge or click model graded on any side"
    )
    people_keywords = serializers.IntegerField(
        help_text="common keywords no AI judge or click model graded on any side"
    )
    comparisons = ComparisonPairOut(
        many=True, help_text="each other evaluation against the baseline"
    )
    method = ComparisonMethodOut()


def _number(value: Any) -> float | None:
    value = float(value)
    return None if value != value else value  # NaN -> null


def _reference(comparison: Comparison, evaluation: Any) -> dict[str, Any]:
    return {
        "id": evaluation.id,
        "name": evaluation.name,
        "keywords": comparison.keyword_counts[evaluation.id],
        "judged_by": comparison.mixes[evaluation.id].as_json(),
    }


def _keywords(comparison: Comparison, pair: PairComparison) -> list[dict[str, Any]]:
    keys = [(m.metric, m.k) for m in pair.metrics]
    return [
        {
            "keyword": text,
            "metrics": [
                {
                    "metric": metric,
                    "k": cutoff_out(k),
                    "baseline": _number(a),
                    "value": _number(b),
                    "difference": _number(b - a),
                }
                for (metric, k), a, b in zip(
                    keys, pair.baseline_values[row], pair.candidate_values[row], strict=True
                )
            ],
            "kendall_tau": _number(pair.kendall_tau[row]),
            "rbo": _number(pair.rbo[row]),
        }
        for row, text in enumerate(comparison.keywords)
    ]


def _pair(comparison: Comparison, pair: PairComparison, with_keywords: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "evaluation": _reference(comparison, pair.candidate),
        "metrics": [
            {
                "metric": m.metric,
                "k": cutoff_out(m.k),
                "label": m.label,
                "keywords_compared": m.result.compared,
                "keywords_excluded": m.excluded,
                "baseline_mean": m.result.baseline_mean,
                "mean": m.result.candidate_mean,
                "difference": m.result.difference,
                "ci_low": m.result.ci_low,
                "ci_high": m.result.ci_high,
                "p_value": m.result.p_value,
                "p_exact": m.result.exact,
                "p_adjusted": m.result.p_adjusted,
                "significant": m.result.significant,
                "wins": m.result.wins,
                "ties": m.result.ties,
                "losses": m.result.losses,
                "summary": m.sentence,
                "baseline_judged": m.baseline_coverage.judged if m.baseline_coverage else None,
                "judged": m.candidate_coverage.judged if m.candidate_coverage else None,
                "baseline_unjudged": m.baseline_coverage.unjudged if m.baseline_coverage else 0,
                "unjudged": m.candidate_coverage.unjudged if m.candidate_coverage else 0,
                "coverage_warning": m.coverage_warning,
                "detectable_change": m.detectable,
            }
            for m in pair.metrics
        ],
        "rank_correlation": {
            "kendall_tau_mean": pair.kendall_tau_mean,
            "kendall_tau_keywords": pair.kendall_tau_count,
            "rbo_mean": pair.rbo_mean,
            "rbo_keywords": pair.rbo_count,
        },
    }
    if with_keywords:
        answer["keywords"] = _keywords(comparison, pair)
    return answer


class ComparisonView(APIView):
    @extend_schema(
        summary="Compare evaluations over their common keywords",
        description="The first evaluation is the baseline; every other one is compared "
        "with it on each metric both report: means over the keywords where both have a "
        "value, the mean difference with a 95% percentile bootstrap interval, a two-sided "
        "paired sign-flip randomisation test, wins/ties/losses per keyword, and the rank "
        "correlation (Kendall's tau, RBO) of the result lists. Seeded: the same data "
        "always gives the same numbers.",
        parameters=[
            OpenApiParameter(
                "evaluations",
                OpenApiTypes.STR,
                required=True,
                description=f"2 to {MAX_EVALUATIONS} evaluation ids separated by commas, "
                "the baseline first: 12,15",
            ),
            OpenApiParameter(
                "metric",
                OpenApiTypes.STR,
                description="only these metric@k, separated by commas: ndcg@10,precision@5",
            ),
            OpenApiParameter(
                "keywords",
                OpenApiTypes.BOOL,
                description="also list every common keyword's values and differences",
            ),
            OpenApiParameter(
                "people_only",
                OpenApiTypes.BOOL,
                description=(
                    "compare only the common keywords no AI judge or click model graded on any side"
                ),
            ),
        ],
        responses=ComparisonOut,
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        problems = [
            f"{name}: must not contain NUL (0x00) characters"
            for name in ("evaluations", "metric", "keywords")
            if "\x00" in params.get(name, "")
        ]
        with_keywords = params.get("keywords", "false").strip().lower()
        if with_keywords not in BOOLEAN:
            problems.append(f"keywords: {with_keywords[:40]!r} is not true or false")
        people_only = params.get("people_only", "false").strip().lower()
        if people_only not in BOOLEAN:
            problems.append(f"people_only: {people_only[:40]!r} is not true or false")
        if problems:
            raise InvalidInput(problems)
        listed = params.get("evaluations", "")
        ids = parse_evaluation_ids(listed.split(",") if listed.strip() else [], field="evaluations")
        metrics = parse_metric_filter(params.get("metric", ""), field="metric")
        comparison = comparison_build(
            team_id=request.user.team_id,
            evaluation_ids=ids,
            metrics=metrics,
            people_only=people_only in TRUE,
        )
        return Response(
            {
                "baseline": _reference(comparison, comparison.baseline),
                "common_keywords": len(comparison.keywords),
                "sources_differ": comparison.sources_differ,
                "people_only": comparison.people_only,
                "people_keywords": comparison.people_keywords,
                "comparisons": [
                    _pair(comparison, pair, with_keywords in TRUE) for pair in comparison.pairs
                ],
                "method": {
                    "bootstrap_samples": comparison.settings.samples,
                    "permutations": comparison.settings.permutations,
                    "confidence": comparison.settings.confidence,
                    "significance": comparison.settings.significance,
                    "seed": comparison.settings.seed,
                    "tie_tolerance": comparison.settings.tie_tolerance,
                    "rbo_persistence": comparison.settings.rbo_persistence,
                },
            }
        )
