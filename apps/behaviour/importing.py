"""Importing a behaviour log: read as it streams (reading.py), then stored in one
transaction, so a log is there whole or not at all. Lines that cannot be read are left
out and reported on the log (how many, and the first hundred with their line numbers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from django.db import IntegrityError, transaction

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput

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
    _in_batches(ClickCount.objects.bulk_create, _count_rows(log, reading))
    _in_batches(SessionPattern.objects.bulk_create, _session_rows(log, reading))
    return log


def _count_rows(log: ClickLog, reading: Reading) -> Iterator[ClickCount]:
    counts = reading.counts()
    for query, doc, rank, impressions, clicks in zip(
        counts.query.tolist(),
        counts.doc.tolist(),
        counts.rank.tolist(),
        counts.impressions.tolist(),
        counts.clicks.tolist(),
        strict=True,
    ):
        yield ClickCount(
            log=log,
            query=counts.queries[query],
            doc_id=counts.docs[doc],
            rank=rank,
            impressions=impressions,
            clicks=clicks,
        )


def _session_rows(log: ClickLog, reading: Reading) -> Iterator[SessionPattern]:
    patterns = reading.sessions.patterns()
    for row in range(len(patterns.count)):
        shown = [patterns.docs[doc] for doc in patterns.doc[row].tolist() if doc >= 0]
        yield SessionPattern(
            log=log,
            query=patterns.queries[int(patterns.query[row])],
            docs=shown,
            clicks=[int(click) for click in patterns.clicks[row][: len(shown)].tolist()],
            count=int(patterns.count[row]),
        )


def _in_batches(create: Callable[[list[Any]], object], rows: Iterator[Any]) -> None:
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH:
            create(batch)
            batch = []
    if batch:
        create(batch)
