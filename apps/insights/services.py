"""Writes of the lead's pages: pinning a metric to the dashboard, resetting a grade."""

from typing import Any

from django.db import transaction

from apps.core import live
from apps.core.errors import InvalidState
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Status
from apps.judging.judgements import Action, Giver, slot_judge


def metric_pin(*, evaluation_metric: EvaluationMetric, pinned: bool) -> EvaluationMetric:
    """Show (or stop showing) one metric of an evaluation on the lead's dashboard."""
    with transaction.atomic():
        EvaluationMetric.objects.filter(id=evaluation_metric.id).update(pinned=pinned)
        live.changed(team_id=evaluation_metric.evaluation.team_id)  # the dashboard's pins
    evaluation_metric.pinned = pinned
    return evaluation_metric


def slot_reset_by_lead(*, slot: FeedbackSlot, lead: Any, team_id: int) -> None:
    """A lead clears a slot's grade and grader so the queue offers it again; its keyword's
    metrics are recomputed. A finished evaluation's grades are final: nobody could grade
    the slot again, and its numbers are what other evaluations are compared against."""
    with transaction.atomic():
        # Locked, so the evaluation cannot finish between the check and the reset.
        status = (
            Evaluation.objects.select_for_update()
            .filter(id=slot.evaluation_id)
            .values_list("status", flat=True)
            .first()
        )
        if status == Status.FINISHED:
            raise InvalidState("the evaluation is finished: its grades can no longer be reset")
        slot_judge(
            slot_id=slot.id,
            giver=Giver.lead(lead),
            action=Action.CLEAR,
            team_id=team_id,
        )
