"""The ways into metrics recomputation, for every caller in every process:

    grades_changed(keyword_ids=[...])        these keywords' judgements changed
    setup_changed(evaluation_id=...)         how this evaluation is scored changed

Call either inside the transaction that made the change. It marks the keywords in that
transaction (so a committed change is always marked or already scored), and once the
transaction commits start_recompute chooses which task of tasks.py runs and how: the
one place that does. With the broker down the mark stays and the sweep
(tasks.recompute_marked, every minute) scores it. The grade writer
(apps.judging.judgements) is the only caller of grades_changed for graders' judgements;
a lead's decision on a disagreement (apps.judging.decisions) calls it too, as its
decision stands in for the snapshot's grades.
"""

from collections.abc import Collection
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from apps.core.queueing import queue_in, queue_now
from apps.evaluations.models import Keyword

from . import tasks
from .gathering import gathering_begin

KEYWORDS = Keyword._meta.db_table
# Marking a keyword answers its changes not scored yet in the same statement (the ORM
# has no UPDATE ... RETURNING; a second SELECT would cost every grade a round trip).
MARK_SQL = (
    f"UPDATE {KEYWORDS} SET needs_scoring = TRUE, grade_version = grade_version + 1 "
    "WHERE id IN ({ids}) RETURNING id, evaluation_id, grade_version - scored_version"
)
# Up to this many keywords changed at once (an AI judge's step, a small import) are
# marked and queued as one keyword is; more (a large import, reuse) recompute their
# evaluations whole.
FEW_KEYWORDS = 100


def grades_changed(*, keyword_ids: Collection[int]) -> None:
    """The judgements of these keywords changed (one grade, or many at once).

    A keyword's recompute is queued when this is its only change not yet scored
    (grade_version - scored_version = 1 after the mark). With more, an earlier mark
    queued a task that has not stored its result yet: that task, or the worker running
    it, sees this change too, because it stores only what it read and goes round again
    while the grade version is ahead. So a keyword graded many times a second queues
    one task per recompute, not one per grade. A few keywords changed together (up to
    FEW_KEYWORDS: the grade writer's bulk entries) are marked in one statement, and
    their evaluation's first changes start one recompute (start_recompute).

    Many keywords (reuse, a large import): each is marked, and each evaluation they
    belong to is recomputed whole, in one task.
    """
    ids = sorted(set(keyword_ids))
    if len(ids) <= FEW_KEYWORDS:
        with connection.cursor() as cursor:
            cursor.execute(MARK_SQL.format(ids=", ".join(["%s"] * len(ids))), ids)
            rows = cursor.fetchall()
        first_changes: dict[int, list[int]] = {}  # evaluation id -> its keywords
        for keyword_id, evaluation_id, waiting in sorted(rows):
            if waiting == 1:
                first_changes.setdefault(evaluation_id, []).append(keyword_id)
        for evaluation_id, changed in first_changes.items():
            _start_after_commit(evaluation_id, changed)
    else:
        marked = Keyword.objects.filter(id__in=ids)
        marked.update(needs_scoring=True, grade_version=F("grade_version") + 1)
        for evaluation_id in marked.order_by().values_list("evaluation_id", flat=True).distinct():
            _start_after_commit(evaluation_id)


def setup_changed(*, evaluation_id: int) -> None:
    """How the evaluation is scored changed (its profile, transformers, metrics, whether
    keywords without results count).

    Every keyword is marked as a grade marks it, so what was stored under the old
    settings is older than the mark and the recompute stores over it (without the mark,
    the version guard would keep the old values as fresh); the whole-evaluation
    recompute is queued once the transaction commits, and the sweep covers a lost task.
    """
    Keyword.objects.filter(evaluation_id=evaluation_id).update(
        needs_scoring=True, grade_version=F("grade_version") + 1
    )
    _start_after_commit(evaluation_id)


def _start_after_commit(evaluation_id: int, keyword_ids: list[int] | None = None) -> None:
    transaction.on_commit(
        partial(start_recompute, evaluation_id=evaluation_id, keyword_ids=keyword_ids)
    )


def start_recompute(*, evaluation_id: int, keyword_ids: list[int] | None = None) -> None:
    """Start the recompute of a committed change: the one place that chooses which task
    runs it and how. The first rule that holds:

    1. keyword_ids None, the whole evaluation (setup_changed; grades_changed with more
       than FEW_KEYWORDS keywords at once): recompute_evaluation, published now.
    2. Celery in eager mode (no broker configured: tests, a machine without Redis), or
       PIPELINE_GATHER_SECONDS at 0: recompute_keywords(keyword_ids), published now.
    3. A broker: recompute_gathered(evaluation_id), due in PIPELINE_GATHER_SECONDS,
       unless one already waits for the evaluation: it scores these keywords too
       (gathering.py).

    In eager mode a published task runs here and now. Publishing never raises: with the
    broker down it is logged, and the marks wait for the sweep (apps.core.queueing).
    """
    gather = settings.PIPELINE_GATHER_SECONDS
    if keyword_ids is None:
        queue_now(tasks.recompute_evaluation, evaluation_id)
    elif current_app.conf.task_always_eager or gather <= 0:
        queue_now(tasks.recompute_keywords, keyword_ids)
    elif gathering_begin(evaluation_id):
        queue_in(gather, tasks.recompute_gathered, evaluation_id)
