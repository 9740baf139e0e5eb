"""Read a qrels file and a run file as trec_eval reads them, line by line from a stream,
with every limit checked before a value is used. Problems name the file and the line;
reading goes on to collect up to MAX_PROBLEMS of them, then FileProblems says them all.

- qrels: `qid iteration docno level`, a level a whole number from -100 to 100 (below 0:
  in the pool, not judged); a docno judged twice for one qid is refused.
- run: `qid Q0 docno rank score tag [anything]`; the rank column is not read (trec_eval
  ranks by score, ties by docno, descending); a docno twice for one qid is refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from apps.engine.scales import HIGHEST_LEVEL, LOWEST_LEVEL

MAX_LINE_BYTES = 4096
# TREC's ids are short; these keep one bad file from filling the memory with one.
MAX_ID_CHARACTERS = 500
MAX_TAG_CHARACTERS = 100
MAX_PROBLEMS = 20


class FileProblems(ValueError):
    """What is wrong with the files, each problem naming its file and line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Collector:
    problems: list[str] = field(default_factory=list)
    more: int = 0

    def add(self, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.more += 1

    def raise_if_any(self) -> None:
        if self.problems:
            hidden = [f"... and {self.more} more problems"] if self.more else []
            raise FileProblems([*self.problems, *hidden])


@dataclass(frozen=True)
class Run:
    """Each query's results in trec_eval's order (score, then docno, both descending)
    and the run's tag (its first line's)."""

    rankings: dict[str, list[str]]
    tag: str


def read_qrels(stream: IO[bytes], name: str, problems: Collector) -> dict[str, dict[str, int]]:
    """qid -> docno -> level."""
    judged: dict[str, dict[str, int]] = {}
    for number, columns in _lines(stream, name, problems):
        where = f"{name} line {number}"
        if len(columns) != 4:
            problems.add(f"{where}: expected 4 columns (qid iteration docno level)")
            continue
        qid, _, docno, level_text = columns
        level = _level(level_text)
        if level is None:
            problems.add(
                f"{where}: level {level_text[:20]!r} must be a whole number from "
                f"{LOWEST_LEVEL} to {HIGHEST_LEVEL}"
            )
        elif _ids_fit(where, qid, docno, problems):
            levels = judged.setdefault(qid, {})
            if docno in levels:
                problems.add(f"{where}: docno {docno!r} judged twice for qid {qid!r}")
            levels[docno] = level
    return judged


def read_run(stream: IO[bytes], name: str, problems: Collector) -> Run:
    scored: dict[str, dict[str, float]] = {}
    tag = ""
    for number, columns in _lines(stream, name, problems):
        where = f"{name} line {number}"
        if len(columns) < 6:
            problems.add(f"{where}: expected 6 columns (qid Q0 docno rank score tag)")
            continue
        qid, _, docno, _, score_text = columns[:5]
        tag = tag or columns[5][:MAX_TAG_CHARACTERS]
        score = _score(score_text)
        if score is None:
            problems.add(f"{where}: score {score_text[:20]!r} is not a finite number")
        elif _ids_fit(where, qid, docno, problems):
            results = scored.setdefault(qid, {})
            if docno in results:
                problems.add(f"{where}: docno {docno!r} retrieved twice for qid {qid!r}")
            results[docno] = score
    rankings = {
        qid: sorted(results, key=lambda docno: (results[docno], docno), reverse=True)
        for qid, results in scored.items()
    }
    return Run(rankings, tag)


def _lines(stream: IO[bytes], name: str, problems: Collector) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) of every line that is not blank, each at most
    MAX_LINE_BYTES long and UTF-8 text without NUL characters."""
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            problems.add(f"{name} line {number}: longer than {MAX_LINE_BYTES} bytes")
            raise FileProblems(problems.problems)  # the rest cannot be told apart
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.add(f"{name} line {number}: not UTF-8 text")
            continue
        if number == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark is not part of the qid
        if "\x00" in line:
            problems.add(f"{name} line {number}: contains a NUL character")
            continue
        if columns := line.split():
            yield number, columns


def _ids_fit(where: str, qid: str, docno: str, problems: Collector) -> bool:
    for what, text in (("qid", qid), ("docno", docno)):
        if len(text) > MAX_ID_CHARACTERS:
            problems.add(f"{where}: {what} longer than {MAX_ID_CHARACTERS} characters")
            return False
    return True


def _level(text: str) -> int | None:
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 3:
        return None
    level = int(text)
    return level if LOWEST_LEVEL <= level <= HIGHEST_LEVEL else None


def _score(text: str) -> float | None:
    # ASCII only: Python's float() also reads "١" and "1_0", which trec_eval does not.
    if len(text) > 64 or not text.isascii() or "_" in text:
        return None
    try:
        score = float(text)
    except ValueError:
        return None
    return score if math.isfinite(score) else None
