"""Panels: a judge made of two to five judges, ideally of different model families.

Each member grades every result the panel is asked about, at once, and the panel's
rule makes their grades one (combining.py); the members' calls are logged and paid for
one by one, at their own prices and under their own providers' rate limits. A panel has
no model, address or key of its own: what names it in grades, the cache and the team's
calibration rule is `model_name`, its rule and its members' models, kept up to date here
whenever either changes. The fitted rule's weights come from a calibration of the panel
on a gold set (panel_fit_weights).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState
from apps.core.typed import parse_id

from .combining import RULES, fit_weights
from .models import CalibrationRun, CalibrationStatus, Judge, PanelRule, PanelSeat
from .prompts import team_prompt
from .services import grader_identity, save_with_unique_judge_name
from .validation import judge_values

MEMBERS_MIN, MEMBERS_MAX = 2, 5
# What a panel takes of a judge's settings; the rest (model, address, key, prices) are
# its members'.
PANEL_FIELDS = frozenset(
    {
        "name",
        "prompt",
        "results_per_call",
        "calls_at_once",
        "budget_calls",
        "budget_tokens",
        "budget_cost",
    }
)
# Gold items with every member's grade a fit needs at least: fewer leave the weights
# to chance.
FIT_ITEMS_MIN = 20


@transaction.atomic
def panel_create(
    *,
    team: Team,
    members: Any,
    rule: Any,
    created_by: User | None = None,
    **given: Any,
) -> Judge:
    """A panel of the team's judges `members` (ids, in order) with `rule`; its other
    settings as a judge's (PANEL_FIELDS); every problem at once."""
    problems: list[str] = []
    chosen = _members(team.id, members, problems, panel_id=None)
    checked_rule = _rule(rule, problems)
    values = _panel_values(team.id, given, problems, creating=True)
    if problems:
        raise InvalidInput(problems)
    panel = Judge(team=team, created_by=created_by, panel_rule=checked_rule, **values)
    panel.user = grader_identity(panel.name)
    panel.describe_panel(chosen)
    save_with_unique_judge_name(panel)
    _seat(panel, chosen)
    return panel


@transaction.atomic
def panel_update(*, panel: Judge, members: Any = None, rule: Any = None, **given: Any) -> Judge:
    """Change what is given. New members forget the fitted weights (they weigh those
    members); a change of rule keeps them, for a return to the fitted rule."""
    if not panel.is_panel:
        raise InvalidState(f"{panel.name} is not a panel", field="judge")
    problems: list[str] = []
    chosen = None if members is None else _members(panel.team_id, members, problems, panel.id)
    checked_rule = None if rule in (None, "") else _rule(rule, problems)
    values = _panel_values(panel.team_id, given, problems, creating=False)
    if problems:
        raise InvalidInput(problems)
    for name, value in values.items():
        setattr(panel, name, value)
    current = [member.id for member in panel.members()]
    if chosen is not None and [member.id for member in chosen] != current:
        panel.seats.all().delete()
        _seat(panel, chosen)
        panel.panel_fit = None
    if checked_rule is not None and checked_rule != panel.panel_rule:
        panel.panel_rule = checked_rule
    panel.forget_members()
    panel.describe_panel(panel.members())
    save_with_unique_judge_name(panel)
    User.objects.filter(id=panel.user_id).update(first_name=panel.name[:150])
    return panel


def _seat(panel: Judge, members: list[Judge]) -> None:
    PanelSeat.objects.bulk_create(
        PanelSeat(panel=panel, member=member, position=position)
        for position, member in enumerate(members)
    )


def _members(team_id: int, given: Any, problems: list[str], panel_id: int | None) -> list[Judge]:
    if not isinstance(given, list | tuple):
        problems.append("members: a list of the team's judges' ids")
        return []
    if not MEMBERS_MIN <= len(given) <= MEMBERS_MAX:
        problems.append(f"members: from {MEMBERS_MIN} to {MEMBERS_MAX} judges, got {len(given)}")
        return []
    ids = [parse_id(value) for value in given]
    found = {judge.id: judge for judge in Judge.objects.filter(team_id=team_id, id__in=ids)}
    chosen: list[Judge] = []
    for value, judge_id in zip(given, ids, strict=True):
        judge = found.get(judge_id) if judge_id else None
        if judge is None:
            problems.append(f"members: the team has no judge {str(value)[:40]!r}")
        elif judge.is_panel or judge.id == panel_id:
            problems.append(f"members: {judge.name} is a panel; a member is a judge of one model")
        elif judge in chosen:
            problems.append(f"members: {judge.name} is given twice")
        else:
            chosen.append(judge)
    return chosen


def _rule(value: Any, problems: list[str]) -> str:
    if value not in RULES:
        problems.append(f"rule: one of {', '.join(RULES)}")
        return PanelRule.MEDIAN
    return str(value)


def _panel_values(
    team_id: int, given: dict[str, Any], problems: list[str], *, creating: bool
) -> dict[str, Any]:
    unknown = sorted(set(given) - PANEL_FIELDS)
    problems.extend(
        f"{name}: not a setting of a panel (a panel's members have their own)" for name in unknown
    )
    if creating and given.get("name") in (None, ""):
        problems.append("name: required")
    known = {name: value for name, value in given.items() if name in PANEL_FIELDS - {"prompt"}}
    values: dict[str, Any] = {}
    try:
        values = judge_values(known, creating=False)
    except InvalidInput as error:
        problems.extend(error.problems)
    if "prompt" in given:
        chosen = given["prompt"]
        try:
            values["prompt"] = None if chosen in (None, "") else team_prompt(team_id, chosen)
        except InvalidInput as error:
            problems.extend(error.problems)
    return values


# --- Fitting the weights ----------------------------------------------------------------


@transaction.atomic
def panel_fit_weights(*, panel: Judge, calibration: Any) -> Judge:
    """Fit the panel's weights on its finished calibration `calibration` (an id of the
    panel's): the members' grades of the gold items against the mean of people's
    grades (combining.fit_weights). The fitted rule uses them from then on."""
    if not panel.is_panel:
        raise InvalidState(f"{panel.name} is not a panel", field="judge")
    calibration_id = parse_id(calibration)
    run = (
        CalibrationRun.objects.filter(id=calibration_id, judge=panel).first()
        if calibration_id
        else None
    )
    if run is None:
        raise InvalidInput([f"calibration: the panel has no calibration {str(calibration)[:40]!r}"])
    if run.status != CalibrationStatus.FINISHED:
        raise InvalidState("The calibration has not finished yet.", field="calibration")
    members = panel.members()
    rows, targets = _fit_data(run, members)
    if len(rows) < FIT_ITEMS_MIN:
        raise InvalidState(
            f"{len(rows)} gold items of the calibration have every member's grade and "
            f"people's; fitting weights needs at least {FIT_ITEMS_MIN}.",
            field="calibration",
        )
    fit = fit_weights(rows, targets)
    panel.panel_fit = {
        "weights": {str(m.id): round(w, 6) for m, w in zip(members, fit.weights, strict=True)},
        "gold_set": run.gold_set_id,
        "calibration": run.id,
        "items": fit.items,
        "squared_error": round(fit.squared_error, 6),
        "fitted_at": timezone.now().isoformat(),
    }
    panel.describe_panel(members)
    panel.save(update_fields=["panel_fit", "model_name", "updated_at"])
    return panel


def _fit_data(run: CalibrationRun, members: list[Judge]) -> tuple[list[list[float]], list[float]]:
    """Per gold item every member graded and people graded: the members' grades (in
    their order) and the mean of people's."""
    rows: list[list[float]] = []
    targets: list[float] = []
    for grade in run.grades.select_related("item"):
        by_member = {
            vote.get("judge"): vote.get("grade") for vote in (grade.votes or []) if "judge" in vote
        }
        people = [g for g in grade.item.people_grades if isinstance(g, int | float)]
        member_grades = [by_member.get(member.id) for member in members]
        if not people or any(not isinstance(g, int) for g in member_grades):
            continue
        rows.append([float(g) for g in member_grades if isinstance(g, int)])
        targets.append(sum(people) / len(people))
    return rows, targets


def fitted_weights_shown(panel: Judge) -> list[tuple[Judge, float]]:
    """The fitted weights by member, for the panel's page ([] before a fit)."""
    weights = (panel.panel_fit or {}).get("weights") or {}
    return [(m, float(weights[str(m.id)])) for m in panel.members() if str(m.id) in weights]
