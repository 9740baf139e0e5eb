"""Judgements from clicks: a click model fitted to a behaviour log, its estimates that
rest on enough impressions turned into grades on a scale, kept in the team's library as
a judgement list whose source says they are clicks ("clicks: PBM, 2026-10-01 to
2026-10-31"). They are never counted as people's: the library ranks them last, after AI
judges; reuse never copies them; an evaluation is graded with them only when a lead asks
(grading.py), under the team's calibration rule.

The thresholds are the lead's, or fitted against people's grades on the pairs both have
(the library's grade resting on people: apps/engine/click_grades.py says how)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps import engine
from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput
from apps.engine import click_grades, clicks
from apps.evaluations.models import PEOPLE_SOURCES, FeedbackSlot, Scale, people_q
from apps.evaluations.scales import scale_of
from apps.judging.sources import clicks_source
from apps.library.entries import PEOPLE
from apps.library.grades import library_grades
from apps.library.models import JudgementList, ListedJudgement

from .fitting import ClickModel, log_fitted
from .models import ClickJudgementSet, ClickLog

BATCH = 5_000
MAX_MIN_IMPRESSIONS = 1_000_000
MAX_NAME = 200
# Scales a click model grades on: a custom scale's levels belong to its evaluation.
SCALES = [scale for scale in Scale.values if scale != Scale.CUSTOM]
SCALE_CHOICES = [(scale, Scale(scale).label) for scale in SCALES]


@dataclass(frozen=True)
class Settings:
    """What a lead asks for, checked."""

    model: str
    scale: engine.Scale
    min_impressions: int
    thresholds: tuple[float, ...] | None  # None: fit them against people's grades


def click_judgements_make(
    *,
    team: Team,
    user: User | None,
    log: ClickLog,
    model: Any,
    scale: Any,
    min_impressions: Any = clicks.MIN_IMPRESSIONS,
    thresholds: Any = None,
    name: Any = None,
) -> ClickJudgementSet:
    """Fit `model` to the log and keep its judgements in the library, here and now (see
    the module's docstring; pages and the API ask a worker: click_jobs.py).
    InvalidInput names each field that is wrong, or why fitting failed."""
    asked, list_name = click_settings_checked(
        team=team,
        log=log,
        model=model,
        scale=scale,
        min_impressions=min_impressions,
        thresholds=thresholds,
        name=name,
    )
    return judgements_made(team=team, user=user, log=log, asked=asked, name=list_name)


def click_settings_checked(
    *,
    team: Team,
    log: ClickLog,
    model: Any,
    scale: Any,
    min_impressions: Any,
    thresholds: Any,
    name: Any,
) -> tuple[Settings, str]:
    """The settings and the list's name, checked without fitting anything: InvalidInput
    names each field that is wrong."""
    asked = _settings(model, scale, min_impressions, thresholds)
    return asked, _name(team, name, _source_name(log, asked.model))


def settings_of(stored: dict[str, Any]) -> Settings:
    """Settings kept as settings_stored() wrote them, read back (and checked again)."""
    return _settings(
        stored["model"], stored["scale"], stored["min_impressions"], stored["thresholds"]
    )


def settings_stored(asked: Settings) -> dict[str, Any]:
    """The settings as JSON, for settings_of() to read back."""
    return {
        "model": asked.model,
        "scale": asked.scale.name,
        "min_impressions": asked.min_impressions,
        "thresholds": None if asked.thresholds is None else list(asked.thresholds),
    }


def judgements_made(
    *,
    team: Team,
    user: User | None,
    log: ClickLog,
    asked: Settings,
    name: str,
    on_stored: Callable[[ClickJudgementSet], None] | None = None,
) -> ClickJudgementSet:
    """Fit the model to the log and store its judgements as the list `name`. `on_stored`
    runs inside the storing transaction (a job records itself done there, so a job's list
    and its end are kept together or not at all; raising there keeps nothing).
    InvalidInput says why nothing was made."""
    try:
        fitted = log_fitted(log, asked.model, minimum=asked.min_impressions)
    except engine.EngineError as error:
        raise InvalidInput([f"model: {error}"]) from None
    kept = fitted.estimates
    if not kept:
        raise InvalidInput(
            [
                f"min_impressions: no document of the log was shown {asked.min_impressions} "
                "times or more for one query"
            ]
        )
    fitted_on, fitted_agreement = 0, None
    cuts = asked.thresholds
    if cuts is None:
        people = people_grades(team.id, kept, asked.scale)
        try:
            cuts = click_grades.fitted_thresholds(kept, people, len(asked.scale.grades))
        except engine.EngineError as error:
            raise InvalidInput([f"thresholds: {error}; set them by hand"]) from None
        fitted_on = len(kept.keys() & people.keys())
        fitted_agreement = click_grades.agreement(
            click_grades.grades_by_thresholds(kept, cuts), people
        )
    levels = click_grades.grades_by_thresholds(kept, cuts)
    grades = {pair: asked.scale.grades[level] for pair, level in levels.items()}
    try:
        with transaction.atomic():
            made = _stored(
                team,
                user,
                log,
                asked,
                name,
                cuts,
                grades,
                fitted=(fitted_on, fitted_agreement),
                counts=(fitted.pairs, fitted.pairs - len(kept)),
            )
            if on_stored is not None:
                on_stored(made)
            return made
    except IntegrityError:  # the same name, made a moment ago
        raise InvalidInput([f"name: the library already has a list named {name}"]) from None


def _settings(model: Any, scale: Any, min_impressions: Any, thresholds: Any) -> Settings:
    problems = []
    if model not in ClickModel.values:
        problems.append(f"model: one of {', '.join(ClickModel.values)}")
    if scale not in SCALES:
        problems.append(f"scale: one of {', '.join(SCALES)}")
    minimum = _whole(min_impressions)
    if minimum is None or not 1 <= minimum <= MAX_MIN_IMPRESSIONS:
        problems.append(f"min_impressions: a whole number from 1 to {MAX_MIN_IMPRESSIONS:,}")
    cuts = None
    if scale in SCALES and thresholds not in (None, "", []):
        cuts = _thresholds(thresholds, len(scale_of(scale, None).grades) - 1, problems)
    if problems:
        raise InvalidInput(problems)
    return Settings(model, scale_of(scale, None), int(minimum or 0), cuts)


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        return int(value.strip())
    return None


def _thresholds(value: Any, wanted: int, problems: list[str]) -> tuple[float, ...] | None:
    """The lead's thresholds: `wanted` ascending numbers from 0 (a list, or a text of
    numbers separated by commas or spaces)."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    told = f"thresholds: {wanted} ascending numbers from 0, one per grade above the lowest"
    if not isinstance(value, list | tuple) or len(value) != wanted:
        problems.append(told)
        return None
    cuts = []
    for number in value:
        try:
            cut = float(number)
        except (TypeError, ValueError):
            problems.append(told)
            return None
        if isinstance(number, bool) or not math.isfinite(cut) or cut < 0:
            problems.append(told)
            return None
        cuts.append(cut)
    if cuts != sorted(cuts):
        problems.append(told)
        return None
    return tuple(cuts)


def _source_name(log: ClickLog, model: str) -> str:
    """ "clicks: PBM, 2026-10-01 to 2026-10-31" (the log's name when its dates are not
    known)."""
    first, last = log.first_event_at[:10], log.last_event_at[:10]
    covered = (first if first == last else f"{first} to {last}") if first and last else log.name
    return f"clicks: {ClickModel(model).label}, {covered}"[:MAX_NAME]


def _name(team: Team, name: Any, default: str) -> str:
    if name in (None, ""):
        name = default
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or "\x00" in name:
        raise InvalidInput([f"name: a text of 1 to {MAX_NAME} characters"])
    name = name.strip()
    if JudgementList.objects.filter(team=team, name=name).exists():
        raise InvalidInput(
            [f"name: the library already has a list named {name}; give this one another name"]
        )
    return name


def people_grades(team_id: int, estimates: clicks.Estimates, scale: engine.Scale) -> dict:
    """The library's grade resting on people, as a level from 0, for each pair of
    `estimates` whose query people judged on `scale`."""
    judged = _texts_people_judged(team_id, scale.name, {query for query, _ in estimates})
    pairs = [pair for pair in estimates if pair[0] in judged]
    found = library_grades(team_id=team_id, pairs=pairs, scale=scale.name)
    index = {grade: level for level, grade in enumerate(scale.grades)}
    return {
        pair: index[grade.grade]
        for pair, grade in found.items()
        if grade.basis == PEOPLE and grade.grade in index
    }


def _texts_people_judged(team_id: int, scale: str, texts: set[str]) -> set[str]:
    in_evaluations = FeedbackSlot.objects.filter(
        people_q(),
        evaluation__team_id=team_id,
        evaluation__scale=scale,
        grade__isnull=False,
    ).values_list("keyword__text", flat=True)
    in_lists = ListedJudgement.objects.filter(
        team_id=team_id,
        judgement_list__source__kind__in=PEOPLE_SOURCES,
        judgement_list__scale=scale,
    ).values_list("query", flat=True)
    return texts & (set(in_evaluations.distinct()) | set(in_lists.distinct()))


def _stored(
    team: Team,
    user: User | None,
    log: ClickLog,
    asked: Settings,
    name: str,
    cuts: tuple[float, ...],
    grades: dict[clicks.Pair, int],
    *,
    fitted: tuple[int, float | None],
    counts: tuple[int, int],
) -> ClickJudgementSet:
    source_name = _source_name(log, asked.model)
    digest = hashlib.sha256(
        repr((log.id, asked.model, asked.min_impressions, cuts, asked.scale.name)).encode()
    ).hexdigest()[:12]
    judgement_list = JudgementList.objects.create(
        team=team,
        name=name,
        file_format="clicks",
        scale=asked.scale.name,
        source_id=clicks_source(
            team_id=team.id,
            name=source_name,
            model=ClickModel(asked.model).label,
            settings=f"settings {digest}",
        ),
        imported_by=user,
        imported_at=timezone.now(),
        judgement_count=len(grades),
    )
    ListedJudgement.objects.bulk_create(
        (
            ListedJudgement(
                judgement_list=judgement_list, team_id=team.id, query=q, doc_id=d, grade=g
            )
            for (q, d), g in grades.items()
        ),
        batch_size=BATCH,
    )
    return ClickJudgementSet.objects.create(
        team=team,
        judgement_list=judgement_list,
        log=log,
        log_name=log.name,
        model=asked.model,
        min_impressions=asked.min_impressions,
        thresholds=[cut if math.isfinite(cut) else None for cut in cuts],
        fitted_on=fitted[0],
        fitted_agreement=fitted[1],
        estimated=counts[0],
        too_thin=counts[1],
        created_by=user,
    )


def thresholds_text(judgements: ClickJudgementSet) -> str:
    """ "0.12, 0.31, never" (a grade no estimate reaches: never)."""
    return ", ".join("never" if cut is None else f"{cut:.4g}" for cut in judgements.thresholds)
