"""The grade-to-metrics pipeline: mark, claim, recompute, store.

A grade change marks its keyword in the grade's own transaction (`keyword_mark_for_scoring`)
and, when the keyword had no change waiting to be scored, queues `recompute_keyword` once
that transaction commits. The worker claims the keyword with a lease, reads its slots,
lets the pure engine compute, and stores the results guarded by the keyword's grade
version, so a slow worker can never overwrite a fresher result. A grade saved while a
task waits or a worker runs leaves the keyword marked, and the worker goes round again.
The periodic sweep (`keywords_recompute_marked`) picks up whatever a lost task or a down
broker left marked.
"""

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword

from . import store
from .loading import load_keyword_inputs

logger = logging.getLogger(__name__)

# How many rounds one task makes on a keyword that keeps being re-marked under it
# before it leaves the rest to a later task or the sweep.
MAX_ROUNDS_PER_TASK = 20


KEYWORDS = Keyword._meta.db_table
# What marking a keyword writes, and what it answers: the keyword's changes not scored
# yet. Statements that mark a keyword along with other writes use the same two parts.
MARK_SET = "needs_scoring = TRUE, grade_version = grade_version + 1"
UNSCORED_CHANGES = "grade_version - scored_version"
MARK_SQL = f"UPDATE {KEYWORDS} SET {MARK_SET} WHERE id = %s RETURNING {UNSCORED_CHANGES}"


def keyword_mark_for_scoring(*, keyword_id: int) -> None:
    """Call inside the transaction that changed a grade of this keyword."""
    with connection.cursor() as cursor:
        cursor.execute(MARK_SQL, [keyword_id])
        row = cursor.fetchone()
    if row is not None:
        queue_recompute_after_mark(keyword_id=keyword_id, unscored_changes=row[0])


def queue_recompute_after_mark(*, keyword_id: int, unscored_changes: int) -> None:
    """Queue the keyword's recompute once the marking transaction commits, when this mark
    is the only change not yet scored (grade_version - scored_version after the mark).

    With more, an earlier mark queued a task that has not stored its result yet: that
    task, or the worker running it, sees this grade too, because it stores only what it
    read and goes round again while the grade version is ahead. So a keyword graded many
    times a second queues one task per recompute, not one per grade. What a lost task or
    a broker that was down leaves marked, the sweep recomputes.
    """
    if unscored_changes == 1:
        transaction.on_commit(lambda: queue_keyword_recompute(keyword_id=keyword_id))


def queue_keyword_recompute(*, keyword_id: int) -> None:
    """Queue the recomputation; a broker that cannot be reached is logged, never raised."""
    from .tasks import recompute_keyword

    _publish(recompute_keyword, keyword_id)


def evaluation_mark_for_scoring(*, evaluation_id: int) -> None:
    """Call inside the transaction that changed how an evaluation is scored (its profile,
    transformers, metrics, whether keywords without results count), or gave many of its
    keywords grades at once.

    Every keyword is marked as a grade marks it, so what was stored under the old
    settings is older than the mark and the recompute stores over it (without the mark,
    the version guard would keep the old values as fresh); the whole-evaluation
    recompute is queued once the transaction commits, and the sweep covers a lost task.
    """
    Keyword.objects.filter(evaluation_id=evaluation_id).update(
        needs_scoring=True, grade_version=F("grade_version") + 1
    )
    transaction.on_commit(lambda: queue_evaluation_recompute(evaluation_id=evaluation_id))


def queue_evaluation_recompute(*, evaluation_id: int) -> None:
    """Queue a whole evaluation's recomputation, tolerating a broker that is down."""
    from .tasks import recompute_evaluation

    _publish(recompute_evaluation, evaluation_id)


def _publish(task: Any, object_id: int) -> None:
    """task.delay(object_id), or, when the broker cannot be reached, a warning: what it
    would recompute stays marked for the sweep. The broker guard (and its pause after a
    failure) is the one every task shares: apps.core.queueing."""
    from apps.core.queueing import queue_now

    queue_now(task, object_id)


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
    still_marked = False
    while rounds < MAX_ROUNDS_PER_TASK and _claim(keyword_id):
        rounds += 1
        still_marked = _recompute_claimed(keyword_id)
        if not still_marked:
            break
    if still_marked:
        # Out of rounds with grades still landing: the grades that marked it queued no
        # task (this one was pending), so hand the keyword to a new one.
        queue_keyword_recompute(keyword_id=keyword_id)
    return rounds


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
    store.store_exact_means(evaluation_id=evaluation_id)


def evaluation_recompute(*, evaluation_id: int) -> None:
    """Recompute every keyword of an evaluation (after an import or a settings change)."""
    store.store_evaluation_scores(evaluation=Evaluation.objects.get(id=evaluation_id))
