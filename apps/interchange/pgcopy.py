"""PostgreSQL: store an import's batches with COPY, on a writer thread.

The writer thread uses the caller's connection, so its COPYs are part of the import's
transaction; the caller does not touch the connection until the thread is done with a
batch (Copier.submit waits for the previous one). While the server stores batch N,
Python parses and scores batch N+1.

Ids come from the tables' sequences up front, so slots and metrics name their keyword
and snapshot without reading anything back. Rows are written as COPY text directly
(apps/core/copy_text.py). This module writes keywords and snapshots; the rows with
grades (slots, a lead's decisions, judged documents that were not retrieved) come from
judging's bulk entry (apps/judging/new_slots.py) and the metric values from scoring
(apps/scoring/new_scores.py), and it feeds their lines to COPY.
"""

from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.db import DatabaseError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.core.copy_text import NULL, Table, text
from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot, UnretrievedJudgement
from apps.judging.models import SnapshotDecision
from apps.judging.new_slots import (
    DECISION_FIELDS,
    SLOT_FIELDS,
    UNRETRIEVED_FIELDS,
    NewJudgedSlots,
)
from apps.scoring.models import KeywordMetric
from apps.scoring.new_scores import METRIC_FIELDS, NewKeywordScores

from .rows import (
    KeywordBatch,
    new_snapshots,
    scored_keywords,
    snapshot_decisions,
    unretrieved_judged,
)

LINES_PER_WRITE = 10_000


# Skip the foreign key triggers for the rows an import writes, when the database role may
# (see Copier.skip_row_checks).
SKIP_ROW_CHECKS = True


class Copier:
    def __init__(
        self,
        connection: BaseDatabaseWrapper,
        *,
        judged: NewJudgedSlots,
        scores: NewKeywordScores,
        user_ids: Iterable[int] = (),
    ) -> None:
        connection.ensure_connection()
        self.raw = connection.connection
        self.skipping = SKIP_ROW_CHECKS and self.skip_row_checks(connection, sorted(user_ids))
        self.keywords = Table(
            Keyword, ["id", "evaluation", "text", "position", "graded_slots"], connection
        )
        self.snapshots = Table(
            Snapshot,
            ["id", "keyword", "position", "doc_id", "name", "image", "attributes", "value"],
            connection,
        )
        self.judged = judged
        self.scores = scores
        self.slots = Table(FeedbackSlot, SLOT_FIELDS, connection)
        self.metrics = Table(KeywordMetric, METRIC_FIELDS, connection)
        self.decisions = Table(SnapshotDecision, DECISION_FIELDS, connection)
        self.unretrieved = Table(UnretrievedJudgement, UNRETRIEVED_FIELDS, connection)
        with self.raw.cursor() as cursor:
            self.sequences = {
                table.table: cursor.execute(
                    "SELECT pg_get_serial_sequence(%s, 'id')", [f'"{table.table}"']
                ).fetchone()[0]
                for table in (self.keywords, self.snapshots)
            }
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="relevo-import")
        self.pending: Future[None] | None = None
        self.closed = False

    @staticmethod
    def skip_row_checks(connection: BaseDatabaseWrapper, user_ids: list[int]) -> bool:
        """Turn off the foreign key triggers for this transaction, when the role may.

        PostgreSQL checks every foreign key of every inserted row with a query of its
        own: four per slot, thirteen million at a million snapshots, which take longer
        than the inserts themselves. The rows an import writes cannot break a key: they
        name the evaluation and the keywords and snapshots this transaction created,
        with ids taken from the sequences, and team members, whose rows are locked here
        as the checks would lock them, so they cannot be deleted before the commit.
        `session_replication_role = replica` (the setting under which replication
        applies rows that were checked elsewhere) skips the triggers; it needs a
        superuser, or a role granted SET on it (PostgreSQL 15: GRANT SET ON PARAMETER
        session_replication_role TO ...). Otherwise the checks run, at their cost.
        Copier.close turns them back on.
        """
        if not connection.in_atomic_block:
            return False  # SET LOCAL would end with its own transaction
        try:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                cursor.execute("SET LOCAL session_replication_role = replica")
        except DatabaseError:
            return False
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM accounts_user WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE",
                [user_ids],
            )
        return True

    def submit(self, batch: KeywordBatch) -> None:
        """Store the batch on the writer thread, once the previous one is stored."""
        self.wait()
        self.pending = self.executor.submit(self._store, batch)

    def close(self, *, raise_errors: bool) -> None:
        """Wait for the writer thread; its error is raised only if asked (after another
        error, the import is being rolled back anyway)."""
        if self.closed:
            return
        self.closed = True
        try:
            if raise_errors:
                self.wait()
            elif self.pending is not None:
                self.pending.exception()
        finally:
            self.executor.shutdown(wait=True)
        if self.skipping and raise_errors:
            # After an error the transaction is rolled back, and the setting with it.
            with self.raw.cursor() as cursor:
                cursor.execute("SET LOCAL session_replication_role = origin")

    def wait(self) -> None:
        """Until the writer thread has stored the batch it has (its error is raised);
        then the connection is the caller's again."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    # --- on the writer thread -------------------------------------------------------------

    def _store(self, batch: KeywordBatch) -> None:
        with self.raw.cursor() as cursor:
            keyword_ids = self._next_ids(cursor, self.keywords, len(batch.texts))
            snapshot_ids = self._next_ids(cursor, self.snapshots, batch.snapshot_count)
            for table, lines in (
                (self.keywords, self._keyword_lines(batch, keyword_ids)),
                (self.snapshots, self._snapshot_lines(batch, keyword_ids, snapshot_ids)),
                (
                    self.slots,
                    self.judged.copy_lines(new_snapshots(batch, keyword_ids, snapshot_ids)),
                ),
                (self.metrics, self.scores.copy_lines(scored_keywords(batch, keyword_ids))),
            ):
                self._copy(cursor, table, lines)
            decided = snapshot_decisions(batch, snapshot_ids)
            if decided:
                self._copy(cursor, self.decisions, self.judged.decision_copy_lines(decided))
            if any(batch.unretrieved):
                lines = self.judged.unretrieved_copy_lines(unretrieved_judged(batch, keyword_ids))
                self._copy(cursor, self.unretrieved, lines)

    def _next_ids(self, cursor: Any, table: Table, count: int) -> list[int]:
        if not count:
            return []
        cursor.execute(
            "SELECT nextval(%s) FROM generate_series(1, %s)", [self.sequences[table.table], count]
        )
        return [row[0] for row in cursor.fetchall()]

    @staticmethod
    def _copy(cursor: Any, table: Table, lines: Iterable[str]) -> None:
        with cursor.copy(table.sql) as copy:
            chunk: list[str] = []
            for line in lines:
                chunk.append(line)
                chunk.append(table.tail)
                if len(chunk) >= 2 * LINES_PER_WRITE:
                    copy.write("".join(chunk))
                    chunk = []
            if chunk:
                copy.write("".join(chunk))

    @staticmethod
    def _keyword_lines(batch: KeywordBatch, keyword_ids: list[int]) -> Iterator[str]:
        evaluation = batch.evaluation_id
        for keyword_id, position, keyword_text, graded in zip(
            keyword_ids, batch.positions, batch.texts, batch.graded, strict=True
        ):
            yield f"{keyword_id}\t{evaluation}\t{text(keyword_text)}\t{position}\t{graded}"

    @staticmethod
    def _snapshot_lines(
        batch: KeywordBatch, keyword_ids: list[int], snapshot_ids: list[int]
    ) -> Iterator[str]:
        ids = iter(snapshot_ids)
        for keyword_id, rows, values in zip(keyword_ids, batch.rows, batch.values, strict=True):
            for (position, doc_id, name, image, attributes, _, _), value in zip(
                rows, values, strict=True
            ):
                yield (
                    f"{next(ids)}\t{keyword_id}\t{position}\t{text(doc_id)}\t{text(name)}\t"
                    f"{text(image)}\t{text(attributes)}\t{NULL if value is None else repr(value)}"
                )
