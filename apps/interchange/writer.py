"""Write an imported evaluation's keywords, snapshots, slots and scores in batches.

Rows go in as snapshots_add and grading would leave them: every slot carries its copies
of the evaluation, keyword, keyword position and snapshot position; a graded slot has its
grader (a user, or an external grader's name), reason and graded_at, and every slot of a
snapshot with a grade is `snapshot_started`. A lead's decision is stored as the
disagreement queue stores one (apps.judging.models.SnapshotDecision), dated at the import.

Each batch is scored while its grades are in memory, with the engine's batch path
exactly as evaluation_recompute scores (EvaluationSettings.score_many), and stored as
evaluation_recompute stores a keyword that had nothing stored: snapshot values, one
KeywordMetric per (metric, k), the keyword's graded slot count, nothing left marked. At
the end the evaluation's counts and exact means (evaluation_means_reconcile). Reading
everything back to score it cost more than writing it at a million snapshots.

On PostgreSQL a batch is four COPYs (five with decisions; pgcopy.py) run on a writer
thread while the caller parses the next batch; elsewhere bulk_create. Memory holds two
batches.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from django.db import connection
from django.utils import timezone

from apps import engine
from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    Keyword,
    Snapshot,
    UnretrievedJudgement,
)
from apps.judging.models import SnapshotDecision
from apps.scoring.loading import SnapshotGrades, load_settings
from apps.scoring.models import KeywordMetric
from apps.scoring.services import evaluation_means_reconcile

from .pgcopy import Copier
from .rows import KeywordBatch, SnapshotRow, UnretrievedRow

BATCH_SNAPSHOTS = 20_000


class EvaluationWriter:
    """Buffers keywords in document order and stores them a batch at a time.

    Use as a context manager: leaving it (also on an error) waits for the writer thread.
    """

    def __init__(
        self,
        evaluation: Evaluation,
        *,
        progress: Callable[[int], None] | None = None,
        graders: Iterable[int] = (),
        batch_snapshots: int | None = None,
    ) -> None:
        """`graders`: the ids of every user the rows may name as grader."""
        self.evaluation_id = evaluation.id
        self.strategy = evaluation.strategy
        self.settings = load_settings(evaluation)
        self.progress = progress
        self.batch_snapshots = batch_snapshots or BATCH_SNAPSHOTS
        self.now = timezone.now()
        self.keywords = 0
        self.snapshots = 0
        self.graded = 0
        self.reported = 0
        self.stopped = False
        self._batch: list[_Keyword] = []
        self._pending = 0
        self._store: Callable[[KeywordBatch], None]
        self._copier: Any = None
        if connection.vendor == "postgresql":
            self._copier = Copier(connection, user_ids=graders)
            self._store = self._copier.submit
        else:
            self._store = _store_portably

    def __enter__(self) -> "EvaluationWriter":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._copier is not None:
            self._copier.close(raise_errors=kind is None)

    def add(
        self,
        text: str,
        snapshots: list[SnapshotRow],
        unretrieved: list[UnretrievedRow] | None = None,
    ) -> None:
        if self.stopped:
            return
        self.keywords += 1
        self._batch.append(_Keyword(self.keywords, text, snapshots, unretrieved or []))
        self._pending += len(snapshots) + len(unretrieved or [])
        if self._pending >= self.batch_snapshots:
            self._flush()

    def stop(self) -> None:
        """A problem was found: the import will be rolled back, so store nothing more."""
        self.stopped = True
        self._batch = []
        if self._copier is not None:
            self._copier.close(raise_errors=False)

    def close(self) -> None:
        """Store what is buffered, then the evaluation's counts and exact means."""
        if self.stopped:
            return
        self._flush()
        if self._copier is not None:
            self._copier.close(raise_errors=True)
        self._report()
        total = self.snapshots * self.strategy
        Evaluation.objects.filter(id=self.evaluation_id).update(
            total_slots=total,
            graded_slots=self.graded,
            progress=engine.progress(self.graded, total),
        )
        evaluation_means_reconcile(evaluation_id=self.evaluation_id)

    def _flush(self) -> None:
        if not self._batch:
            return
        batch = self._scored(self._batch)
        self._batch = []
        self._pending = 0
        if self._copier is not None:
            self._copier.wait()
        self._report()
        self._store(batch)
        self.snapshots += batch.snapshot_count
        self.graded += sum(batch.graded)

    def _report(self) -> None:
        """Tell `progress` the snapshots stored so far. Called while no batch is being
        written, so the callback may use the database (a COPY in progress on the
        connection would not survive another statement)."""
        if self.progress is not None and self.snapshots > self.reported:
            self.reported = self.snapshots
            self.progress(self.snapshots)

    def _scored(self, keywords: list["_Keyword"]) -> KeywordBatch:
        strategy = self.strategy
        rows = [sorted(keyword.snapshots, key=_position) for keyword in keywords]
        slots = [[row[5] + [None] * (strategy - len(row[5])) for row in kw] for kw in rows]
        grades = [
            [[None if entry is None else entry[0] for entry in snapshot] for snapshot in kw]
            for kw in slots
        ]
        scores = self.settings.score_many(
            [
                [
                    SnapshotGrades(0, None, snapshot, _decided_grade(row))
                    for snapshot, row in zip(kw_grades, kw_rows, strict=True)
                ]
                for kw_grades, kw_rows in zip(grades, rows, strict=True)
            ],
            [[grade for _, grade in keyword.unretrieved] for keyword in keywords],
        )
        values: list[list[float | None]] = []
        metric_values: list[dict[tuple[str, int], float | None]] = []
        for index in range(len(keywords)):
            score = scores.keyword_score(index)
            values.append(score.snapshot_values)
            metric_values.append(score.metrics)
        return KeywordBatch(
            evaluation_id=self.evaluation_id,
            strategy=strategy,
            now=self.now,
            metrics=self.settings.metrics,
            positions=[keyword.position for keyword in keywords],
            texts=[keyword.text for keyword in keywords],
            rows=rows,
            unretrieved=[keyword.unretrieved for keyword in keywords],
            slots=slots,
            values=values,
            metric_values=metric_values,
            graded=[
                sum(grade is not None for snapshot in kw for grade in snapshot) for kw in grades
            ],
        )


@dataclass
class _Keyword:
    """A keyword as added: its position, text, results and judged unretrieved documents."""

    position: int
    text: str
    snapshots: list[SnapshotRow]
    unretrieved: list[UnretrievedRow]


def _position(row: SnapshotRow) -> int:
    return row[0]


def _decided_grade(row: SnapshotRow) -> int | None:
    decision = row[6]
    return None if decision is None else decision[0]


def _store_portably(batch: KeywordBatch) -> None:
    keywords = Keyword.objects.bulk_create(
        Keyword(
            evaluation_id=batch.evaluation_id,
            text=text,
            position=position,
            graded_slots=graded,
        )
        for position, text, graded in zip(batch.positions, batch.texts, batch.graded, strict=True)
    )
    snapshots = Snapshot.objects.bulk_create(
        Snapshot(
            keyword_id=keyword.id,
            position=row[0],
            doc_id=row[1],
            name=row[2],
            image=row[3],
            attributes=json.loads(row[4]),
            value=value,
        )
        for keyword, rows, values in zip(keywords, batch.rows, batch.values, strict=True)
        for row, value in zip(rows, values, strict=True)
    )
    slots = (entries for kw in batch.slots for entries in kw)
    keyword_of = (keyword for keyword, rows in zip(keywords, batch.rows, strict=True) for _ in rows)
    FeedbackSlot.objects.bulk_create(
        FeedbackSlot(
            evaluation_id=batch.evaluation_id,
            keyword_id=keyword.id,
            snapshot_id=snapshot.id,
            index=index,
            grader_id=None if entry is None else entry[1],
            external_grader="" if entry is None else entry[2],
            grade=None if entry is None else entry[0],
            reason="" if entry is None else entry[3],
            assigned_at=None if entry is None or entry[1] is None else batch.now,
            graded_at=None if entry is None else batch.now,
            keyword_position=keyword.position,
            snapshot_position=snapshot.position,
            snapshot_started=any(other is not None for other in entries),
        )
        for keyword, snapshot, entries in zip(keyword_of, snapshots, slots, strict=True)
        for index, entry in enumerate(entries)
    )
    UnretrievedJudgement.objects.bulk_create(
        UnretrievedJudgement(keyword_id=keyword.id, doc_id=doc_id, grade=grade)
        for keyword, judged in zip(keywords, batch.unretrieved, strict=True)
        for doc_id, grade in judged
    )
    SnapshotDecision.objects.bulk_create(
        SnapshotDecision(
            snapshot_id=snapshot.id,
            evaluation_id=batch.evaluation_id,
            grade=decision[0],
            decided_by_id=decision[1],
            reason=decision[2],
            decided_at=batch.now,
        )
        for snapshot, (*_, decision) in zip(
            snapshots, (row for rows in batch.rows for row in rows), strict=True
        )
        if decision is not None
    )
    KeywordMetric.objects.bulk_create(
        KeywordMetric(
            keyword_id=keyword.id,
            evaluation_id=batch.evaluation_id,
            metric=metric,
            k=k,
            value=metric_values.get((metric, k)),
        )
        for keyword, metric_values in zip(keywords, batch.metric_values, strict=True)
        for metric, k in batch.metrics
    )
