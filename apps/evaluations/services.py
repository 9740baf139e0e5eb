"""Building an evaluation: create it with its settings, add keywords and results.

What happens to it afterwards (start, pause, finish, clone...) is lifecycle.py's.
"""

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Lower

from apps import engine
from apps.accounts.models import Tag, Team
from apps.core.errors import InvalidInput
from apps.core.image_sources import RULE as IMAGE_RULE
from apps.core.image_sources import is_image_source

from .metric_list import metric_names_folded, metric_text
from .models import (
    NAME_ONCE_PER_TEAM,
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Profile,
    Reuse,
    Scale,
    Snapshot,
)
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


class NameTaken(InvalidInput):
    """The team already has an evaluation of this name (whatever its case)."""

    def __init__(self, name: str) -> None:
        taken = f"An evaluation named '{name.strip()}' already exists in this team"
        super().__init__([f"name: {taken}"])


def name_taken(*, team_id: int, name: str, other_than: int | None = None) -> bool:
    """Whether another evaluation of the team has this name, trimmed, in any case.

    Compared with the database's own lower() (as the unique index folds it), so this
    check and the index agree on every database."""
    same = Evaluation.objects.alias(folded=Lower("name")).filter(
        team_id=team_id, folded=Lower(Value(name.strip()))
    )
    if other_than is not None:
        same = same.exclude(id=other_than)
    return same.exists()


def taken_name_problems(
    *, team_id: int, name: str, problems: list[str], other_than: int | None = None
) -> list[str]:
    """NameTaken's problem when the team has the name; none when `problems` already says
    what is wrong with the name (required, too long)."""
    if any(problem.startswith("name:") for problem in problems):
        return []
    if name_taken(team_id=team_id, name=name, other_than=other_than):
        return NameTaken(name).problems
    return []


@contextmanager
def name_guard(name: str) -> Iterator[None]:
    """Write inside a savepoint; a name another request took meanwhile (the unique index
    refuses it) is reported as NameTaken, not as a database error."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as error:
        if NAME_ONCE_PER_TEAM not in str(error):
            raise
        raise NameTaken(name) from None


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
    reuse_judges: bool = False,
    auto_restart: bool = False,
    zero_without_results: bool = False,
    tags: Iterable[Tag] = (),
    created_by: Any = None,
    search_model: Any = None,
) -> Evaluation:
    """A pending evaluation; `search_model` (a SearchModel) when its results will come
    from the team's search system. `reuse_judges`: reuse may copy AI judges' grades too
    (those meeting the team's calibration rule), not people's alone."""
    tags = list(tags)
    metrics = metric_names_folded(metrics)
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
    taken = taken_name_problems(team_id=team.id, name=name, problems=problems)
    if taken and not problems:
        raise NameTaken(name)
    if problems:
        # Every problem at once (an import lists them all), the taken name among them.
        raise InvalidInput(problems + taken)
    with name_guard(name):
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
            reuse_judges=bool(reuse_judges),
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


@transaction.atomic
def evaluation_create_with_keywords(
    *, team: Team, metrics: Sequence[tuple[str, int]], keywords: Iterable[str], **settings: Any
) -> Evaluation:
    """Create an evaluation and its keywords (trimmed, blanks and duplicates skipped)."""
    evaluation = evaluation_create(team=team, metrics=metrics, **settings)
    keywords_add(evaluation=evaluation, texts=keywords)
    return evaluation
