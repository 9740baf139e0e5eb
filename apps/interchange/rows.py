"""The rows an import stores, batch by batch: what the readers (JSON, TREC) produce and
the writers (writer.py, and pgcopy.py on PostgreSQL) store."""

from collections.abc import Iterator
from dataclasses import dataclass

from apps.judging.new_slots import Decision, NewSnapshot, SlotGrade, UnretrievedJudged
from apps.scoring.new_scores import ScoredKeyword

# SlotGrade: grade, grader user id, external grader name, reason, the content it was given
# on when not the result's own (a stale grade), what a file says gave it (SourceMark; all
# apps/judging/new_slots.py); Decision: a lead's decision (apps/judging/new_slots.py)
# position, doc_id, name, image, attributes as JSON text, one entry per slot index
# (None: an empty slot; the list may be shorter than the strategy), the lead's decision
SnapshotRow = tuple[int, str, str, str, str, list[SlotGrade | None], Decision | None]
# a judged document that is not among the keyword's results: doc_id, grade
UnretrievedRow = tuple[str, int]


@dataclass
class KeywordBatch:
    """One batch of keywords, scored, ready to store."""

    evaluation_id: int
    # per keyword: its position, text, snapshot rows in position order, slot grades padded
    # to the strategy, stage-1 values, metric values and graded slot count
    positions: list[int]
    texts: list[str]
    rows: list[list[SnapshotRow]]
    unretrieved: list[list[UnretrievedRow]]
    slots: list[list[list[SlotGrade | None]]]
    values: list[list[float | None]]
    metric_values: list[dict[tuple[str, int], float | None]]
    graded: list[int]

    @property
    def snapshot_count(self) -> int:
        return sum(len(rows) for rows in self.rows)


def new_snapshots(
    batch: KeywordBatch, keyword_ids: list[int], snapshot_ids: list[int]
) -> Iterator[NewSnapshot]:
    """The batch's snapshots with their slots' judgements, as judging writes them."""
    ids = iter(snapshot_ids)
    for keyword_id, keyword_position, rows, slots in zip(
        keyword_ids, batch.positions, batch.rows, batch.slots, strict=True
    ):
        for row, entries in zip(rows, slots, strict=True):
            yield keyword_id, keyword_position, next(ids), row[0], entries


def scored_keywords(batch: KeywordBatch, keyword_ids: list[int]) -> Iterator[ScoredKeyword]:
    return zip(keyword_ids, batch.metric_values, strict=True)


def snapshot_decisions(batch: KeywordBatch, snapshot_ids: list[int]) -> list[tuple[int, Decision]]:
    """(snapshot id, the lead's decision) for each decided snapshot of the batch."""
    rows = (row for rows in batch.rows for row in rows)
    return [
        (snapshot_id, row[6])
        for snapshot_id, row in zip(snapshot_ids, rows, strict=True)
        if row[6] is not None
    ]


def unretrieved_judged(batch: KeywordBatch, keyword_ids: list[int]) -> Iterator[UnretrievedJudged]:
    for keyword_id, judged in zip(keyword_ids, batch.unretrieved, strict=True):
        for doc_id, grade in judged:
            yield keyword_id, doc_id, grade
