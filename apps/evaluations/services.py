"""Writes for evaluations: create, add keywords and results, start, finish, clone.

Evaluations that call a live search system (start runs every keyword against the
endpoint) build on these; this module covers evaluations whose results are given.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tag, Team
from apps.core.errors import InvalidInput, InvalidState
from apps.scoring import engine

from .models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Profile,
    Reuse,
    Scale,
    Snapshot,
    Status,
)


@dataclass(frozen=True)
class Document:
    """One search result to store as a snapshot."""

    doc_id: str
    name: str = ""
    image: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)


NAME_LIMIT = Evaluation._meta.get_field("name").max_length or 200


def _is_whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate_settings(
    *,
    team: Team,
    name: str,
    scale: str,
    strategy: int,
    profile: str,
    reuse: str,
    metrics: Sequence[tuple[str, int]],
    transformers: Mapping[str, Any] | None,
    tags: Sequence[Tag],
) -> list[str]:
    """Every problem with the settings of a new evaluation, each with its location."""
    problems: list[str] = []
    if not name.strip():
        problems.append("name: required")
    elif len(name.strip()) > NAME_LIMIT:
        problems.append(f"name: at most {NAME_LIMIT} characters (got {len(name.strip())})")
    if scale not in Scale.values:
        problems.append(f"scale: {scale!r} is not one of {', '.join(Scale.values)}")
    if not _is_whole_number(strategy) or strategy not in (1, 3):
        problems.append(f"strategy: {strategy!r} must be 1 or 3")
    if profile not in Profile.values:
        problems.append(f"profile: {profile!r} is not one of {', '.join(Profile.values)}")
    if reuse not in Reuse.values:
        problems.append(f"reuse: {reuse!r} is not one of {', '.join(Reuse.values)}")
    if not metrics:
        problems.append("metrics: at least one (metric, k) is required")
    seen: set[tuple[str, int]] = set()
    for index, (metric, k) in enumerate(metrics):
        if metric not in engine.METRICS:
            problems.append(f"metrics[{index}].metric: unknown metric {metric!r}")
        if not _is_whole_number(k) or not 1 <= k <= 100:
            problems.append(f"metrics[{index}].k: {k!r} must be a whole number from 1 to 100")
        if (metric, k) in seen:
            problems.append(f"metrics[{index}]: {metric}@{k} is listed twice")
        seen.add((metric, k))
    if scale in Scale.values:
        problems.extend(engine.validate_rules(scale, transformers or None))
    if any(tag.team_id != team.id for tag in tags):
        problems.append("tags: every tag must belong to the evaluation's team")
    return problems


@transaction.atomic
def evaluation_create(
    *,
    team: Team,
    name: str,
    metrics: Sequence[tuple[str, int]],
    scale: str = Scale.GRADED,
    strategy: int = 1,
    profile: str = Profile.SEARCHTWEAK,
    transformers: Mapping[str, Any] | None = None,
    description: str = "",
    show_position: bool = False,
    scoring_guidelines: str = "",
    reuse: str = Reuse.NONE,
    auto_restart: bool = False,
    tags: Iterable[Tag] = (),
    created_by: Any = None,
) -> Evaluation:
    tags = list(tags)
    problems = _validate_settings(
        team=team,
        name=name,
        scale=scale,
        strategy=strategy,
        profile=profile,
        reuse=reuse,
        metrics=metrics,
        transformers=transformers,
        tags=tags,
    )
    if problems:
        raise InvalidInput(problems)
    evaluation = Evaluation.objects.create(
        team=team,
        name=name.strip(),
        description=description,
        scale=scale,
        strategy=strategy,
        profile=profile,
        transformers=dict(transformers or {}),
        show_position=show_position,
        scoring_guidelines=scoring_guidelines,
        reuse=reuse,
        auto_restart=auto_restart,
        created_by=created_by,
    )
    EvaluationMetric.objects.bulk_create(
        EvaluationMetric(evaluation=evaluation, metric=metric, k=k, position=index)
        for index, (metric, k) in enumerate(metrics)
    )
    evaluation.tags.set(tags)
    return evaluation


@transaction.atomic
def keywords_add(*, evaluation: Evaluation, texts: Iterable[str]) -> list[Keyword]:
    """Add keywords after the existing ones, trimmed, skipping blanks and duplicates."""
    existing = set(evaluation.keywords.values_list("text", flat=True))
    last = evaluation.keywords.order_by("-position").values_list("position", flat=True).first()
    position = last or 0
    new: list[Keyword] = []
    for raw in texts:
        text = raw.strip()
        if not text or text in existing:
            continue
        existing.add(text)
        position += 1
        new.append(Keyword(evaluation=evaluation, text=text, position=position))
    return Keyword.objects.bulk_create(new)


@transaction.atomic
def snapshots_add(*, keyword: Keyword, documents: Sequence[Document]) -> list[Snapshot]:
    """Store results after the keyword's existing ones, each with its empty feedback slots."""
    evaluation = keyword.evaluation
    last = keyword.snapshots.order_by("-position").values_list("position", flat=True).first()
    start = (last or 0) + 1
    snapshots = Snapshot.objects.bulk_create(
        Snapshot(
            keyword=keyword,
            position=start + offset,
            doc_id=doc.doc_id,
            name=doc.name,
            image=doc.image,
            attributes=dict(doc.attributes),
        )
        for offset, doc in enumerate(documents)
    )
    FeedbackSlot.objects.bulk_create(
        FeedbackSlot(
            evaluation=evaluation,
            keyword=keyword,
            snapshot=snapshot,
            index=index,
            keyword_position=keyword.position,
            snapshot_position=snapshot.position,
        )
        for snapshot in snapshots
        for index in range(evaluation.strategy)
    )
    added = len(snapshots) * evaluation.strategy
    with transaction.atomic():
        locked = Evaluation.objects.select_for_update().only("graded_slots", "total_slots")
        current = locked.get(id=evaluation.id)
        total = current.total_slots + added
        Evaluation.objects.filter(id=evaluation.id).update(
            total_slots=total, progress=engine.progress(current.graded_slots, total)
        )
    evaluation.refresh_from_db(fields=["total_slots", "progress"])
    return snapshots


def evaluation_start(*, evaluation: Evaluation) -> Evaluation:
    """Open a pending evaluation for grading."""
    with transaction.atomic():
        changed = Evaluation.objects.filter(id=evaluation.id, status=Status.PENDING).update(
            status=Status.ACTIVE, started_at=timezone.now()
        )
        if not changed:
            current = Evaluation.objects.filter(id=evaluation.id).values_list("status", flat=True)
            raise InvalidState(
                f"only a pending evaluation can start; this one is {current.first() or 'deleted'}"
            )
    evaluation.refresh_from_db()
    return evaluation


def evaluation_finish(*, evaluation_id: int) -> bool:
    """Finish an active evaluation: exact means, and a fresh copy when it auto-restarts.

    Returns False when the evaluation was not active (someone else finished it first).
    """
    from apps.scoring.services import evaluation_means_reconcile

    with transaction.atomic():
        changed = Evaluation.objects.filter(id=evaluation_id, status=Status.ACTIVE).update(
            status=Status.FINISHED, finished_at=timezone.now()
        )
        if not changed:
            return False
        evaluation_means_reconcile(evaluation_id=evaluation_id)
        evaluation = Evaluation.objects.get(id=evaluation_id)
        if evaluation.auto_restart:
            transaction.on_commit(lambda: evaluation_restart(evaluation_id=evaluation_id))
    return True


_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)\s*$")


def next_name(name: str) -> str:
    """'Holiday set 4' -> 'Holiday set 5'; a name without a trailing number gets ' 2'.

    The text before the number is shortened when the result would not fit the column.
    """
    match = _TRAILING_NUMBER.match(name)
    base, number = (match.group(1), int(match.group(2)) + 1) if match else (f"{name} ", 2)
    suffix = str(number)
    return f"{base[: NAME_LIMIT - len(suffix)]}{suffix}"


@transaction.atomic
def evaluation_clone(*, evaluation: Evaluation, name: str | None = None) -> Evaluation:
    """A pending copy with the same settings, keywords and results, and no grades."""
    copy = evaluation_create(
        team=evaluation.team,
        name=name or next_name(evaluation.name),
        metrics=list(evaluation.metrics.values_list("metric", "k")),
        scale=evaluation.scale,
        strategy=evaluation.strategy,
        profile=evaluation.profile,
        transformers=evaluation.transformers,
        description=evaluation.description,
        show_position=evaluation.show_position,
        scoring_guidelines=evaluation.scoring_guidelines,
        reuse=evaluation.reuse,
        auto_restart=evaluation.auto_restart,
        tags=evaluation.tags.all(),
        created_by=evaluation.created_by,
    )
    for keyword in evaluation.keywords.prefetch_related("snapshots"):
        [new_keyword] = keywords_add(evaluation=copy, texts=[keyword.text])
        snapshots_add(
            keyword=new_keyword,
            documents=[
                Document(s.doc_id, s.name, s.image, s.attributes) for s in keyword.snapshots.all()
            ],
        )
    copy.refresh_from_db()
    return copy


def evaluation_restart(*, evaluation_id: int) -> Evaluation:
    """Auto-restart: a copy with the name's trailing number incremented, started at once."""
    evaluation = Evaluation.objects.get(id=evaluation_id)
    return evaluation_start(evaluation=evaluation_clone(evaluation=evaluation))


def evaluation_stop(*, evaluation: Evaluation) -> Evaluation:
    """Pause grading: an active evaluation goes back to pending; grades are kept."""
    changed = Evaluation.objects.filter(id=evaluation.id, status=Status.ACTIVE).update(
        status=Status.PENDING
    )
    if not changed:
        raise InvalidState(f"only an active evaluation can stop; this one is {evaluation.status}")
    evaluation.refresh_from_db()
    return evaluation


def evaluation_finish_now(*, evaluation: Evaluation) -> Evaluation:
    """A lead finishes an active evaluation by hand, whatever its progress."""
    if not evaluation_finish(evaluation_id=evaluation.id):
        evaluation.refresh_from_db()
        raise InvalidState(f"only an active evaluation can finish; this one is {evaluation.status}")
    evaluation.refresh_from_db()
    return evaluation


def evaluation_delete(*, evaluation: Evaluation) -> None:
    """Delete an evaluation and everything in it; refused while graders are at work."""
    if Evaluation.objects.filter(id=evaluation.id, status=Status.ACTIVE).exists():
        raise InvalidState("stop the evaluation before deleting it: it is active")
    evaluation.delete()


@transaction.atomic
def evaluation_create_with_keywords(
    *, team: Team, metrics: Sequence[tuple[str, int]], keywords: Iterable[str], **settings: Any
) -> Evaluation:
    """Create an evaluation and its keywords (trimmed, blanks and duplicates skipped)."""
    evaluation = evaluation_create(team=team, metrics=metrics, **settings)
    keywords_add(evaluation=evaluation, texts=keywords)
    return evaluation
