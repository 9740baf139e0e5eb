"""Where each query's lines are in a TREC file, so that an import reads it query by query.

A run of ten million lines does not fit in memory as objects. The import reads each file
twice: `index_lines` notes, per qid, the byte ranges of its stretches of consecutive
lines; `stretches_of` then reads one qid's stretches back from those ranges. Memory holds the
qids and one range per stretch: one per qid in a file grouped by qid, as runs and qrels
are written, and one per change of qid in a file that interleaves them.

A line ends at "\\n" in both readings, so the line numbers agree.
"""

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

CHUNK_BYTES = 1 << 22
BYTE_ORDER_MARK = b"\xef\xbb\xbf"


@dataclass
class QidLines:
    """Where one qid's lines are: its first line number, and each stretch of its
    consecutive lines as (start byte, end byte, first line number), flattened."""

    first_line: int
    stretches: array = field(default_factory=lambda: array("q"))

    def add_stretch(self, start: int, end: int, line: int) -> None:
        self.stretches.extend((start, end, line))

    def extend_last(self, end: int) -> None:
        self.stretches[-2] = end


def numbered_lines(stream: IO[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(line number, start byte, line with its "\\n") of a whole file, from its start,
    read a chunk at a time."""
    stream.seek(0)
    number, offset, carry = 0, 0, b""
    while chunk := stream.read(CHUNK_BYTES):
        pieces = (carry + chunk).split(b"\n")
        carry = pieces.pop()
        for piece in pieces:
            number += 1
            yield number, offset, piece + b"\n"
            offset += len(piece) + 1
    if carry:
        yield number + 1, offset, carry


def index_lines(stream: IO[bytes]) -> dict[str, QidLines]:
    """qid -> where its lines are, in the order the qids first appear. The qid is a line's
    first column (blank lines belong to none); a line that is not UTF-8 is indexed under
    its first column decoded with replacement characters, and its reader reports it."""
    index: dict[str, QidLines] = {}
    current_qid: str | None = None
    current: QidLines | None = None
    for number, start, line in numbered_lines(stream):
        if number == 1:
            line = line.removeprefix(BYTE_ORDER_MARK)
        qid = _first_column(line)
        if qid is None:
            continue
        if qid == current_qid and current is not None:
            current.extend_last(start + len(line))
            continue
        current = index.get(qid)
        if current is None:
            current = index[qid] = QidLines(number)
        current.add_stretch(start, start + len(line), number)
        current_qid = qid
    return index


def stretches_of(stream: IO[bytes], where: QidLines) -> Iterator[tuple[int, bytes]]:
    """(first line number, bytes) of each of one qid's stretches, in file order. A
    stretch holds only that qid's lines (and any blank lines between them)."""
    stretches = where.stretches
    for index in range(0, len(stretches), 3):
        start, end, number = stretches[index], stretches[index + 1], stretches[index + 2]
        stream.seek(start)
        yield number, stream.read(end - start)


def _first_column(line: bytes) -> str | None:
    if line.isascii():
        first = line.split(None, 1)
        return first[0].decode("ascii") if first else None
    # str.split also splits at Unicode spaces: the reader's split, so the qids agree.
    columns = line.decode("utf-8", errors="replace").split(None, 1)
    return columns[0] if columns else None
