"""Reads for the agreement page, the disagreement queue and the agreement API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import Count, Exists, F, Max, Min, OuterRef, QuerySet, Sum

from apps.accounts.models import User
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Snapshot
from apps.insights.models import SnapshotDecision
from apps.scoring import engine

from .disagreement import MIN_SPREAD, disagreement_kind
from .report import AgreementReport, Ratings, agreement_report

SLOTS = FeedbackSlot._meta.db_table
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


def evaluation_ratings(evaluation: Evaluation) -> tuple[Ratings, list[tuple[int | None, str]]]:
    """Every graded slot of the evaluation in one query, as code arrays, and per grader
    code its (user id, external name). Plain SQL: the ORM's per-row cost dominates for
    hundreds of thousands of slots."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT snapshot_id, grader_id, external_grader, grade FROM {SLOTS} "
            "WHERE evaluation_id = %s AND grade IS NOT NULL",
            [evaluation.id],
        )
        rows = cursor.fetchall()
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Ratings(empty, empty, empty), []
    snapshot_ids, user_ids, external, grades = zip(*rows, strict=True)
    _ids, item_codes = np.unique(np.array(snapshot_ids, dtype=np.int64), return_inverse=True)
    # A member is known by their id; an imported grader without an account by name.
    keys = [
        (user, "" if user is not None else name)
        for user, name in zip(user_ids, external, strict=True)
    ]
    codes: dict[tuple[int | None, str], int] = {}
    grader_codes = np.fromiter(
        (codes.setdefault(key, len(codes)) for key in keys), dtype=np.int64, count=len(keys)
    )
    ratings = Ratings(item_codes, grader_codes, np.array(grades, dtype=np.int64))
    return ratings, list(codes)


def evaluation_agreement(evaluation: Evaluation) -> Agreement:
    ratings, graders = evaluation_ratings(evaluation)
    report = agreement_report(ratings, scale=evaluation.scale, ratings_per_item=evaluation.strategy)
    emails = dict(
        User.objects.filter(id__in=[user for user, _ in graders if user is not None]).values_list(
            "id", "email"
        )
    )

    def name_of(code: int) -> str:
        user, external = graders[code]
        if user is None:
            return external or "an unknown grader"
        return emails.get(user, "a removed member")

    rows = [
        GraderRow(
            name=name_of(entry.grader),
            imported=graders[entry.grader][0] is None,
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
    return Agreement(
        report=report,
        graders=rows,
        open_disagreements=open_disagreement_count(evaluation),
        decisions=SnapshotDecision.objects.filter(evaluation_id=evaluation.id).count(),
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
        keyword_order=Min("keyword_position"),
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
    else:
        ordered = disagreements(evaluation).values_list("snapshot_id", flat=True)
    page = Paginator(ordered, SNAPSHOTS_PER_PAGE).get_page(page_number)
    return page, queue_rows(evaluation, list(page.object_list))


def queue_rows(evaluation: Evaluation, snapshot_ids: list[int]) -> list[QueueRow]:
    """The given snapshots with their keyword, slots, graders and decision, in the given
    order, in two queries."""
    snapshots = {
        snapshot.id: snapshot
        for snapshot in Snapshot.objects.filter(
            id__in=snapshot_ids, keyword__evaluation_id=evaluation.id
        ).select_related("keyword", "decision__decided_by")
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
