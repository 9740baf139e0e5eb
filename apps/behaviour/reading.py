"""Reading behaviour logs as they stream: User Behavior Insights (UBI 1.0.0) queries and
events as JSON Lines, and a plain CSV click log. Pure: no Django.

What is read is folded at once into counts the click models use (apps/engine/clicks.py):
impressions and clicks per (query, document, rank), and whole sessions (the documents
shown from rank 1 and which were clicked) for the DBN. A line that cannot be read is
reported with its number and why, and left out; the caller stores all or nothing.

UBI: each query record (from the `ubi_queries` index: query_id, user_query,
query_response_hit_ids, client_id, timestamp) is one session that showed its hit ids in
order from rank 1; each click event (from `ubi_events`: action_name "click", query_id,
event_attributes.object.object_id and, if given, event_attributes.position.ordinal)
marks its document clicked in that session. An exported line may be the document
itself or an index hit holding it under "_source". The queries are read first, so the
events can be matched to them.

CSV: a header naming at least query, document, position and clicked (session optional);
each row is one impression. A session's rows are consecutive, as a log writes them.
"""

from __future__ import annotations

import csv
import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeGuard

import numpy as np

from apps.engine.clicks import (
    MAX_SESSION_RANKS,
    ImpressionCounter,
    ImpressionCounts,
    SessionCounter,
)

MAX_LINE_BYTES = 1_000_000
MAX_TEXT = 500  # a query's or a document id's characters, as the judgements store them
MAX_HITS = 1000  # results one UBI query record may list
MAX_QUERY_RECORDS = 5_000_000  # UBI query records held while their events are read
MAX_PROBLEMS_KEPT = 100  # the report lists these; it counts them all
CLICK_ACTIONS = frozenset({"click", "click_through", "item_click"})
CSV_COLUMNS = ("query", "document", "position", "clicked")


@dataclass
class Problems:
    """What could not be read: every one counted, the first MAX_PROBLEMS_KEPT kept."""

    count: int = 0
    kept: list[str] = field(default_factory=list)

    def add(self, where: str, why: str) -> None:
        self.count += 1
        if len(self.kept) < MAX_PROBLEMS_KEPT:
            self.kept.append(f"{where}: {why}")


@dataclass
class Reading:
    """A log read: its counts, what could not be read, and what it covered."""

    impressions: ImpressionCounter = field(default_factory=ImpressionCounter)
    sessions: SessionCounter = field(default_factory=SessionCounter)
    problems: Problems = field(default_factory=Problems)
    lines_read: int = 0
    events_read: int = 0  # impressions (CSV rows) or UBI events
    clicks: int = 0
    first_timestamp: str = ""
    last_timestamp: str = ""
    queries: set[str] = field(default_factory=set)
    # A UBI log's counts, made at once from its sessions (CSV rows go through `impressions`).
    folded: ImpressionCounts | None = None

    def counts(self) -> ImpressionCounts:
        return self.folded if self.folded is not None else self.impressions.counts()

    def saw_time(self, stamp: Any) -> None:
        if isinstance(stamp, str) and 0 < len(stamp) <= 64:
            if not self.first_timestamp or stamp < self.first_timestamp:
                self.first_timestamp = stamp
            if stamp > self.last_timestamp:
                self.last_timestamp = stamp


# --- UBI ------------------------------------------------------------------------------


class _UbiSessions:
    """The query records, held compactly while their events are read: query texts and
    document ids interned once, each record's hits as indices in one flat array, its
    clicks as flags beside them. A record is found by its query_id's hash (64 bits; two
    ids of one export sharing one are vanishingly unlikely)."""

    def __init__(self) -> None:
        self.query_names: dict[str, int] = {}
        self.doc_names: dict[str, int] = {}
        self.by_id: dict[int, int] = {}
        self.session_query = array("i")
        self.starts = array("q", [0])  # session k's hits: hits[starts[k]:starts[k + 1]]
        self.hits = array("i")
        self.clicked = bytearray()

    def add(self, query_id: str, text: str, hits: list[str]) -> bool:
        key = hash(query_id)
        if key in self.by_id:
            return False
        self.by_id[key] = len(self.session_query)
        self.session_query.append(self.query_names.setdefault(text, len(self.query_names)))
        docs = self.doc_names
        self.hits.extend(docs.setdefault(hit, len(docs)) for hit in hits)
        self.clicked.extend(bytes(len(hits)))
        self.starts.append(len(self.hits))
        return True

    def click(self, query_id: str, doc: str) -> str:
        """Mark the click; a problem when it cannot be placed, else nothing."""
        session = self.by_id.get(hash(query_id))
        if session is None:
            return f"a click on query_id {query_id!r}, which no query record has"
        doc_index = self.doc_names.get(doc)
        start, end = self.starts[session], self.starts[session + 1]
        if doc_index is None or doc_index not in self.hits[start:end]:
            return f"document {doc!r} is not among the query's results"
        # The hit list decides the rank, not the event's position ordinal: clients write
        # ordinals from 0 or from 1.
        self.clicked[start + self.hits[start:end].index(doc_index)] = 1
        return ""

    def __len__(self) -> int:
        return len(self.session_query)


def read_ubi(queries: BinaryIO, events: BinaryIO, name: str = "") -> Reading:
    """UBI query records, then events; both JSON Lines."""
    reading = Reading()
    sessions = _ubi_queries(queries, reading, f"{name}queries")
    for number, record in _json_lines(events, reading, f"{name}events", only_if=b"click"):
        _ubi_event(record, sessions, reading, f"{name}events line {number}")
    _fold_ubi(reading, sessions)
    return reading


def _ubi_queries(stream: BinaryIO, reading: Reading, where: str) -> _UbiSessions:
    sessions = _UbiSessions()
    for number, record in _json_lines(stream, reading, where):
        at = f"{where} line {number}"
        query_id, text, hits = (
            record.get("query_id"),
            record.get("user_query"),
            record.get("query_response_hit_ids"),
        )
        if not _text(query_id):
            reading.problems.add(at, "no query_id")
        elif not _text(text):
            reading.problems.add(at, f"user_query: a text of 1 to {MAX_TEXT} characters")
        elif not isinstance(hits, list) or not all(_text(hit) for hit in hits):
            reading.problems.add(at, "query_response_hit_ids: a list of document ids")
        elif len(hits) > MAX_HITS:
            reading.problems.add(at, f"query_response_hit_ids: more than {MAX_HITS} results")
        elif len(sessions) >= MAX_QUERY_RECORDS:
            reading.problems.add(at, f"more than {MAX_QUERY_RECORDS:,} query records")
        elif not sessions.add(query_id, text.strip(), _unique(hits)):
            reading.problems.add(at, f"query_id {query_id!r} was given before")
        else:
            reading.saw_time(record.get("timestamp"))
    return sessions


def _ubi_event(record: dict[str, Any], sessions: _UbiSessions, reading: Reading, at: str) -> None:
    action = record.get("action_name")
    if not isinstance(action, str) or action.lower() not in CLICK_ACTIONS:
        return  # impressions, hovers, add-to-cart: the query record says what was shown
    query_id = record.get("query_id")
    if not _text(query_id):
        reading.problems.add(at, "a click without a query_id")
        return
    attributes = record.get("event_attributes")
    target = attributes.get("object") if isinstance(attributes, dict) else None
    doc = target.get("object_id") if isinstance(target, dict) else None
    if not _text(doc):
        reading.problems.add(at, "event_attributes.object.object_id: missing")
        return
    problem = sessions.click(query_id, doc)
    if problem:
        reading.problems.add(at, problem)
        return
    reading.events_read += 1
    reading.saw_time(record.get("timestamp"))


def _fold_ubi(reading: Reading, sessions: _UbiSessions) -> None:
    """Every record's hits as impressions at their ranks, the clicked ones clicked,
    counted per (query, document, rank) with numpy; and each record as a DBN session."""
    queries, docs = list(sessions.query_names), list(sessions.doc_names)
    reading.queries.update(queries)
    starts = np.frombuffer(sessions.starts, dtype=np.int64)
    lengths = np.diff(starts)
    hits = np.frombuffer(sessions.hits, dtype=np.int32).astype(np.int64)
    clicked = np.frombuffer(bytes(sessions.clicked), dtype=np.uint8).astype(np.int64)
    session_of_hit = np.repeat(np.arange(len(lengths)), lengths)
    query = np.frombuffer(sessions.session_query, dtype=np.int32).astype(np.int64)[session_of_hit]
    rank = np.arange(hits.size) - starts[:-1][session_of_hit] + 1
    cell = (query * max(len(docs), 1) + hits) * (MAX_HITS + 1) + rank
    cells, row = np.unique(cell, return_inverse=True)
    pair, cell_rank = np.divmod(cells, MAX_HITS + 1)
    cell_query, cell_doc = np.divmod(pair, max(len(docs), 1))
    reading.clicks = int(clicked.sum())
    reading.folded = ImpressionCounts(
        queries=queries,
        docs=docs,
        query=cell_query,
        doc=cell_doc,
        rank=cell_rank,
        impressions=np.bincount(row, minlength=cells.size),
        clicks=np.bincount(row, weights=clicked, minlength=cells.size).astype(np.int64),
    )
    for session in range(len(lengths)):
        start = int(starts[session])
        end = min(int(starts[session + 1]), start + MAX_SESSION_RANKS)
        if end > start:
            reading.sessions.add(
                queries[sessions.session_query[session]],
                [docs[doc] for doc in sessions.hits[start:end]],
                sessions.clicked[start:end],
            )


# --- CSV ------------------------------------------------------------------------------


def read_csv_log(stream: BinaryIO, name: str = "") -> Reading:
    reading = Reading()
    rows = csv.reader(_text_lines(stream, reading))
    try:
        header = [column.strip().lower() for column in next(rows)]
    except StopIteration:
        reading.problems.add(name or "the file", "it is empty")
        return reading
    missing = [column for column in CSV_COLUMNS if column not in header]
    if missing:
        reading.problems.add("line 1", f"the header has no column {', '.join(missing)}")
        return reading
    where = {
        column: header.index(column) for column in (*CSV_COLUMNS, "session") if column in header
    }
    current: tuple[str, str] | None = None
    shown: dict[int, tuple[str, bool]] = {}
    for number, row in enumerate(rows, start=2):
        if not row:
            continue  # a blank line, or one already reported as too long
        parsed = _csv_row(row, where, f"line {number}", reading)
        if parsed is None:
            continue
        session, query, doc, rank, clicked = parsed
        reading.events_read += 1
        reading.clicks += clicked
        reading.queries.add(query)
        reading.impressions.add(query, doc, rank, clicked)
        if (session, query) != current:
            _fold_session(reading, current, shown)
            current, shown = (session, query), {}
        shown[rank] = (doc, clicked)
    _fold_session(reading, current, shown)
    return reading


def _csv_row(
    row: list[str], where: dict[str, int], at: str, reading: Reading
) -> tuple[str, str, str, int, bool] | None:
    if len(row) < len(where):
        reading.problems.add(at, f"{len(row)} columns, the header has {len(where)}")
        return None
    query, doc = row[where["query"]].strip(), row[where["document"]].strip()
    position, clicked = row[where["position"]].strip(), row[where["clicked"]].strip().lower()
    session = row[where["session"]].strip() if "session" in where else ""
    if not _text(query):
        reading.problems.add(at, f"query: a text of 1 to {MAX_TEXT} characters")
    elif not _text(doc):
        reading.problems.add(at, f"document: an id of 1 to {MAX_TEXT} characters")
    elif not (position.isascii() and position.isdigit() and 1 <= int(position) <= MAX_HITS):
        reading.problems.add(at, f"position: a whole number from 1 to {MAX_HITS}")
    elif clicked not in ("0", "1", "true", "false", "yes", "no"):
        reading.problems.add(at, "clicked: 0 or 1 (or true/false)")
    elif len(session) > MAX_TEXT:
        reading.problems.add(at, f"session: at most {MAX_TEXT} characters")
    else:
        return session, query, doc, int(position), clicked in ("1", "true", "yes")
    return None


def _fold_session(
    reading: Reading, key: tuple[str, str] | None, shown: dict[int, tuple[str, bool]]
) -> None:
    """A CSV session's documents from rank 1 on, as far as they run unbroken, for the
    DBN (which reads a list from its top); a session without a session column is none."""
    if key is None or not key[0] or 1 not in shown:
        return
    docs, clicks, rank = [], [], 1
    while rank in shown and rank <= MAX_SESSION_RANKS:
        doc, clicked = shown[rank]
        if doc in docs:
            break
        docs.append(doc)
        clicks.append(int(clicked))
        rank += 1
    reading.sessions.add(key[1], docs, clicks)


# --- shared ---------------------------------------------------------------------------


def _json_lines(
    stream: BinaryIO, reading: Reading, where: str, only_if: bytes = b""
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line's JSON object; with `only_if`, a line without those bytes is passed over
    unparsed once it looks like an object (most UBI events are no clicks: parsing them
    would be most of the work), and reported when it does not."""
    for number, raw in enumerate(_bounded_binary_lines(stream, reading, where), start=1):
        if raw is None or not raw.strip():
            continue
        reading.lines_read += 1
        if only_if and only_if not in raw:
            line = raw.strip()
            if not (line.startswith(b"{") and line.endswith(b"}")):
                reading.problems.add(f"{where} line {number}", "not a JSON object")
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            reading.problems.add(f"{where} line {number}", "not JSON")
            continue
        if isinstance(record, dict) and isinstance(record.get("_source"), dict):
            record = record["_source"]
        if not isinstance(record, dict):
            reading.problems.add(f"{where} line {number}", "not a JSON object")
            continue
        yield number, record


def _bounded_binary_lines(stream: BinaryIO, reading: Reading, where: str) -> Iterator[bytes | None]:
    """The stream's lines, a line longer than MAX_LINE_BYTES reported and skipped whole."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            at = f"{where} line {number}" if where else f"line {number}"
            reading.problems.add(at, f"longer than {MAX_LINE_BYTES:,} bytes")
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_LINE_BYTES + 1)
            yield None
            continue
        yield line


def _text_lines(stream: BinaryIO, reading: Reading) -> Iterator[str]:
    """The stream's lines as text, each decoded on its own so a line that is not UTF-8
    is reported by its number (and left out as a blank line, keeping the numbering)."""
    for number, raw in enumerate(_bounded_binary_lines(stream, reading, ""), start=1):
        if raw is None:
            yield ""
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            reading.problems.add(f"line {number}", "not UTF-8 text")
            yield ""
            continue
        yield line.removeprefix("\ufeff") if number == 1 else line


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value.strip()) <= MAX_TEXT and "\x00" not in value


def _unique(hits: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.strip(), None)
    return list(seen)
