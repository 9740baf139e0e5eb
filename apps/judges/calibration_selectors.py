"""What the API reads about a team's gold sets, calibrations and gate: querysets with
the counts their answers show. Every lookup is inside the team given."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import CalibrationGrade, CalibrationRun, GoldItem, GoldSet, JudgeGate


def _counted(related: QuerySet[Any], field: str, outer: str = "pk") -> Coalesce:
    """How many rows of `related` have `field` equal to the outer row's `outer`."""
    counted = (
        related.filter(**{field: OuterRef(outer)})
        .order_by()
        .values(field)
        .annotate(count=Count("id"))
        .values("count")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def team_gold_sets(team_id: int) -> QuerySet[GoldSet]:
    """Newest first, each with item_count, keyword_count and calibration_count."""
    return (
        GoldSet.objects.filter(team_id=team_id)
        .annotate(
            item_count=Count("items"),
            keyword_count=Count("items__keyword_index", distinct=True),
            calibration_count=_counted(CalibrationRun.objects.all(), "gold_set"),
        )
        .order_by("-created_at", "-id")
    )


def with_item_counts(runs: QuerySet[CalibrationRun]) -> QuerySet[CalibrationRun]:
    """The calibrations with their judge, gold set and item_count (its results to grade)."""
    return runs.select_related("judge", "judgement_list", "gold_set").annotate(
        item_count=_counted(GoldItem.objects.all(), "gold_set", outer="gold_set_id")
    )


def team_calibrations(
    team_id: int,
    *,
    gold_set: int | None = None,
    judge: int | None = None,
    status: str | None = None,
) -> QuerySet[CalibrationRun]:
    """Newest first, with item counts; only a gold set's, a judge's or of a status when
    given."""
    runs = CalibrationRun.objects.filter(gold_set__team_id=team_id)
    if gold_set is not None:
        runs = runs.filter(gold_set_id=gold_set)
    if judge is not None:
        runs = runs.filter(judge_id=judge)
    if status is not None:
        runs = runs.filter(status=status)
    return with_item_counts(runs).order_by("-created_at", "-id")


def gold_set_calibrations(gold_set: GoldSet) -> dict[int, CalibrationRun]:
    """Every calibration on the gold set by id, with item counts (its report's runs)."""
    runs = CalibrationRun.objects.filter(gold_set=gold_set)
    return {run.id: run for run in with_item_counts(runs)}


def gold_items(gold_set: GoldSet) -> QuerySet[GoldItem]:
    return GoldItem.objects.filter(gold_set=gold_set).order_by("keyword_index", "id")


def calibration_grades(gold_set: GoldSet, run_id: int) -> dict[int, dict[str, Any]] | None:
    """The grade a calibration on the gold set gave each item, by item id; None when
    the gold set has no calibration `run_id`."""
    run = CalibrationRun.objects.filter(gold_set=gold_set, id=run_id).first()
    if run is None:
        return None
    return {
        grade.item_id: {
            "grade": grade.grade,
            "reason": grade.reason,
            "failure": grade.failure,
            "cached": grade.cached,
        }
        for grade in CalibrationGrade.objects.filter(run=run)
    }


def calibration_failures(run: CalibrationRun) -> QuerySet[CalibrationGrade]:
    """What the calibration could not grade, in the gold set's order."""
    return (
        CalibrationGrade.objects.filter(run=run, grade__isnull=True)
        .select_related("item")
        .order_by("item__keyword_index", "item_id")
    )


def gate_min_alpha(team_id: int) -> float | None:
    """The team's gate: the alpha a judge must reach (None: no requirement)."""
    gate = JudgeGate.objects.filter(team_id=team_id).first()
    return gate.min_alpha if gate else None
