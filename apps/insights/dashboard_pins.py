"""The dashboard's pins: the team's pinned evaluations, and those with a pinned metric,
with those metrics' cards."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from apps.evaluations.models import Evaluation, EvaluationMetric

from .metric_cards import MetricCard, Reference, cards_of, references_for
from .metric_columns import keyword_counts


@dataclass(frozen=True)
class PinnedEvaluation:
    evaluation: Evaluation
    metrics: list[MetricCard]
    reference: Reference | None


def dashboard_pins(*, team_id: int, baseline_id: int | None) -> list[PinnedEvaluation]:
    """The team's pinned evaluations, and those with a pinned metric, with those metrics.

    A metric pinned on an evaluation that is not itself pinned still shows: the lead
    pinned it to see it here. Archived evaluations are left out. Five queries at most.
    """
    evaluations = list(
        Evaluation.objects.filter(team_id=team_id, archived=False)
        .filter(
            Q(pinned=True)
            | Exists(EvaluationMetric.objects.filter(evaluation_id=OuterRef("pk"), pinned=True))
        )
        .order_by("-pinned", "-created_at", "-id")
    )
    if not evaluations:
        return []
    ids = [e.id for e in evaluations]
    counts = keyword_counts(ids)
    references = references_for(evaluations, baseline_id=baseline_id)
    pinned: dict[int, list[EvaluationMetric]] = defaultdict(list)
    for metric in EvaluationMetric.objects.filter(evaluation_id__in=ids, pinned=True).order_by(
        "position", "id"
    ):
        pinned[metric.evaluation_id].append(metric)
    return [
        PinnedEvaluation(
            e,
            cards_of(
                pinned[e.id], many_keywords=counts.get(e.id, 0) > 1, reference=references[e.id]
            ),
            references[e.id],
        )
        for e in evaluations
    ]
