"""A keyword's page: its results with every slot's grade, who skipped each and why, its
value of each metric, and the slot a lead resets there."""

from collections import defaultdict
from dataclasses import dataclass

from apps import engine
from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot, SnapshotSkip
from apps.judging.sources import PROVENANCE_JOINS
from apps.scoring.models import KeywordMetric

from .coverage import Coverage, keyword_coverage
from .metric_columns import Column, keyword_columns


@dataclass(frozen=True)
class SnapshotRow:
    id: int
    position: int
    doc_id: str
    name: str
    value: float | None
    slots: list[FeedbackSlot]
    # Graders who said they could not judge it: (email, reason), oldest first.
    skips: list[tuple[str, str]]


def keyword_snapshots(keyword: Keyword, *, snapshot_id: int | None = None) -> list[SnapshotRow]:
    """Every result of a keyword (or one of them) with every slot's grade, grader and
    reason, in one query (an AI judge's grader identity with its judge: its name shows),
    and who skipped it and why, in a second."""
    slots = FeedbackSlot.objects.filter(keyword=keyword)
    if snapshot_id is not None:
        slots = slots.filter(snapshot_id=snapshot_id)
    skips = _skips_by_snapshot(keyword, snapshot_id)
    rows: dict[int, SnapshotRow] = {}
    for slot in slots.select_related("snapshot", "grader", *PROVENANCE_JOINS).order_by(
        "snapshot__position", "index"
    ):
        snapshot = slot.snapshot
        if snapshot.id not in rows:
            rows[snapshot.id] = SnapshotRow(
                snapshot.id,
                snapshot.position,
                snapshot.doc_id,
                snapshot.name,
                snapshot.value,
                [],
                skips.get(snapshot.id, []),
            )
        rows[snapshot.id].slots.append(slot)
    return list(rows.values())


def _skips_by_snapshot(
    keyword: Keyword, snapshot_id: int | None
) -> dict[int, list[tuple[str, str]]]:
    """Who skipped each of the keyword's results (or the one given) and why."""
    skipped = SnapshotSkip.objects.filter(snapshot__keyword=keyword)
    if snapshot_id is not None:
        skipped = skipped.filter(snapshot_id=snapshot_id)
    found: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for snapshot, email, reason in skipped.order_by("created_at", "id").values_list(
        "snapshot_id", "user__email", "reason"
    ):
        found[snapshot].append((email, reason))
    return found


def keyword_values(
    keyword: Keyword, snapshot_values: list[float | None] | None = None
) -> list[tuple[Column, float | None, Coverage | None]]:
    """The keyword's value of each of its evaluation's metrics with its coverage at the
    metric's cutoff (judged@k; none for the coverage measures themselves), read from
    ``snapshot_values`` (its results' stage-1 values in position order) when the caller
    has them; two queries, or three."""
    values = dict(
        ((metric, k), value)
        for metric, k, value in KeywordMetric.objects.filter(keyword=keyword).values_list(
            "metric", "k", "value"
        )
    )
    if snapshot_values is None:
        snapshot_values = list(
            Snapshot.objects.filter(keyword=keyword)
            .order_by("position")
            .values_list("value", flat=True)
        )
    return [
        (
            column,
            values.get((column.metric, column.k)),
            None
            if column.metric in engine.COVERAGE
            else keyword_coverage(column.k, snapshot_values),
        )
        for column in keyword_columns(keyword.evaluation)
    ]


def slot_in_team(*, slot_id: int, evaluation_id: int, team_id: int) -> FeedbackSlot | None:
    return (
        FeedbackSlot.objects.select_related("evaluation", "keyword")
        .filter(id=slot_id, evaluation_id=evaluation_id, evaluation__team_id=team_id)
        .first()
    )
