"""Opening a pending evaluation for grading: its reuse strategy fills what earlier
evaluations graded, then graders may claim its results. A start opens it at once, or
the keyword run does when it is done (fetching.py)."""

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.core import live
from apps.evaluations.models import Evaluation
from apps.evaluations.states import Event, move
from apps.judging.decisive import decisive_order_refresh

from .reuse import reuse_apply


def evaluation_open(*, evaluation: Evaluation, after_fetch: bool = False) -> None:
    """Open a pending evaluation for grading and apply its reuse strategy, in one
    transaction. `after_fetch`: the keyword run is done (refused if a lead paused it
    meanwhile). A start it may not make is refused (InvalidState, states.py)."""
    event = Event.FETCHED if after_fetch else Event.OPEN
    with transaction.atomic():
        move(
            evaluation_id=evaluation.id,
            event=event,
            started_at=Coalesce(F("started_at"), Value(timezone.now())),
        )
        current = Evaluation.objects.get(id=evaluation.id)
        # Reuse writes its grades through the grade writer, which marks their keywords
        # in this transaction and queues their recompute once it commits.
        reuse_apply(evaluation=current)
        # Keywords added while it was pending take their place in a decision order.
        decisive_order_refresh(evaluation=current)
        live.changed(evaluation_id=evaluation.id, team_id=current.team_id)
