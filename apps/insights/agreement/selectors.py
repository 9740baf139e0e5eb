"""Reads for the agreement page, the disagreement queue and the agreement API."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from django.core.paginator import Page, Paginator
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    Exists,
    F,
    Max,
    Min,
    OuterRef,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from apps import engine
from apps.accounts.models import User
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Snapshot
from apps.judging.models import SnapshotDecision

from .disagreement import MIN_SPREAD, disagreeing_items, disagreement_kind
from .report import AgreementReport, Ratings, agreement_report

SNAPSHOTS_PER_PAGE = 25


# --- Agreement ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GraderRow:
    name: str
    imported: bool  # an external grader from an import, not a member
    graded: int
    compared: int
    agreeing: int
    agreement: float | None
    mean_distance: float | None


@dataclass(frozen=True)
class Agreement:
    report: AgreementReport
    graders: list[GraderRow]
    open_disagreements: int
    decisions: int


@dataclass(frozen=True)
class EvaluationRatings:
    """The graded slots of an evaluation as code arrays (``ratings``), with what the codes
    stand for: ``snapshot_ids[item code]`` and ``graders[grader code]`` = (user id, None)
    for a member or (None, name) for an imported grader."""

    ratings: Ratings
    snapshot_ids: np.ndarray
    graders: list[tuple[int | None, str | None]]


# A grader code for grades by an imported grader whose name first appeared between the
# two reads below (a concurrent import): counted, under this label, not lost.
LATE_GRADER = 0


def evaluation_ratings(evaluation: Evaluation) -> EvaluationRatings:
    """Every graded slot of the evaluation, read as integers only: imported graders' names
    are read first (few) and replaced by numbers in the big query, so Python never
    handles a string per slot. (Written in SQL, it was 1.4 times as fast at 60,000
    slots: not enough on a lead's page to keep hand-written SQL; bench/raw_sql_bench.py.)"""
    graded = FeedbackSlot.objects.filter(evaluation_id=evaluation.id, grade__isnull=False)
    graded = graded.order_by()
    names = sorted(
        graded.filter(grader__isnull=True).values_list("external_grader", flat=True).distinct()
    )
    # Members keep their (positive) user id; imported graders get -1, -2, ...
    grader_key = Coalesce(
        "grader_id",
        Case(
            *(When(external_grader=name, then=Value(-code)) for code, name in enumerate(names, 1)),
            default=Value(LATE_GRADER),
        ),
        output_field=BigIntegerField(),
    )
    rows = list(graded.values_list("snapshot_id", grader_key, "grade"))
    columns = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=3 * len(rows))
    snapshot_ids, grader_keys, grades = columns.reshape(len(rows), 3).T
    snapshot_ids, item_codes = np.unique(snapshot_ids, return_inverse=True)
    keys, grader_codes = np.unique(grader_keys, return_inverse=True)
    graders: list[tuple[int | None, str | None]] = [
        (int(key), None) if key > 0 else (None, names[-key - 1] if key else None)
        for key in keys.tolist()
    ]
    return EvaluationRatings(Ratings(item_codes, grader_codes, grades), snapshot_ids, graders)


def evaluation_agreement(evaluation: Evaluation) -> Agreement:
    """The agreement report with named graders and the queue's counts, in three or four
    queries and no pass over the slots but the one read."""
    read = evaluation_ratings(evaluation)
    report = agreement_report(
        read.ratings, scale=evaluation.grading_scale, ratings_per_item=evaluation.strategy
    )
    user_ids = [user for user, _name in read.graders if user is not None]
    # An AI judge grades as a user of its own: it is named as the lead named it.
    names = {
        user: f"{judge} (AI judge)" if judge else email
        for user, email, judge in User.objects.filter(id__in=user_ids).values_list(
            "id", "email", "ai_judge__name"
        )
    }

    def name_of(code: int) -> str:
        user, external = read.graders[code]
        if user is not None:
            return names.get(user, "a removed member")
        return external if external is not None else "a grader imported just now"

    rows = [
        GraderRow(
            name=name_of(entry.grader),
            imported=read.graders[entry.grader][0] is None,
            graded=entry.graded,
            compared=entry.compared,
            agreeing=entry.agreeing,
            agreement=entry.agreement,
            mean_distance=entry.mean_distance,
        )
        for entry in report.per_grader
    ]
    # Least agreement first: the graders a lead may want to talk to.
    rows.sort(key=lambda row: (row.agreement is None, row.agreement or 0.0, row.name))
    decided = np.fromiter(
        SnapshotDecision.objects.filter(evaluation_id=evaluation.id).values_list(
            "snapshot_id", flat=True
        ),
        dtype=np.int64,
    )
    disagreeing = disagreeing_items(
        read.ratings.items, read.ratings.grades, binary=evaluation.scale == "binary"
    )
    open_disagreements = disagreeing & ~np.isin(read.snapshot_ids, decided)
    return Agreement(
        report=report,
        graders=rows,
        open_disagreements=int(open_disagreements.sum()),
        decisions=len(decided),
    )


# --- The disagreement queue ---------------------------------------------------------------


def disagreements(evaluation: Evaluation, *, undecided_only: bool = True) -> QuerySet[Any]:
    """Snapshot ids whose graded slots disagree (disagreement.py's rule, in SQL), in
    keyword and position order, one GROUP BY over the evaluation's graded slots."""
    graded = FeedbackSlot.objects.filter(evaluation_id=evaluation.id, grade__isnull=False)
    if undecided_only:
        graded = graded.filter(
            ~Exists(SnapshotDecision.objects.filter(snapshot_id=OuterRef("snapshot_id")))
        )
    grouped = graded.values("snapshot_id").annotate(
        grades=Count("id"),
        keyword_order=Min("keyword__position"),
        position=Min("snapshot_position"),
    )
    if evaluation.scale == "binary":
        grouped = grouped.annotate(twice_ones=Sum("grade") * 2).filter(twice_ones=F("grades"))
    else:
        grouped = grouped.annotate(spread=Max("grade") - Min("grade")).filter(
            spread__gte=MIN_SPREAD
        )
    return grouped.filter(grades__gte=2).order_by("keyword_order", "position", "snapshot_id")


def open_disagreement_count(evaluation: Evaluation) -> int:
    return disagreements(evaluation).count()


@dataclass(frozen=True)
class QueueRow:
    snapshot: Snapshot
    slots: list[FeedbackSlot]
    decision: SnapshotDecision | None
    kind: str | None  # disagreement.TIE, SPREAD, or None when it no longer disagrees

    @property
    def open_slots(self) -> int:
        return sum(slot.grade is None for slot in self.slots)

    @property
    def information_need(self) -> str:
        """What the keyword's searcher wants, as graders read it ('' when not set)."""
        notes = getattr(self.snapshot.keyword, "notes", None)  # a keyword may have none
        return notes.information_need if notes else ""

    @property
    def attributes(self) -> list[tuple[str, object]]:
        """The result's fields beside its name, by name, as the grading card shows them."""
        return sorted((self.snapshot.attributes or {}).items())


SHOW_CHOICES = ("open", "settled")


def disagreement_page(
    evaluation: Evaluation, *, show: str = "open", page_number: Any = 1
) -> tuple[Page, list[QueueRow]]:
    """One page of the queue: open disagreements, or the snapshots a lead has settled."""
    if show == "settled":
        ordered: QuerySet[Any] = (
            SnapshotDecision.objects.filter(evaluation_id=evaluation.id)
            .order_by("snapshot__keyword__position", "snapshot__position")
            .values_list("snapshot_id", flat=True)
        )
        page = Paginator(ordered, SNAPSHOTS_PER_PAGE).get_page(page_number)
    else:
        # Read once and paged in memory (a few bytes a row): the grouping over every
        # graded slot is the costly part, and paging the query would run it twice.
        ids = list(disagreements(evaluation).values_list("snapshot_id", flat=True))
        page = Paginator(ids, SNAPSHOTS_PER_PAGE).get_page(page_number)
    return page, queue_rows(evaluation, list(page.object_list))


def queue_rows(evaluation: Evaluation, snapshot_ids: list[int]) -> list[QueueRow]:
    """The given snapshots with their keyword (and its information need), slots, graders
    and decision, in the given order, in two queries."""
    snapshots = {
        snapshot.id: snapshot
        for snapshot in Snapshot.objects.filter(
            id__in=snapshot_ids, keyword__evaluation_id=evaluation.id
        ).select_related("keyword__notes", "decision__decided_by")
    }
    slots: dict[int, list[FeedbackSlot]] = {snapshot_id: [] for snapshot_id in snapshots}
    for slot in (
        FeedbackSlot.objects.filter(snapshot_id__in=list(snapshots))
        .select_related("grader")
        .order_by("snapshot_id", "index")
    ):
        slots[slot.snapshot_id].append(slot)
    return [
        QueueRow(
            snapshot=snapshots[snapshot_id],
            slots=slots[snapshot_id],
            decision=getattr(snapshots[snapshot_id], "decision", None),
            kind=disagreement_kind([slot.grade for slot in slots[snapshot_id]], evaluation.scale),
        )
        for snapshot_id in snapshot_ids
        if snapshot_id in snapshots
    ]


@dataclass(frozen=True)
class MetricSummary:
    label: str
    metric: str
    k: int
    value: float | None


def metric_summary(evaluation: Evaluation) -> list[MetricSummary]:
    """The evaluation's metric means, to see a decision move them."""
    metrics = list(
        EvaluationMetric.objects.filter(evaluation_id=evaluation.id)
        .order_by("position", "id")
        .values_list("metric", "k", "value")
    )
    many = evaluation.keywords.count() > 1 if metrics else False
    return [
        MetricSummary(engine.metric_label(metric, k, many_keywords=many), metric, k, value)
        for metric, k, value in metrics
    ]
