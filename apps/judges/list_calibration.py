"""Calibrating a judgement list of the library on a gold set, as a judge is calibrated:
the list's grade of each gold result (by its keyword's text and document) is measured
against people's exactly as a judge's grades are (calibration_figures.py), side by side
with the judges on the gold set's page. A click model's judgements are calibrated so,
and the team's rule (team_rule.list_refusal) then decides whether they may grade evaluations.

Nothing is asked of anyone: the calibration is made and finished at once. A result the
list has no grade for is listed as failed, with why."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.core.errors import InvalidInput, NotFound
from apps.library.entries import scale_key
from apps.library.models import JudgementList, ListedJudgement

from .calibration import gold_pairs, gold_scale
from .calibration_figures import judge_figures
from .models import CalibrationGrade, CalibrationRun, CalibrationStatus, GoldItem, GoldSet

NOT_IN_LIST = "the list has no grade for this result"


def list_calibration_make(
    *, gold_set: GoldSet, judgement_list: JudgementList, created_by: User | None = None
) -> CalibrationRun:
    """The list's calibration on the gold set, finished (see the module's docstring)."""
    if judgement_list.team_id != gold_set.team_id:
        raise NotFound("No such judgement list.")
    listed_on = scale_key(judgement_list.scale, judgement_list.scale_levels)
    gold_on = scale_key(gold_set.scale, gold_set.scale_levels)
    if listed_on != gold_on:
        raise InvalidInput(
            [
                f"judgement_list: its grades are on the {listed_on} scale, the gold set's "
                f"on the {gold_on} scale"
            ]
        )
    items = list(GoldItem.objects.filter(gold_set=gold_set).order_by("keyword_index", "id"))
    listed = dict(
        ((query, doc_id), grade)
        for query, doc_id, grade in ListedJudgement.objects.filter(
            judgement_list=judgement_list, query__in={item.keyword for item in items}
        ).values_list("query", "doc_id", "grade")
    )
    source = judgement_list.source
    with transaction.atomic():
        run = CalibrationRun.objects.create(
            gold_set=gold_set,
            judgement_list=judgement_list,
            model_name=source.model_name or source.get_kind_display(),
            prompt_version=source.prompt_version,
            status=CalibrationStatus.RUNNING,
            created_by=created_by,
            seen_at=timezone.now(),
        )
        grades = [
            CalibrationGrade(run=run, item=item, grade=listed[(item.keyword, item.doc_id)])
            if (item.keyword, item.doc_id) in listed
            else CalibrationGrade(run=run, item=item, failure=NOT_IN_LIST)
            for item in items
        ]
        CalibrationGrade.objects.bulk_create(grades)
        graded = sum(1 for grade in grades if grade.grade is not None)
        figures = judge_figures(gold_pairs(gold_set, run), gold_scale(gold_set), samples=0)
        CalibrationRun.objects.filter(id=run.id).update(
            status=CalibrationStatus.FINISHED,
            graded=graded,
            failed=len(grades) - graded,
            alpha=figures.alpha.value,
            finished_at=timezone.now(),
        )
    run.refresh_from_db()
    return run


def lists_to_calibrate(gold_set: GoldSet) -> QuerySet[JudgementList]:
    """The team's lists on the gold set's scale, newest first, with their sources."""
    lists = JudgementList.objects.filter(team_id=gold_set.team_id, scale=gold_set.scale)
    if gold_set.scale == "custom":
        lists = lists.filter(scale_levels=gold_set.scale_levels)
    return lists.select_related("source").order_by("-imported_at", "-id")
