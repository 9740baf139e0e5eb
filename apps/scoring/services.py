"""The worker's side of the grade-to-metrics pipeline: claim, recompute, store, sweep.

A grade change marks its keyword in the grade's own transaction (pipeline.py, the only
way in) and, when the keyword had no change waiting to be scored, queues
`recompute_keyword` once that transaction commits. The worker claims the keyword with a
lease, reads its slots, lets the pure engine compute, and stores the results guarded by
the keyword's grade version, so a slow worker can never overwrite a fresher result. A
grade saved while a task waits or a worker runs leaves the keyword marked, and the
worker goes round again.
The periodic sweep (`keywords_recompute_marked`) picks up whatever a lost task or a down
broker left marked.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword

from . import store
from .loading import load_keyword_inputs
from .means import store_exact_means

logger = logging.getLogger(__name__)

# How many rounds one task makes on a keyword that keeps being re-marked under it
# before it leaves the rest to a later task or the sweep.
MAX_ROUNDS_PER_TASK = 20


def _claim(keyword_id: int) -> bool:
    now = timezone.now()
    lease_until = now + timedelta(seconds=settings.SCORING_LEASE_SECONDS)
    claimed = (
        Keyword.objects.filter(id=keyword_id, needs_scoring=True)
        .filter(Q(scoring_lease_until__isnull=True) | Q(scoring_lease_until__lt=now))
        .update(scoring_lease_until=lease_until)
    )
    return claimed == 1


def keyword_recompute(*, keyword_id: int) -> int:
    """Recompute a marked keyword until it is no longer marked. Returns the rounds run.

    Zero rounds means there was nothing to do, or another worker holds the keyword (it
    will see any newer mark when it stores its result).
    """
    rounds = 0
    while rounds < MAX_ROUNDS_PER_TASK and _claim(keyword_id):
        rounds += 1
        still_marked = _recompute_claimed(keyword_id)
        if not still_marked:
            break
    return rounds


def keyword_is_marked(*, keyword_id: int) -> bool:
    """Whether grades of the keyword wait to be scored (a task that ran out of rounds
    hands such a keyword to a new task: tasks.recompute_keyword)."""
    return Keyword.objects.filter(id=keyword_id, needs_scoring=True).exists()


def _recompute_claimed(keyword_id: int) -> bool:
    inputs = load_keyword_inputs(keyword_id=keyword_id)
    if inputs is None:  # deleted meanwhile
        return False
    scored = inputs.score()
    return store.store_keyword_score(inputs=inputs, scored=scored)


def keywords_recompute_marked(*, limit: int = 10_000) -> int:
    """The sweep: recompute every marked keyword whose lease is free or expired.

    Then make incrementally kept means exact. Returns the number of keywords recomputed.
    """
    now = timezone.now()
    marked = list(
        Keyword.objects.filter(needs_scoring=True)
        .filter(Q(scoring_lease_until__isnull=True) | Q(scoring_lease_until__lt=now))
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    done = sum(1 for keyword_id in marked if keyword_recompute(keyword_id=keyword_id))
    for evaluation_id in (
        EvaluationMetric.objects.filter(means_exact=False)
        .values_list("evaluation_id", flat=True)
        .distinct()
    ):
        evaluation_means_reconcile(evaluation_id=evaluation_id)
    if done:
        logger.info("sweep recomputed %d marked keywords", done)
    return done


def evaluation_means_reconcile(*, evaluation_id: int) -> None:
    """Recompute every mean of the evaluation exactly from its keyword values.

    Incremental updates keep means current in constant time; this re-adds them with an
    exactly rounded sum so they equal the mean of the stored keyword values to the bit.
    """
    store_exact_means(evaluation_id=evaluation_id)


def evaluation_recompute(*, evaluation_id: int) -> None:
    """Recompute every keyword of an evaluation (after an import or a settings change)."""
    store.store_evaluation_scores(evaluation=Evaluation.objects.get(id=evaluation_id))
