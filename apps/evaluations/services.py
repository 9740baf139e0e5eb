"""Writes for evaluations: create, add keywords and results, start, finish, clone.

Evaluations that call a live search system (start runs every keyword against the
endpoint) build on these; this module covers evaluations whose results are given.
"""

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import Tag, Team
from apps.core.errors import InvalidInput, InvalidState
from apps.core.image_sources import RULE as IMAGE_RULE
from apps.core.image_sources import image_source, is_image_source
from apps.core.queueing import queue_after_commit
from apps.scoring import engine

from .metric_list import metric_text
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
from .reuse import reuse_apply
from .scales import scale_levels_problems, scale_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Document:
    """One search result to store as a snapshot."""

    doc_id: str
    name: str = ""
    image: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)


NAME_LIMIT = Evaluation._meta.get_field("name").max_length or 200
KEYWORD_LIMIT = Keyword._meta.get_field("text").max_length or 500


def _is_whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def settings_problems(
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
    search_model: Any = None,
    scale_levels: Any = None,
) -> list[str]:
    """Every problem with the settings of a new evaluation, each with its location."""
    problems: list[str] = []
    if not name.strip():
        problems.append("name: required")
    elif len(name.strip()) > NAME_LIMIT:
        problems.append(f"name: at most {NAME_LIMIT} characters (got {len(name.strip())})")
    native: engine.Scale | None = None
    if scale not in Scale.values:
        problems.append(f"scale: {scale!r} is not one of {', '.join(Scale.values)}")
    elif scale == Scale.CUSTOM:
        level_problems = scale_levels_problems(scale_levels)
        problems.extend(level_problems)
        native = None if level_problems else scale_of(scale, scale_levels)
    elif scale_levels is not None:
        problems.append("scale_levels: only for the custom scale")
    else:
        native = engine.get_scale(scale)
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
        elif native is not None and native.custom:
            try:
                engine.metric_scale(metric, native)
            except engine.EngineError as error:
                problems.append(f"metrics[{index}].metric: {error}")
        if not _is_whole_number(k) or not (k == engine.WHOLE_LIST or 1 <= k <= engine.MAX_CUTOFF):
            problems.append(
                f"metrics[{index}].k: {k!r} must be a whole number from 1 to "
                f"{engine.MAX_CUTOFF}, or null for the whole list"
            )
        elif (metric, k) in seen:
            problems.append(f"metrics[{index}]: {metric_text(metric, k)} is listed twice")
        seen.add((metric, k))
    if native is not None:
        problems.extend(engine.validate_rules(native, transformers or None))
    if any(tag.team_id != team.id for tag in tags):
        problems.append("tags: every tag must belong to the evaluation's team")
    if search_model is not None and search_model.team_id != team.id:
        problems.append("model: not a search model of this team")
    return problems


@transaction.atomic
def evaluation_create(
    *,
    team: Team,
    name: str,
    metrics: Sequence[tuple[str, int]],
    scale: str = Scale.GRADED,
    scale_levels: Mapping[str, Any] | None = None,
    strategy: int = 1,
    profile: str = Profile.SEARCHTWEAK,
    transformers: Mapping[str, Any] | None = None,
    description: str = "",
    show_position: bool = False,
    scoring_guidelines: str = "",
    reuse: str = Reuse.NONE,
    auto_restart: bool = False,
    zero_without_results: bool = False,
    tags: Iterable[Tag] = (),
    created_by: Any = None,
    search_model: Any = None,
) -> Evaluation:
    """A pending evaluation; `search_model` (a SearchModel) when its results will come
    from the team's search system."""
    tags = list(tags)
    problems = settings_problems(
        team=team,
        name=name,
        scale=scale,
        strategy=strategy,
        profile=profile,
        reuse=reuse,
        metrics=metrics,
        transformers=transformers,
        tags=tags,
        search_model=search_model,
        scale_levels=scale_levels,
    )
    if problems:
        raise InvalidInput(problems)
    evaluation = Evaluation.objects.create(
        team=team,
        name=name.strip(),
        description=description,
        scale=scale,
        scale_levels=dict(scale_levels) if scale_levels is not None else None,
        strategy=strategy,
        profile=profile,
        transformers=dict(transformers or {}),
        show_position=show_position,
        scoring_guidelines=scoring_guidelines,
        reuse=reuse,
        auto_restart=auto_restart,
        zero_without_results=zero_without_results,
        created_by=created_by,
        search_model=search_model,
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
    texts = list(texts)
    too_long = [
        f"keywords[{index}]: at most {KEYWORD_LIMIT} characters (got {len(raw.strip())})"
        for index, raw in enumerate(texts)
        if len(raw.strip()) > KEYWORD_LIMIT
    ]
    if too_long:
        raise InvalidInput(too_long)
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
    """Store results after the keyword's existing ones, each with its empty feedback slots.

    A document already among the keyword's results, or given twice, is refused, and so is
    an image that is not a picture's address (core.image_sources)."""
    _check_documents(keyword, documents)
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
    add_to_total_slots(evaluation_id=evaluation.id, added=len(snapshots) * evaluation.strategy)
    evaluation.refresh_from_db(fields=["total_slots", "progress"])
    return snapshots


def _check_documents(keyword: Keyword, documents: Sequence[Document]) -> None:
    problems: list[str] = []
    listed = dict.fromkeys(keyword.snapshots.values_list("doc_id", flat=True), "already")
    for number, doc in enumerate(documents):
        if doc.image and not is_image_source(doc.image):
            problems.append(f"documents[{number}].image: must be {IMAGE_RULE}")
        first = listed.setdefault(doc.doc_id, f"documents[{number}]")
        if first != f"documents[{number}]":
            where = "among the keyword's results" if first == "already" else f"given as {first}"
            problems.append(f"documents[{number}].doc_id: {doc.doc_id!r} is {where}")
    if problems:
        raise InvalidInput(problems)


@transaction.atomic
def add_to_total_slots(*, evaluation_id: int, added: int) -> None:
    """Count new slots into the evaluation's total and progress (under its row lock, as
    the pipeline moves the graded count under the same lock)."""
    if not added:
        return
    locked = Evaluation.objects.select_for_update().only("graded_slots", "total_slots")
    current = locked.get(id=evaluation_id)
    total = current.total_slots + added
    Evaluation.objects.filter(id=evaluation_id).update(
        total_slots=total, progress=engine.progress(current.graded_slots, total)
    )


def evaluation_start(*, evaluation: Evaluation) -> Evaluation:
    """Start (or resume) a pending evaluation.

    With a search model and keywords not yet run, the keywords run first on a worker
    (apps.evaluations.fetching), which then opens the evaluation; otherwise it opens now.
    """
    from .fetching import keywords_to_run
    from .tasks import fetch_evaluation

    if evaluation.search_model_id is not None and not evaluation.keywords.exists():
        raise InvalidState("add keywords before starting: the search model has none to run")
    if evaluation.search_model_id is not None and keywords_to_run(evaluation.id):
        with transaction.atomic():
            changed = Evaluation.objects.filter(
                id=evaluation.id, status=Status.PENDING, fetching=False
            ).update(fetching=True)
            if not changed:
                _refuse_start(evaluation.id)
            # With the broker down the start is saved all the same: the keywords run when
            # resume_stalled_fetches finds the evaluation fetching with no runner.
            queue_after_commit(fetch_evaluation, evaluation.id)
    elif not evaluation_open(evaluation=evaluation):
        _refuse_start(evaluation.id)
    evaluation.refresh_from_db()
    return evaluation


def _refuse_start(evaluation_id: int) -> None:
    current = Evaluation.objects.filter(id=evaluation_id).values("status", "fetching").first()
    if current is None:
        raise InvalidState("the evaluation no longer exists")
    if current["fetching"]:
        raise InvalidState("the evaluation is already starting: its keywords are running")
    raise InvalidState(f"only a pending evaluation can start; this one is {current['status']}")


def evaluation_open(*, evaluation: Evaluation, after_fetch: bool = False) -> bool:
    """Apply the reuse strategy and open a pending evaluation for grading.

    `after_fetch`: only if it is still fetching (a lead may have paused it meanwhile).
    Returns False when the evaluation was not in a state to open.
    """
    from apps.scoring.tasks import recompute_evaluation

    with transaction.atomic():
        ready = Evaluation.objects.select_for_update().filter(
            id=evaluation.id, status=Status.PENDING, fetching=after_fetch
        )
        current = ready.first()
        if current is None:
            return False
        reused = reuse_apply(evaluation=current)
        Evaluation.objects.filter(id=evaluation.id).update(
            status=Status.ACTIVE,
            fetching=False,
            fetch_lease_until=None,
            started_at=Coalesce(F("started_at"), Value(timezone.now())),
        )
        if reused:
            # reuse_apply marked the keywords it graded, in this transaction, so with the
            # broker down the sweep recomputes them.
            queue_after_commit(recompute_evaluation, evaluation.id)
    return True


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
    """A pending copy with the same settings and keywords, and no grades.

    With a search model the copy's keywords will run again when it starts (fresh
    results); without one, the results are copied.
    """
    copy = evaluation_create(
        team=evaluation.team,
        name=name or next_name(evaluation.name),
        metrics=list(evaluation.metrics.values_list("metric", "k")),
        scale=evaluation.scale,
        scale_levels=evaluation.scale_levels,
        strategy=evaluation.strategy,
        profile=evaluation.profile,
        transformers=evaluation.transformers,
        description=evaluation.description,
        show_position=evaluation.show_position,
        scoring_guidelines=evaluation.scoring_guidelines,
        reuse=evaluation.reuse,
        auto_restart=evaluation.auto_restart,
        zero_without_results=evaluation.zero_without_results,
        tags=evaluation.tags.all(),
        created_by=evaluation.created_by,
        search_model=evaluation.search_model,
    )
    if evaluation.search_model_id is not None:
        keywords_add(
            evaluation=copy,
            texts=evaluation.keywords.order_by("position").values_list("text", flat=True),
        )
        return copy
    for keyword in evaluation.keywords.prefetch_related("snapshots"):
        [new_keyword] = keywords_add(evaluation=copy, texts=[keyword.text])
        snapshots_add(
            keyword=new_keyword,
            documents=[
                # image_source: an image stored before the rule is not copied on
                Document(s.doc_id, s.name, image_source(s.image), s.attributes)
                for s in keyword.snapshots.all()
            ],
        )
    copy.refresh_from_db()
    return copy


def evaluation_restart(*, evaluation_id: int) -> Evaluation:
    """Auto-restart: a copy with the name's trailing number incremented, started at once."""
    evaluation = Evaluation.objects.get(id=evaluation_id)
    return evaluation_start(evaluation=evaluation_clone(evaluation=evaluation))


def evaluation_stop(*, evaluation: Evaluation) -> Evaluation:
    """Pause: an active evaluation goes back to pending (grades are kept); one whose
    keywords are running stops running them (those already run are kept)."""
    active = Q(status=Status.ACTIVE)
    starting = Q(status=Status.PENDING, fetching=True)
    changed = Evaluation.objects.filter(active | starting, id=evaluation.id).update(
        status=Status.PENDING, fetching=False
    )
    if not changed:
        evaluation.refresh_from_db()
        raise InvalidState(
            f"only an active or starting evaluation can pause; this one is {evaluation.status}"
        )
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
    running = (
        Evaluation.objects.filter(Q(status=Status.ACTIVE) | Q(fetching=True), id=evaluation.id)
        .values_list("status", flat=True)
        .first()
    )
    if running is not None:
        raise InvalidState(
            "pause the evaluation before deleting it: it is "
            + ("active" if running == Status.ACTIVE else "running its keywords")
        )
    # A team whose baseline this was keeps no baseline (the foreign key sets null).
    evaluation.delete()


def evaluation_archive(*, evaluation: Evaluation, archived: bool = True) -> Evaluation:
    """Archive (hide from lists and the work pool) or bring back; not while active."""
    if archived and (evaluation.status == Status.ACTIVE or evaluation.fetching):
        raise InvalidState("pause or finish the evaluation before archiving it")
    Evaluation.objects.filter(id=evaluation.id).update(archived=archived)
    evaluation.refresh_from_db(fields=["archived"])
    return evaluation


def evaluation_pin(*, evaluation: Evaluation, pinned: bool = True) -> Evaluation:
    """Pin to (or unpin from) the team's dashboard."""
    Evaluation.objects.filter(id=evaluation.id).update(pinned=pinned)
    evaluation.refresh_from_db(fields=["pinned"])
    return evaluation


def team_set_baseline(*, team: Team, evaluation: Evaluation | None) -> None:
    """The evaluation others are compared against: a finished one of the team, or none."""
    if evaluation is not None:
        if evaluation.team_id != team.id:
            raise InvalidInput(["evaluation: not an evaluation of this team"])
        if evaluation.status != Status.FINISHED:
            raise InvalidState(
                f"only a finished evaluation can be the baseline; this one is {evaluation.status}"
            )
    Team.objects.filter(id=team.id).update(baseline_evaluation=evaluation)
    team.baseline_evaluation = evaluation


@transaction.atomic
def evaluation_create_with_keywords(
    *, team: Team, metrics: Sequence[tuple[str, int]], keywords: Iterable[str], **settings: Any
) -> Evaluation:
    """Create an evaluation and its keywords (trimmed, blanks and duplicates skipped)."""
    evaluation = evaluation_create(team=team, metrics=metrics, **settings)
    keywords_add(evaluation=evaluation, texts=keywords)
    return evaluation
