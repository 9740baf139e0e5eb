"""The rows an import stores, batch by batch: what the readers (JSON, TREC) produce and
the writers (writer.py, and pgcopy.py on PostgreSQL) store."""

from dataclasses import dataclass
from datetime import datetime

# grade, grader user id, external grader name, reason
SlotGrade = tuple[int, int | None, str, str]
# a lead's decision: grade, the deciding user's id (None: not a member), reason
Decision = tuple[int, int | None, str]
# position, doc_id, name, image, attributes as JSON text, one entry per slot index
# (None: an empty slot; the list may be shorter than the strategy), the lead's decision
SnapshotRow = tuple[int, str, str, str, str, list[SlotGrade | None], Decision | None]
# a judged document that is not among the keyword's results: doc_id, grade
UnretrievedRow = tuple[str, int]


@dataclass
class KeywordBatch:
    """One batch of keywords, scored, ready to store."""

    evaluation_id: int
    strategy: int
    now: datetime
    metrics: list[tuple[str, int]]
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
