"""Importing a behaviour log: read as it streams (reading.py), then stored in one
transaction, so a log is there whole or not at all. Lines that cannot be read are left
out and reported on the log (how many, and the first hundred with their line numbers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from queue import Queue
from threading import Thread
from typing import Any, BinaryIO

import numpy as np
import orjson
from django.db import DatabaseError, IntegrityError, connection, transaction

from apps.accounts.models import Team, User
from apps.core.copy_text import Table, text
from apps.core.errors import InvalidInput
from apps.engine.clicks import ImpressionCounts, SessionCounter, SessionPatterns

from .models import ClickCount, ClickLog, LogFormat, SessionPattern
from .reading import Reading, read_csv_log, read_ubi

BATCH = 5000
MAX_NAME = 200


def click_log_import(
    *,
    team: Team,
    user: User | None,
    name: str,
    file_format: str,
    queries: BinaryIO | None = None,
    events: BinaryIO | None = None,
    log: BinaryIO | None = None,
) -> ClickLog:
    """UBI: `queries` and `events`; CSV: `log`. InvalidInput names each field that is
    wrong, or says that nothing in the files could be read."""
    name = name.strip() if isinstance(name, str) else ""
    problems: list[str] = []
    if not name or len(name) > MAX_NAME or "\x00" in name:
        problems.append(f"name: a text of 1 to {MAX_NAME} characters")
    elif ClickLog.objects.filter(team=team, name=name).exists():
        problems.append(f"name: the team has a behaviour log named {name!r} already")
    if file_format == LogFormat.UBI:
        problems += [
            f"{part}: the UBI {part} file, JSON Lines"
            for part, given in (("queries", queries), ("events", events))
            if given is None
        ]
    elif file_format == LogFormat.CSV:
        if log is None:
            problems.append("log: the CSV click log")
    else:
        problems.append("file_format: ubi or csv")
    if problems:
        raise InvalidInput(problems)
    if file_format == LogFormat.UBI:
        assert queries is not None and events is not None
        reading = read_ubi(queries, events)
    else:
        assert log is not None
        reading = read_csv_log(log)
    if not reading.queries:
        field = "queries" if file_format == LogFormat.UBI else "log"
        found = "; ".join(reading.problems.kept[:5]) or "the files are empty"
        raise InvalidInput([f"{field}: nothing could be read ({found})"])
    try:
        with transaction.atomic():
            return _stored(team, user, name, file_format, reading)
    except IntegrityError:  # the same name, imported a moment ago
        raise InvalidInput([f"name: the team has a behaviour log named {name!r} already"]) from None


def _stored(
    team: Team, user: User | None, name: str, file_format: str, reading: Reading
) -> ClickLog:
    log = ClickLog.objects.create(
        team=team,
        name=name,
        file_format=file_format,
        imported_by=user,
        first_event_at=reading.first_timestamp,
        last_event_at=reading.last_timestamp,
        lines_read=reading.lines_read,
        events_read=reading.events_read,
        clicks=reading.clicks,
        query_count=len(reading.queries),
        problem_count=reading.problems.count,
        problems=reading.problems.kept,
    )
    counts, patterns = reading.counts(), reading.sessions.patterns()
    reading.sessions = SessionCounter()  # its rows are in `patterns`: memory for the store
    if connection.vendor == "postgresql":
        _copied(log, counts, patterns)
    else:
        _in_batches(ClickCount.objects.bulk_create, _count_rows(log, counts))
        _in_batches(SessionPattern.objects.bulk_create, _session_rows(log, patterns))
    return log


def _count_rows(log: ClickLog, counts: ImpressionCounts) -> Iterator[ClickCount]:
    queries, docs = counts.queries, counts.docs
    for part in _count_values(counts):
        for query, doc, rank, impressions, clicks in part:
            yield ClickCount(
                log=log,
                query=queries[query],
                doc_id=docs[doc],
                rank=rank,
                impressions=impressions,
                clicks=clicks,
            )


def _count_values(counts: ImpressionCounts) -> Iterator[Iterator[tuple[int, ...]]]:
    """The counts' columns as Python numbers, a slice of the arrays at a time (millions
    of them at once would take more memory than the reading did)."""
    for start in range(0, counts.rank.size, BATCH):
        end = start + BATCH
        yield zip(
            counts.query[start:end].tolist(),
            counts.doc[start:end].tolist(),
            counts.rank[start:end].tolist(),
            counts.impressions[start:end].tolist(),
            counts.clicks[start:end].tolist(),
            strict=True,
        )


def _session_rows(log: ClickLog, patterns: SessionPatterns) -> Iterator[SessionPattern]:
    queries, docs = patterns.queries, patterns.docs
    for start in range(0, patterns.count.size, BATCH):
        end = start + BATCH
        for query, shown, clicked, count in zip(
            patterns.query[start:end].tolist(),
            patterns.doc[start:end].tolist(),
            patterns.clicks[start:end].astype(np.uint8).tolist(),
            patterns.count[start:end].tolist(),
            strict=True,
        ):
            names = [docs[doc] for doc in shown if doc >= 0]
            yield SessionPattern(
                log=log, query=queries[query], docs=names, clicks=clicked[: len(names)], count=count
            )


def _copied(log: ClickLog, counts: ImpressionCounts, patterns: SessionPatterns) -> None:
    """PostgreSQL: the rows with COPY, in the import's transaction, written as COPY's
    text a slice at a time (each name escaped once) while a thread sends the slice
    before. bench/clicks_bench.py: 2.3 million counts and 870,000 sessions in 13.7 s;
    48.5 s sent one after the other with every row's foreign key checked."""
    count_table = Table(
        ClickCount, ["log", "query", "doc_id", "rank", "impressions", "clicks"], connection
    )
    session_table = Table(SessionPattern, ["log", "query", "docs", "clicks", "count"], connection)
    skipping = _skip_row_checks()
    with connection.cursor() as cursor:
        _copy(cursor.cursor, count_table.sql, _count_lines(log.id, counts, count_table.tail))
        _copy(
            cursor.cursor, session_table.sql, _session_lines(log.id, patterns, session_table.tail)
        )
        if skipping:
            cursor.execute("SET LOCAL session_replication_role = origin")


def _skip_row_checks() -> bool:
    """Leave out PostgreSQL's check of each row's log, when the role may.

    Every row's foreign key is checked at the commit with a query of its own: at 2.3
    million counts that took 14 s, and queueing the checks slowed the COPY by half.
    The rows name the log this transaction created, which no one else can see, let
    alone delete, before the commit. `session_replication_role = replica` skips the
    checks; it needs a superuser or a role granted SET on it (as the evaluations'
    import, apps/interchange/pgcopy.py); otherwise the checks run."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return False
    return True


def _copy(cursor: Any, sql: str, chunks: Iterator[str]) -> None:
    """One COPY of the chunks: a thread of its own sends each while the next is made,
    through a queue of two, so Python making lines and the server storing them run
    side by side on two cores."""
    queue: Queue[str | None] = Queue(maxsize=2)
    failed: list[BaseException] = []

    def send() -> None:
        try:
            with cursor.copy(sql) as copy:
                while (chunk := queue.get()) is not None:
                    copy.write(chunk)
        except BaseException as error:  # handed to the caller's thread
            failed.append(error)
            while queue.get() is not None:  # until the maker stops
                pass

    sender = Thread(target=send, name="relevo-click-copy")
    sender.start()
    try:
        for chunk in chunks:
            if failed:
                break
            queue.put(chunk)
    finally:
        queue.put(None)
        sender.join()
    if failed:
        raise failed[0]


def _count_lines(log_id: int, counts: ImpressionCounts, tail: str) -> Iterator[str]:
    queries = [f"{log_id}\t{text(query)}\t" for query in counts.queries]
    docs = [f"{text(doc)}\t" for doc in counts.docs]
    for part in _count_values(counts):
        yield "".join(
            f"{queries[query]}{docs[doc]}{rank}\t{impressions}\t{clicks}{tail}"
            for query, doc, rank, impressions, clicks in part
        )


def _session_lines(log_id: int, patterns: SessionPatterns, tail: str) -> Iterator[str]:
    """Each session as COPY text; its documents and clicks as JSON lists, the document
    names made JSON once, and each list of click flags once per shape it has."""
    queries = [f"{log_id}\t{text(query)}\t" for query in patterns.queries]
    docs = np.array([text(orjson.dumps(doc).decode()) for doc in patterns.docs] + [""], object)
    width = patterns.doc.shape[1]
    flags: dict[int, str] = {}
    for start in range(0, patterns.count.size, BATCH):
        end = start + BATCH
        lengths = (patterns.doc[start:end] >= 0).sum(axis=1)
        bits = patterns.clicks[start:end] @ (1 << np.arange(width, dtype=np.int64))
        lines = []
        for query, names, length, shape, count in zip(
            patterns.query[start:end].tolist(),
            docs[patterns.doc[start:end]].tolist(),  # -1, past a list's end: ""
            lengths.tolist(),
            (bits * (width + 1) + lengths).tolist(),
            patterns.count[start:end].tolist(),
            strict=True,
        ):
            clicked = flags.get(shape)
            if clicked is None:
                clicked = flags[shape] = ",".join(
                    str(shape // (width + 1) >> rank & 1) for rank in range(length)
                )
            lines.append(
                f"{queries[query]}[{','.join(names[:length])}]\t[{clicked}]\t{count}{tail}"
            )
        yield "".join(lines)


def _chunks(rows: Iterator[Any]) -> Iterator[list[Any]]:
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == BATCH:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _in_batches(create: Callable[[list[Any]], object], rows: Iterator[Any]) -> None:
    for chunk in _chunks(rows):
        create(chunk)
