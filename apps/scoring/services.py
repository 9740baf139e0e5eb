"""The worker's side of the grade-to-metrics pipeline: claim, recompute, store, sweep.

One function a use case, each run by the Celery task of the same name (tasks.py):

    recompute_keywords(keyword_ids=...)      keywords of one evaluation that changed
    recompute_gathered(evaluation_id=...)    an evaluation's marked keywords
    recompute_marked()                       every marked keyword: the sweep
    recompute_evaluation(evaluation_id=...)  every keyword of an evaluation

A grade change marks its keyword in the grade's own transaction and, once it commits,
queues one of these (pipeline.start_recompute chooses which, and how). The worker
leases the marked keywords, reads their slots, lets the pure engine score them all at
once, and stores each result guarded by its keyword's grade version, so a slow worker
can never overwrite a fresher result. A grade saved while a task waits or a worker
runs leaves the keyword marked, and the worker goes round again. The periodic sweep
picks up whatever a lost task or a down broker left marked.
"""

import logging
from collections.abc import Collection
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword

from . import store
from .loading import load_keywords_inputs
from .means import store_exact_means

logger = logging.getLogger(__name__)

# How many rounds one task makes on a keyword that keeps being re-marked under it
# before it leaves the rest to a later task or the sweep.
MAX_ROUNDS_PER_TASK = 20
# How many keywords one round scores at most: a task takes its keyword's evaluation's
# other marked keywords along (the engine's batch path scores them together, and they
# are stored in one transaction), so keywords graded many a second cost a few rounds,
# not a task each.
KEYWORDS_PER_ROUND = 200


def _lease_until() -> datetime:
    return timezone.now() + timedelta(seconds=settings.SCORING_LEASE_SECONDS)


def _lease_free(now: datetime) -> Q:
    return Q(scoring_lease_until__isnull=True) | Q(scoring_lease_until__lt=now)


def _claim(keyword_ids: Collection[int]) -> list[int]:
    """Lease those of these keywords that are marked and not leased; their ids. Waits
    for a grade's transaction that is marking one of them, so its mark is seen."""
    now = timezone.now()
    with transaction.atomic():
        claimed = list(
            Keyword.objects.select_for_update()
            .filter(id__in=keyword_ids, needs_scoring=True)
            .filter(_lease_free(now))
            .order_by("id")  # lock order (store.py); no join on the evaluation
            .values_list("id", flat=True)
        )
        if claimed:
            Keyword.objects.filter(id__in=claimed).update(scoring_lease_until=_lease_until())
    return claimed


def _claim_marked_beside(evaluation_id: int, claimed: list[int]) -> list[int]:
    """Lease more marked keywords of the evaluation, up to KEYWORDS_PER_ROUND in all,
    skipping any a grade's transaction holds (its own task will come)."""
    room = KEYWORDS_PER_ROUND - len(claimed)
    if room <= 0:
        return []
    now = timezone.now()
    with transaction.atomic():
        more = list(
            Keyword.objects.select_for_update(skip_locked=True)
            .filter(evaluation_id=evaluation_id, needs_scoring=True)
            .filter(_lease_free(now))
            .exclude(id__in=claimed)
            .order_by("id")  # lock order (store.py); no join on the evaluation
            .values_list("id", flat=True)[:room]
        )
        if more:
            Keyword.objects.filter(id__in=more).update(scoring_lease_until=_lease_until())
    return more


def recompute_keywords(*, keyword_ids: Collection[int]) -> tuple[int, int]:
    """Recompute marked keywords of one evaluation together until none is marked; with
    them, the evaluation's other marked keywords nobody is scoring (a grade's task that
    comes for one of those finds nothing to do). Returns the rounds run and how many
    keywords were scored.

    Zero rounds means there was nothing to do, or another worker holds the keywords (it
    will see any newer mark when it stores its result)."""
    claimed = _claim(keyword_ids)
    if not claimed:
        return 0, 0
    evaluation_id = Keyword.objects.values_list("evaluation_id", flat=True).get(id=claimed[0])
    return _recompute_rounds(claimed + _claim_marked_beside(evaluation_id, claimed))


def recompute_gathered(*, evaluation_id: int) -> tuple[int, int]:
    """Recompute every marked keyword of the evaluation nobody is scoring (gathering.py:
    the changes a task gathered while it waited), KEYWORDS_PER_ROUND at a time. Returns
    the rounds run and how many keywords were scored."""
    rounds = scored = 0
    while rounds < MAX_ROUNDS_PER_TASK:
        claimed = _claim_marked_beside(evaluation_id, [])
        if not claimed:
            break
        more_rounds, more_scored = _recompute_rounds(claimed, MAX_ROUNDS_PER_TASK - rounds)
        rounds, scored = rounds + more_rounds, scored + more_scored
        if len(claimed) < KEYWORDS_PER_ROUND:
            break  # every keyword marked before the claim was taken; later ones queue anew
    return rounds, scored


def _recompute_rounds(claimed: list[int], most: int | None = None) -> tuple[int, int]:
    """Recompute the claimed keywords, then again those graded meanwhile, up to `most`
    rounds (MAX_ROUNDS_PER_TASK); the rounds run and how many keywords were scored."""
    most = MAX_ROUNDS_PER_TASK if most is None else most
    rounds, scored = 0, set()
    while claimed:
        rounds += 1
        scored.update(claimed)
        still_marked = _recompute_claimed(claimed)
        if not still_marked or rounds >= most:
            break
        claimed = _claim(still_marked)
    return rounds, len(scored)


def keyword_is_marked(*, keyword_id: int) -> bool:
    """Whether grades of the keyword wait to be scored (a task that ran out of rounds
    hands such a keyword to a new task: tasks.recompute_keywords)."""
    return Keyword.objects.filter(id=keyword_id, needs_scoring=True).exists()


def _recompute_claimed(keyword_ids: list[int]) -> set[int]:
    """Score the claimed keywords with the engine's batch path and store them; the
    keywords still marked."""
    inputs = load_keywords_inputs(keyword_ids=keyword_ids)
    if not inputs:  # deleted meanwhile
        return set()
    settings = inputs[0].settings
    scores = settings.score_many([i.snapshots for i in inputs], [i.unretrieved for i in inputs])
    return store.store_keyword_scores(
        inputs=inputs, scores=[scores.keyword_score(n) for n in range(len(inputs))]
    )


def recompute_marked(*, limit: int = 10_000) -> int:
    """The sweep: recompute every marked keyword whose lease is free or expired.

    Then make incrementally kept means exact. Returns the number of keywords recomputed.
    """
    now = timezone.now()
    marked = list(
        Keyword.objects.filter(needs_scoring=True)
        .filter(_lease_free(now))
        .order_by("id")
        .values_list("id", "evaluation_id")[:limit]
    )
    by_evaluation: dict[int, list[int]] = {}
    for keyword_id, evaluation_id in marked:
        by_evaluation.setdefault(evaluation_id, []).append(keyword_id)
    done = sum(
        recompute_keywords(keyword_ids=keyword_ids)[1] for keyword_ids in by_evaluation.values()
    )
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


def recompute_evaluation(*, evaluation_id: int) -> None:
    """Recompute every keyword of an evaluation (after an import or a settings change)."""
    store.store_evaluation_scores(evaluation=Evaluation.objects.get(id=evaluation_id))
