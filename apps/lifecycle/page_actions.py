"""What the evaluation page offers a lead right now: its lifecycle buttons and the state
of a start whose keywords are running.

The buttons mirror the services' rules only to hide what would be refused; the services
stay the judges (a stale page that posts anyway gets their refusal, word for word).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from apps.evaluations.models import Evaluation, Keyword, Reuse, Status

from .reuse import ReusePreview, reuse_preview

# How often the page asks again while the keywords run.
POLL_SECONDS = 2


def allowed_actions(evaluation: Evaluation, *, is_baseline: bool) -> frozenset[str]:
    """The lifecycle actions the evaluation allows in its current state."""
    running = evaluation.status == Status.ACTIVE or evaluation.fetching
    actions = {"clone", "unpin" if evaluation.pinned else "pin"}
    if evaluation.status == Status.PENDING and not evaluation.fetching:
        actions |= {"start", "edit"}
    if running:
        actions.add("pause")
    else:
        actions.add("delete")
    if evaluation.status == Status.ACTIVE:
        actions.add("finish")
    if evaluation.archived:
        actions.add("unarchive")
    elif not running:
        actions.add("archive")
    if is_baseline:
        actions.add("clear_baseline")
    elif evaluation.status == Status.FINISHED:
        actions.add("set_baseline")
    return frozenset(actions)


@dataclass(frozen=True)
class LifecycleState:
    actions: frozenset[str]
    is_baseline: bool
    started_before: bool
    # Keywords of an evaluation with a search model: all, already run, failed.
    keywords: int = 0
    keywords_run: int = 0
    keywords_failed: int = 0
    poll_seconds: int = POLL_SECONDS
    # What starting would copy by reuse, by source (None: it does not reuse, or cannot
    # start now).
    reuse: ReusePreview | None = None

    @property
    def resumes(self) -> bool:
        """Starting again continues an earlier start (grades and run keywords are kept)."""
        return self.started_before or self.keywords_run > 0


def lifecycle_state(evaluation: Evaluation, *, baseline_id: int | None) -> LifecycleState:
    """The evaluation's buttons and keyword counts (one query, none without a model)."""
    is_baseline = baseline_id == evaluation.id
    actions = allowed_actions(evaluation, is_baseline=is_baseline)
    started_before = evaluation.started_at is not None
    # Before a start, the lead reads whose grades it will copy.
    reuse = None
    if "start" in actions and evaluation.reuse != Reuse.NONE:
        reuse = reuse_preview(evaluation=evaluation)
    if evaluation.search_model_id is None:
        return LifecycleState(actions, is_baseline, started_before, reuse=reuse)
    counts = Keyword.objects.filter(evaluation_id=evaluation.id).aggregate(
        keywords=Count("id"),
        keywords_run=Count("id", filter=Q(executed_at__isnull=False)),
        keywords_failed=Count("id", filter=Q(failed=True)),
    )
    return LifecycleState(actions, is_baseline, started_before, reuse=reuse, **counts)
