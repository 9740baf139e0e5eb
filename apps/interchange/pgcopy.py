"""PostgreSQL: store an import's batches with COPY, on a writer thread.

The writer thread uses the caller's connection, so its COPYs are part of the import's
transaction; the caller does not touch the connection until the thread is done with a
batch (Copier.submit waits for the previous one). While the server stores batch N,
Python parses and scores batch N+1.

Ids come from the tables' sequences up front, so slots and metrics name their keyword
and snapshot without reading anything back. Rows are written as COPY text directly:
psycopg's write_row spends several microseconds per row on type dispatch, which at
millions of slots was the larger part of the import.
"""

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from django.db import DatabaseError, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot, UnretrievedJudgement
from apps.judging.models import SnapshotDecision
from apps.scoring.models import KeywordMetric

from .rows import KeywordBatch

NULL = "\\N"
LINES_PER_WRITE = 10_000
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def text(value: str) -> str:
    """A text value in COPY's text format."""
    if "\\" in value or not value.isprintable():
        return value.translate(_ESCAPES)
    return value


def literal(value: Any) -> str:
    """Any other value in COPY's text format."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    if isinstance(value, str):
        return text(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"no COPY text for {value!r}")


def _concrete(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):  # a reverse relation has no column
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


class Table:
    """COPY into a model's table: the given fields in order, then every other column
    with its field's default, as bulk_create would give it."""

    def __init__(self, model: type[models.Model], fields: Sequence[str], connection: Any) -> None:
        named = [_concrete(model, name) for name in fields]
        others = [
            field
            for field in model._meta.concrete_fields
            if field not in named and not field.primary_key
        ]
        columns = ", ".join(f'"{field.column}"' for field in [*named, *others])
        self.table = model._meta.db_table
        self.sql = f'COPY "{self.table}" ({columns}) FROM STDIN'
        defaults = [field.get_db_prep_save(field.get_default(), connection) for field in others]
        self.tail = "".join(f"\t{literal(value)}" for value in defaults) + "\n"


# Skip the foreign key triggers for the rows an import writes, when the database role may
# (see Copier.skip_row_checks).
SKIP_ROW_CHECKS = True


class Copier:
    def __init__(self, connection: BaseDatabaseWrapper, *, user_ids: Iterable[int] = ()) -> None:
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
        self.slots = Table(
            FeedbackSlot,
            [
                "evaluation",
                "keyword",
                "snapshot",
                "index",
                "grader",
                "external_grader",
                "grade",
                "reason",
                "assigned_at",
                "graded_at",
                "keyword_position",
                "snapshot_position",
                "snapshot_started",
            ],
            connection,
        )
        self.metrics = Table(
            KeywordMetric,
            ["keyword", "evaluation", "metric", "k", "value", "computed_at"],
            connection,
        )
        self.decisions = Table(
            SnapshotDecision,
            ["snapshot", "evaluation", "grade", "decided_by", "reason", "decided_at"],
            connection,
        )
        self.unretrieved = Table(UnretrievedJudgement, ["keyword", "doc_id", "grade"], connection)
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
                (self.slots, self._slot_lines(batch, keyword_ids, snapshot_ids)),
                (self.metrics, self._metric_lines(batch, keyword_ids)),
            ):
                self._copy(cursor, table, lines)
            if any(row[6] is not None for rows in batch.rows for row in rows):
                self._copy(cursor, self.decisions, self._decision_lines(batch, snapshot_ids))
            if any(batch.unretrieved):
                self._copy(cursor, self.unretrieved, self._unretrieved_lines(batch, keyword_ids))

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

    @staticmethod
    def _slot_lines(
        batch: KeywordBatch, keyword_ids: list[int], snapshot_ids: list[int]
    ) -> Iterator[str]:
        now = batch.now.isoformat()
        ids = iter(snapshot_ids)
        head = f"{batch.evaluation_id}\t"
        for keyword_id, keyword_position, rows, slots in zip(
            keyword_ids, batch.positions, batch.rows, batch.slots, strict=True
        ):
            for row, entries in zip(rows, slots, strict=True):
                prefix = f"{head}{keyword_id}\t{next(ids)}\t"
                started = "t" if any(entry is not None for entry in entries) else "f"
                suffix = f"\t{keyword_position}\t{row[0]}\t{started}"
                for index, entry in enumerate(entries):
                    if entry is None:
                        yield f"{prefix}{index}\t{NULL}\t\t{NULL}\t\t{NULL}\t{NULL}{suffix}"
                        continue
                    grade, user, external, reason = entry
                    if user is None:
                        grader, assigned = NULL, NULL
                    else:
                        grader, assigned = str(user), now
                    yield (
                        f"{prefix}{index}\t{grader}\t{text(external)}\t{grade}\t{text(reason)}\t"
                        f"{assigned}\t{now}{suffix}"
                    )

    @staticmethod
    def _metric_lines(batch: KeywordBatch, keyword_ids: list[int]) -> Iterator[str]:
        now = batch.now.isoformat()
        evaluation = batch.evaluation_id
        for keyword_id, values in zip(keyword_ids, batch.metric_values, strict=True):
            for metric, k in batch.metrics:
                value = values.get((metric, k))
                shown = NULL if value is None else repr(value)
                yield f"{keyword_id}\t{evaluation}\t{metric}\t{k}\t{shown}\t{now}"

    @staticmethod
    def _unretrieved_lines(batch: KeywordBatch, keyword_ids: list[int]) -> Iterator[str]:
        for keyword_id, judged in zip(keyword_ids, batch.unretrieved, strict=True):
            for doc_id, grade in judged:
                yield f"{keyword_id}\t{text(doc_id)}\t{grade}"

    @staticmethod
    def _decision_lines(batch: KeywordBatch, snapshot_ids: list[int]) -> Iterator[str]:
        now = batch.now.isoformat()
        rows = (row for rows in batch.rows for row in rows)
        for snapshot_id, row in zip(snapshot_ids, rows, strict=True):
            decision = row[6]
            if decision is not None:
                grade, user, reason = decision
                yield (
                    f"{snapshot_id}\t{batch.evaluation_id}\t{grade}\t{literal(user)}\t"
                    f"{text(reason)}\t{now}"
                )
