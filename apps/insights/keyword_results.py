"""A keyword's page: its results with every slot's grade, its value of each metric, and
the slot a lead resets there."""

from dataclasses import dataclass

from apps.evaluations.models import FeedbackSlot, Keyword
from apps.scoring.models import KeywordMetric

from .metric_columns import Column, keyword_columns


@dataclass(frozen=True)
class SnapshotRow:
    id: int
    position: int
    doc_id: str
    name: str
    value: float | None
    slots: list[FeedbackSlot]


def keyword_snapshots(keyword: Keyword, *, snapshot_id: int | None = None) -> list[SnapshotRow]:
    """Every result of a keyword (or one of them) with every slot's grade, grader and
    reason, in one query (an AI judge's grader identity with its judge: its name shows)."""
    slots = FeedbackSlot.objects.filter(keyword=keyword)
    if snapshot_id is not None:
        slots = slots.filter(snapshot_id=snapshot_id)
    rows: dict[int, SnapshotRow] = {}
    for slot in slots.select_related("snapshot", "grader__ai_judge").order_by(
        "snapshot__position", "index"
    ):
        snapshot = slot.snapshot
        if snapshot.id not in rows:
            rows[snapshot.id] = SnapshotRow(
                snapshot.id, snapshot.position, snapshot.doc_id, snapshot.name, snapshot.value, []
            )
        rows[snapshot.id].slots.append(slot)
    return list(rows.values())


def keyword_values(keyword: Keyword) -> list[tuple[Column, float | None]]:
    """The keyword's value of each of its evaluation's metrics, in two queries."""
    values = dict(
        ((metric, k), value)
        for metric, k, value in KeywordMetric.objects.filter(keyword=keyword).values_list(
            "metric", "k", "value"
        )
    )
    return [
        (column, values.get((column.metric, column.k)))
        for column in keyword_columns(keyword.evaluation)
    ]


def slot_in_team(*, slot_id: int, evaluation_id: int, team_id: int) -> FeedbackSlot | None:
    return (
        FeedbackSlot.objects.select_related("evaluation", "keyword")
        .filter(id=slot_id, evaluation_id=evaluation_id, evaluation__team_id=team_id)
        .first()
    )
