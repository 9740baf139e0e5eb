"""Builders shared by the tests of the lead's pages."""

from datetime import datetime

from apps.accounts.models import Team
from apps.endpoints.models import SearchEndpoint, SearchModel
from apps.evaluations.models import Evaluation, EvaluationMetric, Status

HTMX = {"HX-Request": "true"}


def make_model(team: Team, name: str = "Catalogue search") -> SearchModel:
    """A search model; these pages only read it, so its endpoint is never called."""
    endpoint = SearchEndpoint.objects.create(
        team=team, name=f"{name} endpoint", url="https://search.example/api"
    )
    return SearchModel.objects.create(team=team, endpoint=endpoint, name=name)


def set_metric_values(evaluation: Evaluation, values: dict[str, float | None]) -> None:
    """Give the evaluation's metrics these means, keyed as "ndcg@10"."""
    for key, value in values.items():
        metric, k = key.split("@")
        EvaluationMetric.objects.filter(evaluation=evaluation, metric=metric, k=int(k)).update(
            value=value
        )


def finish(
    evaluation: Evaluation,
    at: datetime,
    *,
    model: SearchModel | None = None,
    values: dict[str, float | None] | None = None,
) -> Evaluation:
    """Mark the evaluation finished at a chosen moment, with these metric values."""
    Evaluation.objects.filter(id=evaluation.id).update(
        status=Status.FINISHED, finished_at=at, search_model=model
    )
    set_metric_values(evaluation, values or {})
    evaluation.refresh_from_db()
    return evaluation


def text(response) -> str:
    return response.content.decode()


def grade_slots(evaluation: Evaluation, grades: dict[str, list[int]], grader: str = "imported"):
    """Record grades keyword by keyword (slots in order) and run the metrics pipeline,
    which a test inside one transaction would otherwise never see run."""
    from django.test import TestCase

    from apps.judging.judgements import Giver, slot_judge
    from tests.factories import slots_of

    with TestCase.captureOnCommitCallbacks(execute=True):
        for keyword, values in grades.items():
            for slot, grade in zip(slots_of(evaluation, keyword), values, strict=False):
                slot_judge(slot_id=slot.id, giver=Giver.recorded(None, grader), grade=grade)
