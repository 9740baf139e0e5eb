"""Write an imported evaluation's keywords, snapshots, slots and scores in batches.

Rows go in as snapshots_add and grading would leave them: every slot carries its copies
of the evaluation, keyword, keyword position and snapshot position. The slots' grades, a
lead's decisions and judged documents that were not retrieved are written by judging's
bulk entry (apps/judging/new_slots.py), by the grade writer's rules, dated at the import.

Each batch is scored while its grades are in memory, with the engine's batch path
exactly as recompute_evaluation scores (EvaluationSettings.score_many), and stored as
recompute_evaluation stores a keyword that had nothing stored: snapshot values, one
KeywordMetric per (metric, k), the keyword's graded slot count, nothing left marked. At
the end the evaluation's counts and exact means (evaluation_means_reconcile). Reading
everything back to score it cost more than writing it at a million snapshots.

On PostgreSQL a batch is four COPYs (five with decisions; pgcopy.py) run on a writer
thread while the caller parses the next batch; elsewhere bulk_create. Memory holds two
batches.
"""

import functools
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
from apps.judging.new_slots import NewJudgedSlots
from apps.scoring.loading import SnapshotGrades, load_settings
from apps.scoring.models import KeywordMetric
from apps.scoring.new_scores import NewKeywordScores
from apps.scoring.services import evaluation_means_reconcile

from .pgcopy import Copier
from .rows import (
    KeywordBatch,
    SnapshotRow,
    UnretrievedRow,
    new_snapshots,
    scored_keywords,
    snapshot_decisions,
    unretrieved_judged,
)

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
        source_label: str = "Import",
    ) -> None:
        """`graders`: the ids of every user the rows may name as grader; `source_label`
        what the grades' source is called ("JSON import"), dated by the import."""
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
        # The rows with grades are judging's (its bulk entry checks them on the scale),
        # the metric values scoring's.
        judged = NewJudgedSlots(
            evaluation.id,
            evaluation.grading_scale,
            self.now,
            team_id=evaluation.team_id,
            label=f"{source_label}, {self.now:%Y-%m-%d}",
        )
        self._judged = judged
        scores = NewKeywordScores(evaluation.id, self.settings.metrics, self.now)
        # COPY: 100,000 snapshots in 9.5 s against 48.4 s through bulk_create (import_bench.py).
        if connection.vendor == "postgresql":
            self._copier = Copier(connection, judged=judged, scores=scores, user_ids=graders)
            self._store = self._copier.submit
        else:
            self._store = functools.partial(_store_portably, judged=judged, scores=scores)

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
        self._judged.know_sources(batch.slots)
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


def _store_portably(batch: KeywordBatch, judged: NewJudgedSlots, scores: NewKeywordScores) -> None:
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
    keyword_ids = [keyword.id for keyword in keywords]
    snapshot_ids = [snapshot.id for snapshot in snapshots]
    FeedbackSlot.objects.bulk_create(
        judged.objects(new_snapshots(batch, keyword_ids, snapshot_ids))
    )
    UnretrievedJudgement.objects.bulk_create(
        judged.unretrieved_objects(unretrieved_judged(batch, keyword_ids))
    )
    SnapshotDecision.objects.bulk_create(
        judged.decision_objects(snapshot_decisions(batch, snapshot_ids))
    )
    KeywordMetric.objects.bulk_create(scores.objects(scored_keywords(batch, keyword_ids)))
