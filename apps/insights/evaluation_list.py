"""The lead's list of the team's evaluations."""

from django.db.models import QuerySet

from apps.evaluations.models import Evaluation


def team_evaluations(*, team_id: int, include_archived: bool = False) -> QuerySet[Evaluation]:
    evaluations = Evaluation.objects.filter(team_id=team_id)
    if not include_archived:
        evaluations = evaluations.filter(archived=False)
    return evaluations.order_by("-pinned", "-created_at", "-id")
