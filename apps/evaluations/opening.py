"""Opening a pending evaluation for grading: its reuse strategy fills what earlier
evaluations graded, then graders may claim its results. A start opens it at once, or
the keyword run does when it is done (fetching.py)."""

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.core import live
from apps.judging.decisive import decisive_order_refresh

from .models import Evaluation, Status
from .reuse import reuse_apply


def evaluation_open(*, evaluation: Evaluation, after_fetch: bool = False) -> bool:
    """Apply the reuse strategy and open a pending evaluation for grading.

    `after_fetch`: only if it is still fetching (a lead may have paused it meanwhile).
    Returns False when the evaluation was not in a state to open.
    """
    with transaction.atomic():
        ready = Evaluation.objects.select_for_update().filter(
            id=evaluation.id, status=Status.PENDING, fetching=after_fetch
        )
        current = ready.first()
        if current is None:
            return False
        # Reuse writes its grades through the grade writer, which marks their keywords
        # in this transaction and queues their recompute once it commits.
        reuse_apply(evaluation=current)
        # Keywords added while it was pending take their place in a decision order.
        decisive_order_refresh(evaluation=current)
        Evaluation.objects.filter(id=evaluation.id).update(
            status=Status.ACTIVE,
            fetching=False,
            fetch_lease_until=None,
            started_at=Coalesce(F("started_at"), Value(timezone.now())),
        )
        live.changed(evaluation_id=evaluation.id, team_id=current.team_id)
    return True
