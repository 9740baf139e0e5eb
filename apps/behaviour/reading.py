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
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeGuard

import numpy as np
import orjson

from apps.engine.clicks import (
    MAX_SESSION_RANKS,
    ImpressionCounter,
    ImpressionCounts,
    ResultLists,
    SessionCounter,
)

MAX_LINE_BYTES = 1_000_000
BLOCK_BYTES = MAX_LINE_BYTES  # read at a time: a line read whole within one is within the limit
MAX_TEXT = 500  # a query's or a document id's characters, as the judgements store them
MAX_HITS = 1000  # results one UBI query record may list
MAX_QUERY_RECORDS = 5_000_000  # UBI query records held while their events are read
MAX_PROBLEMS_KEPT = 100  # the report lists these; it counts them all
CLICK_ACTIONS = frozenset({"click", "click_through", "item_click"})
CSV_COLUMNS = ("query", "document", "position", "clicked")
# A session's rows feed the DBN; timestamps (ISO 8601) give the log its dates.
CSV_OPTIONAL_COLUMNS = ("session", "timestamp")

# Where a line is: the number of the first line of the block it was read in, the block,
# and where in it the line starts (a line read alone: its number, b"", 0). Counting the
# newlines before it is one more pass over the file, so it is done only for a problem.
Place = tuple[int, bytes, int]


def _line_number(place: Place) -> int:
    first, block, start = place
    return first + block.count(b"\n", 0, start)


@dataclass
class Problems:
    """What could not be read: every one counted, the first MAX_PROBLEMS_KEPT kept."""

    count: int = 0
    kept: list[str] = field(default_factory=list)

    def add(self, where: str, why: str) -> None:
        self.count += 1
        if len(self.kept) < MAX_PROBLEMS_KEPT:
            self.kept.append(f"{where}: {why}")

    def add_at(self, where: str, place: Place, why: str) -> None:
        """A problem on the line at `place` in the file `where`; the line's number is
        counted only when the problem is kept."""
        if len(self.kept) < MAX_PROBLEMS_KEPT:
            self.add(f"{where} line {_line_number(place)}", why)
        else:
            self.count += 1


@dataclass
class Reading:
    """A log read: its counts, what could not be read, and what it covered."""

    impressions: ImpressionCounter = field(default_factory=ImpressionCounter)
    sessions: SessionCounter = field(default_factory=SessionCounter)
    problems: Problems = field(default_factory=Problems)
    lines_read: int = 0
    events_read: int = 0  # impressions (CSV rows) or UBI events, clicks or not
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


class _RecordIds:
    """Query ids to record numbers: each record's id hash in one flat array, and a
    table of slots, at most half full, holding record numbers + 1 (0: empty) found
    from a hash by linear probing. 16 bytes a record, where a dict of hashes takes
    over 100. Two ids of one export sharing a 64-bit hash are vanishingly unlikely."""

    def __init__(self) -> None:
        self.hashes = array("q")
        self._table = array("i", bytes(4 << 16))
        self._mask = (1 << 16) - 1

    def find(self, query_id: str) -> int:
        """The record's number, -1 if there is none."""
        return self._probe(hash(query_id))[1]

    def add(self, query_id: str) -> bool:
        """Number the next record with this id; False if a record has it already."""
        key = hash(query_id)
        slot, number = self._probe(key)
        if number >= 0:
            return False
        self.hashes.append(key)
        self._table[slot] = len(self.hashes)
        if 2 * len(self.hashes) > self._mask:
            self._grow()
        return True

    def _probe(self, key: int) -> tuple[int, int]:
        """Where the hash is, or would go: the slot, and the record in it (-1: none)."""
        table, hashes, mask = self._table, self.hashes, self._mask
        slot = key & mask
        number = table[slot]
        while number and hashes[number - 1] != key:
            slot = (slot + 1) & mask
            number = table[slot]
        return slot, number - 1

    def _grow(self) -> None:
        """A table twice as large, filled at once with numpy: in rounds, each record
        not yet placed takes its slot if empty (the earliest of those wanting it) or
        moves on to the next, as probing would find it."""
        slots = 2 * (self._mask + 1)
        mask = slots - 1
        keys = np.frombuffer(self.hashes, dtype=np.int64)
        table = np.zeros(slots, dtype=np.int32)
        waiting = np.arange(keys.size)
        at = keys & mask
        while waiting.size:
            free = np.flatnonzero(table[at] == 0)
            taken, earliest = np.unique(at[free], return_index=True)
            table[taken] = waiting[free[earliest]] + 1
            placed = np.zeros(waiting.size, dtype=bool)
            placed[free[earliest]] = True
            waiting, at = waiting[~placed], (at[~placed] + 1) & mask
        del keys
        self._table, self._mask = array("i", table.tobytes()), mask


class _UbiSessions:
    """The query records, held compactly while their events are read: query texts and
    document ids numbered once, each record's hits as numbers in one flat array, its
    clicks as positions in it; a record is found by its query_id (_RecordIds)."""

    def __init__(self) -> None:
        self.query_names: dict[str, int] = {}
        self.doc_names: dict[str, int] = {}
        self.ids: _RecordIds | None = _RecordIds()
        self.session_query = array("i")
        self.starts = array("q", [0])  # session k's hits: hits[starts[k]:starts[k + 1]]
        self.hits = array("i")
        self.clicked_at = array("q")

    def add(self, query_id: str, text: str, hits: list[str]) -> bool:
        """Hold the record, its hits in order, each once; False if its id was given."""
        assert self.ids is not None
        if not self.ids.add(query_id):
            return False
        names = self.query_names
        self.session_query.append(names.setdefault(text, len(names)))
        docs = self.doc_names
        try:
            numbers = list(map(docs.__getitem__, hits))
        except KeyError:  # a document not seen before
            numbers = [docs.setdefault(hit, len(docs)) for hit in hits]
        if len(set(numbers)) < len(numbers):  # a hit listed twice counts where first shown
            numbers = list(dict.fromkeys(numbers))
        self.hits.extend(numbers)
        self.starts.append(len(self.hits))
        return True

    def click(self, query_id: str, doc: str) -> str:
        """Mark the click; a problem when it cannot be placed, else nothing."""
        assert self.ids is not None
        session = self.ids.find(query_id)
        if session < 0:
            return f"a click on query_id {query_id!r}, which no query record has"
        number = self.doc_names.get(doc)
        start = self.starts[session]
        shown = self.hits[start : self.starts[session + 1]]
        if number is None or number not in shown:
            return f"document {doc!r} is not among the query's results"
        # The hit list decides the rank, not the event's position ordinal: clients write
        # ordinals from 0 or from 1.
        self.clicked_at.append(start + shown.index(number))
        return ""

    def lists(self) -> ResultLists:
        clicked = np.zeros(len(self.hits), dtype=np.uint8)
        clicked[np.frombuffer(self.clicked_at, dtype=np.int64)] = 1
        return ResultLists(
            queries=list(self.query_names),
            docs=list(self.doc_names),
            query=np.frombuffer(self.session_query, dtype=np.int32),
            starts=np.frombuffer(self.starts, dtype=np.int64),
            doc=np.frombuffer(self.hits, dtype=np.int32),
            clicked=clicked,
        )

    def __len__(self) -> int:
        return len(self.session_query)


def read_ubi(queries: BinaryIO, events: BinaryIO, name: str = "") -> Reading:
    """UBI query records, then events; both JSON Lines."""
    reading = Reading()
    sessions = _ubi_queries(queries, reading, f"{name}queries")
    where = f"{name}events"
    lines_before, problems_before = reading.lines_read, reading.problems.count
    for record, place in _json_lines(events, reading, where, only_if=b"click"):
        problem = _ubi_event(record, sessions, reading)
        if problem:
            reading.problems.add_at(where, place, problem)
    # Every event line read but those reported: the clicks and the events passed over.
    reading.events_read = (reading.lines_read - lines_before) - (
        reading.problems.count - problems_before
    )
    sessions.ids = None  # the events are read: the ids' memory goes to the counting
    lists = sessions.lists()
    del sessions
    reading.queries.update(lists.queries)
    reading.clicks = int(np.count_nonzero(lists.clicked))
    reading.folded = ImpressionCounts.of_lists(lists)
    reading.sessions.add_lists(lists)
    return reading


def _ubi_queries(stream: BinaryIO, reading: Reading, where: str) -> _UbiSessions:
    sessions = _UbiSessions()
    for record, place in _json_lines(stream, reading, where):
        problem = _ubi_query(record, sessions)
        if problem:
            reading.problems.add_at(where, place, problem)
        else:
            reading.saw_time(record.get("timestamp"))
    return sessions


def _ubi_query(record: dict[str, Any], sessions: _UbiSessions) -> str:
    """Hold the query record; why it cannot be, else nothing."""
    query_id, text = record.get("query_id"), record.get("user_query")
    hits = _texts(record.get("query_response_hit_ids"))
    if not _text(query_id):
        return "no query_id"
    if not _text(text):
        return f"user_query: a text of 1 to {MAX_TEXT} characters"
    if hits is None:
        return "query_response_hit_ids: a list of document ids"
    if len(hits) > MAX_HITS:
        return f"query_response_hit_ids: more than {MAX_HITS} results"
    if len(sessions) >= MAX_QUERY_RECORDS:
        return f"more than {MAX_QUERY_RECORDS:,} query records"
    if not sessions.add(query_id, text.strip(), hits):
        return f"query_id {query_id!r} was given before"
    return ""


def _ubi_event(record: dict[str, Any], sessions: _UbiSessions, reading: Reading) -> str:
    """Mark a click event's click; why it cannot be, else nothing. Other events add
    nothing: impressions, hovers, add-to-cart (the query record says what was shown)."""
    action = record.get("action_name")
    if not isinstance(action, str) or action.lower() not in CLICK_ACTIONS:
        return ""
    query_id = record.get("query_id")
    if not _text(query_id):
        return "a click without a query_id"
    attributes = record.get("event_attributes")
    target = attributes.get("object") if isinstance(attributes, dict) else None
    doc = target.get("object_id") if isinstance(target, dict) else None
    if not _text(doc):
        return "event_attributes.object.object_id: missing"
    problem = sessions.click(query_id, doc)
    if not problem:
        reading.saw_time(record.get("timestamp"))
    return problem


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
        column: header.index(column)
        for column in (*CSV_COLUMNS, *CSV_OPTIONAL_COLUMNS)
        if column in header
    }
    current: tuple[str, str] | None = None
    shown: dict[int, tuple[str, bool]] = {}
    reading.lines_read = 1
    for number, row in enumerate(rows, start=2):
        reading.lines_read = number
        if not row:
            continue  # a blank line, or one already reported as too long
        parsed = _csv_row(row, where, f"line {number}", reading)
        if parsed is None:
            continue
        session, query, doc, rank, clicked = parsed
        if "timestamp" in where:
            reading.saw_time(row[where["timestamp"]].strip())
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
    if len(row) <= max(where.values()):
        reading.problems.add(at, f"{len(row)} columns, the header has {max(where.values()) + 1}")
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
) -> Iterator[tuple[dict[str, Any], Place]]:
    """Each line's JSON object and where the line is; with `only_if`, only the lines
    holding those bytes (see _lines)."""
    for line, place in _lines(stream, reading, where, only_if):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:  # also text that is not UTF-8
            reading.problems.add_at(where, place, "not JSON")
            continue
        if isinstance(record, dict) and isinstance(record.get("_source"), dict):
            record = record["_source"]
        if not isinstance(record, dict):
            reading.problems.add_at(where, place, "not a JSON object")
            continue
        yield record, place


def _lines(
    stream: BinaryIO, reading: Reading, where: str, only_if: bytes
) -> Iterator[tuple[bytes, Place]]:
    """The lines that are not blank, and where each is. With `only_if`, a line without
    those bytes is passed over unparsed once it looks like an object (most UBI events
    are no clicks: parsing them would be most of the work), and reported when it does
    not. A block whose every line starts with { and ends with } is known by counting
    bytes, and only its lines holding `only_if` are cut out of it."""
    for first, block, lines in _line_blocks(stream, reading, where):
        if only_if and _all_objects(block, lines):
            reading.lines_read += lines
            yield from _lines_holding(block, first, only_if)
            continue
        for number, line in enumerate(block.split(b"\n")[:-1], start=first):
            stripped = line.strip()
            if not stripped:
                continue
            reading.lines_read += 1
            if only_if and only_if not in line:
                if not (stripped.startswith(b"{") and stripped.endswith(b"}")):
                    reading.problems.add(f"{where} line {number}", "not a JSON object")
                continue
            yield line, (number, b"", 0)


def _all_objects(block: bytes, lines: int) -> bool:
    """Whether every line of the block starts with { and ends with } (or }\\r): each
    newline but the last has } before it and { after it."""
    if not block.startswith(b"{") or not block.endswith((b"}\n", b"}\r\n")):
        return False
    joins = block.count(b"}\n{")
    return joins == lines - 1 or joins + block.count(b"}\r\n{") == lines - 1


def _lines_holding(block: bytes, first: int, only_if: bytes) -> Iterator[tuple[bytes, Place]]:
    found = block.find(only_if)
    while found >= 0:
        start = block.rfind(b"\n", 0, found) + 1
        end = block.find(b"\n", found)
        yield block[start:end], (first, block, start)
        found = block.find(only_if, end)


def _line_blocks(
    stream: BinaryIO, reading: Reading, where: str
) -> Iterator[tuple[int, bytes, int]]:
    """The stream a block of whole lines at a time (each ending with a newline), with
    the number of its first line and how many it has; a line longer than
    MAX_LINE_BYTES is reported and skipped. Read BLOCK_BYTES at a time, so only a
    block's first line, begun in the read before, can be too long."""
    number, rest, skipping = 1, b"", False
    too_long = f"longer than {MAX_LINE_BYTES:,} bytes"
    while chunk := stream.read(BLOCK_BYTES):
        if skipping:  # the rest of a line too long
            end = chunk.find(b"\n")
            if end < 0:
                continue
            chunk, skipping = chunk[end + 1 :], False
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            rest += chunk
            if len(rest) > MAX_LINE_BYTES:
                reading.problems.add(f"{where} line {number}", too_long)
                number, rest, skipping = number + 1, b"", True
            continue
        block = b"".join((rest, memoryview(chunk)[:cut])) if rest else chunk[:cut]
        rest = chunk[cut:]
        if block.find(b"\n", 0, MAX_LINE_BYTES + 1) < 0:
            reading.problems.add(f"{where} line {number}", too_long)
            number, block = number + 1, block[block.find(b"\n") + 1 :]
        if block:
            lines = block.count(b"\n")
            yield number, block, lines
            number += lines
    if rest and not skipping:
        yield number, rest + b"\n", 1


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


def _texts(values: Any) -> list[str] | None:
    """A list's texts stripped, when each is one (as _text checks), else None."""
    if not isinstance(values, list):
        return None
    try:
        joined = "".join(values)
    except TypeError:  # one is not a text
        return None
    # Most lists of ids have no space, nothing unprintable (which covers the other
    # spaces and NUL) and no empty id: then there is nothing to strip.
    if joined.isprintable() and " " not in joined and all(values):
        fits = len(joined) <= MAX_TEXT or max(map(len, values)) <= MAX_TEXT
        return values if fits else None
    stripped = list(map(str.strip, values))
    if not all(stripped) or max(map(len, values), default=0) > MAX_TEXT:
        return None
    return None if "\x00" in joined else stripped
