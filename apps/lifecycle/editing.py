"""Editing an evaluation's settings while it is pending.

Once an evaluation has started (its first start, not a resume), the settings that shape
its grades and their meaning lock: scale, strategy, profile, transformers, reuse, the
search model, and whether keywords without results count as 0. Changing them later
would mix grades given under different rules. Names, descriptions, guidelines, tags,
metrics and the position flag stay editable while it is pending; a change that alters
metric values queues a full recomputation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count

from apps.accounts.models import Tag
from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.metric_list import metric_names_folded
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Snapshot,
    Status,
    UnretrievedJudgement,
)
from apps.evaluations.services import (
    add_to_total_slots,
    name_guard,
    settings_problems,
    taken_name_problems,
)
from apps.scoring.pipeline import setup_changed

LOCKED_ONCE_STARTED = (
    "scale",
    "scale_levels",
    "strategy",
    "profile",
    "transformers",
    "reuse",
    "reuse_judges",
    "search_model",
    "zero_without_results",
)
FREE_WHILE_PENDING = ("name", "description", "show_position", "scoring_guidelines", "auto_restart")
RESCORING = ("profile", "transformers", "zero_without_results")


def _changed(evaluation: Evaluation, field: str, value: Any) -> bool:
    if field == "search_model":
        return (value.id if value is not None else None) != evaluation.search_model_id
    return value != getattr(evaluation, field)


@transaction.atomic
def evaluation_update(
    *,
    evaluation: Evaluation,
    metrics: Sequence[tuple[str, int]] | None = None,
    tags: Iterable[Tag] | None = None,
    **changes: Any,
) -> Evaluation:
    """Apply `changes` (field name -> value), `metrics` and `tags`; all or nothing."""
    unknown = sorted(set(changes) - set(LOCKED_ONCE_STARTED) - set(FREE_WHILE_PENDING))
    if unknown:
        raise InvalidInput([f"{name}: not a setting that can be edited" for name in unknown])
    current = Evaluation.objects.select_for_update().get(id=evaluation.id)
    if current.status != Status.PENDING or current.fetching:
        state = "starting" if current.fetching else current.status
        raise InvalidState(f"only a pending evaluation can be edited; this one is {state}")
    if changes.get("scale", "custom") != "custom" and "scale_levels" not in changes:
        changes["scale_levels"] = None  # a built-in scale has no levels of its own
    changes = {k: v for k, v in changes.items() if _changed(current, k, v)}
    problems = [
        f"{field}: locked once the evaluation has started"
        for field in LOCKED_ONCE_STARTED
        if field in changes and current.started_at is not None
    ]
    graded = FeedbackSlot.objects.filter(evaluation=current, grade__isnull=False).exists()
    for field in ("scale", "scale_levels", "strategy"):
        if field in changes and graded:
            problems.append(f"{field}: cannot change while results have grades")
    scale_changed = "scale" in changes or "scale_levels" in changes
    if scale_changed and not graded and _has_decisions(current):
        # A lead's final grades are on the old scale.
        problems.append("scale: cannot change while a lead's decisions exist")
    if scale_changed and UnretrievedJudgement.objects.filter(keyword__evaluation=current).exists():
        # So are the grades of judged documents the results do not hold.
        problems.append("scale: cannot change while judged, unretrieved documents have grades")
    tag_list = list(tags) if tags is not None else list(current.tags.all())
    metric_list = (
        metric_names_folded(metrics)
        if metrics is not None
        else list(current.metrics.values_list("metric", "k"))
    )
    merged = {
        name: changes.get(name, getattr(current, name))
        for name in (
            "name",
            "scale",
            "scale_levels",
            "strategy",
            "profile",
            "reuse",
            "transformers",
        )
    }
    problems += settings_problems(
        team=current.team,
        metrics=metric_list,
        tags=tag_list,
        search_model=changes.get("search_model"),
        **merged,
    )
    if "name" in changes:
        problems += taken_name_problems(
            team_id=current.team_id, name=changes["name"], problems=problems, other_than=current.id
        )
    if problems:
        raise InvalidInput(problems)

    if "name" in changes:
        changes["name"] = changes["name"].strip()
    for field, value in changes.items():
        setattr(current, field, value)
    with name_guard(current.name):
        current.save(update_fields=list(changes) or None)
    if "strategy" in changes:
        _resize_slots(current)
    if tags is not None:
        current.tags.set(tag_list)
    metrics_changed = metrics is not None and _replace_metrics(current, metric_list)
    # Judged documents that are not results score too (the trec profile's pool).
    scored = graded or UnretrievedJudgement.objects.filter(keyword__evaluation=current).exists()
    if scored and (metrics_changed or any(field in changes for field in RESCORING)):
        setup_changed(evaluation_id=current.id)
    current.refresh_from_db()
    return current


def _has_decisions(evaluation: Evaluation) -> bool:
    return Snapshot.objects.filter(keyword__evaluation=evaluation, decision__isnull=False).exists()


def _replace_metrics(evaluation: Evaluation, metrics: Sequence[tuple[str, int]]) -> bool:
    """Keep rows (and their history) of metrics still listed; returns whether any changed."""
    existing = {(m.metric, m.k): m for m in evaluation.metrics.all()}
    wanted = {(metric, k): position for position, (metric, k) in enumerate(metrics)}
    gone = [m.id for key, m in existing.items() if key not in wanted]
    EvaluationMetric.objects.filter(id__in=gone).delete()
    added = [key for key in wanted if key not in existing]
    EvaluationMetric.objects.bulk_create(
        EvaluationMetric(evaluation=evaluation, metric=metric, k=k, position=wanted[(metric, k)])
        for metric, k in added
    )
    for key, row in existing.items():
        if key in wanted and row.position != wanted[key]:
            EvaluationMetric.objects.filter(id=row.id).update(position=wanted[key])
    return bool(gone or added)


def _resize_slots(evaluation: Evaluation) -> None:
    """Give every snapshot `strategy` slots (none is graded: checked by the caller)."""
    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    removed, _ = slots.filter(index__gte=evaluation.strategy).delete()
    have = {row[0]: row[1:] for row in _slot_counts(evaluation)}
    new = [
        FeedbackSlot(
            evaluation=evaluation,
            keyword_id=keyword_id,
            snapshot_id=snapshot_id,
            index=index,
            keyword_position=keyword_position,
            snapshot_position=snapshot_position,
        )
        for snapshot_id, (keyword_id, keyword_position, snapshot_position, count) in have.items()
        for index in range(count, evaluation.strategy)
    ]
    FeedbackSlot.objects.bulk_create(new, batch_size=2000)
    add_to_total_slots(evaluation_id=evaluation.id, added=len(new) - removed)


def _slot_counts(evaluation: Evaluation) -> Iterable[tuple[int, int, int, int, int]]:
    return (
        FeedbackSlot.objects.filter(evaluation=evaluation)
        .values("snapshot_id")
        .annotate(n=Count("id"))
        .values_list("snapshot_id", "keyword_id", "keyword_position", "snapshot_position", "n")
    )
