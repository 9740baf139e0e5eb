"""Import TREC files: a run (the results), optionally qrels (the grades) and topics.

- Run `qid Q0 docno rank score tag`: one keyword per qid, in the order the qids first
  appear; its snapshots in trec_eval's order (score descending, ties by docno
  descending) at positions 1, 2, ...; with keep_rank, at the positions the rank column
  gives instead (whole numbers from 1, once per qid). Text after the tag is ignored, as
  trec_eval ignores it.
- Qrels `qid iteration docno grade`: one graded slot (index 0, no grader) per (qid, docno)
  of the run. A judged document the run did not retrieve is kept as the keyword's
  unretrieved judgement (the trec profile counts it in R and the ideal ranking, as
  trec_eval does), and a qid judged but not run becomes a keyword without results.
  On a binary evaluation grades >= 1 are relevant (1), the others 0; on the other
  scales a grade must be one of the scale's.
- Topics `qid<TAB>text`: the keyword text of a qid; a qid without a topic keeps its own
  text. Every keyword keeps its qid (models.TrecQuery), which the TREC exports write
  back (query_ids.py). qids and docnos are read as trec_columns.from_column describes,
  so the files an export writes read back into the same keywords and documents.

The run and qrels are read query by query (line_index.py), so memory holds one query's
lines, not the files'. Writing starts as the first queries are read; a problem found
later stops it and the transaction is rolled back, so nothing is half written. Every
problem is reported as `<file name> line N: ...`, each file's in line order.
"""

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction

from apps import engine
from apps.accounts.models import Team
from apps.core.typed import BIGINT_MAX, BIGINT_MIN, parse_int
from apps.evaluations.models import Evaluation, Keyword
from apps.evaluations.scales import levels_found

from .checks import DOC_ID_LIMIT, KEYWORD_LIMIT, MAX_POSITION
from .collector import fewer_collections
from .creation import evaluation_for_import, writer_for
from .line_index import index_lines, numbered_lines, stretches_of
from .models import TrecQuery
from .problems import Problems, ProblemsByLine
from .rows import SlotGrade, SnapshotRow
from .text_files import file_name, not_text_problem
from .trec_columns import from_column

# The run tag kept as the evaluation's run id: trec_eval's tags are short names.
RUN_TAG_LIMIT = 100


@dataclass(slots=True)
class _Result:
    docno: str  # the column as written, for trec_eval's tie order
    score: float
    rank: int
    line: int


@dataclass
class _Query:
    results: dict[str, _Result]  # by doc id (the docno decoded)


@dataclass
class TrecReport:
    """What a TREC import did with what the files held (counts)."""

    keywords: int = 0
    results: int = 0
    # Results of the run that no qrels line judges: not relevant, and left to the graders.
    results_without_judgements: int = 0
    # qrels lines for documents the run did not retrieve: kept as unretrieved judgements.
    judged_not_retrieved: int = 0
    # Results that share their score with another result of their query: trec_eval
    # orders them by docno, descending, and so does the import (not with keep_rank).
    score_ties_broken_by_docno: int = 0
    # qids with qrels lines but no result: keywords without results.
    queries_with_judgements_only: int = 0

    def add(self, query: "_Query", grades: dict[str, int], *, keep_rank: bool) -> None:
        """Count one keyword: its results and its judgements (docno -> grade)."""
        self.keywords += 1
        self.results += len(query.results)
        self.queries_with_judgements_only += not query.results
        self.results_without_judgements += sum(docno not in grades for docno in query.results)
        self.judged_not_retrieved += sum(docno not in query.results for docno in grades)
        if not keep_rank:
            scores = Counter(result.score for result in query.results.values())
            self.score_ties_broken_by_docno += sum(n for n in scores.values() if n > 1)

    def summary(self) -> str:
        """What the import did, in one sentence without the findings that are zero:
        "2 keywords with 3 results; 1 result without judgements"."""
        findings = [
            _counted(self.results_without_judgements, "result", "results") + " without judgements",
            _counted(self.judged_not_retrieved, "judged document", "judged documents")
            + " not retrieved",
            _counted(
                self.score_ties_broken_by_docno, "result in a score tie", "results in score ties"
            )
            + ", ordered by docno",
            _counted(self.queries_with_judgements_only, "query", "queries")
            + " with judgements only",
        ]
        found = [text for text in findings if not text.startswith("0 ")]
        totals = (
            f"{_counted(self.keywords, 'keyword', 'keywords')} with "
            f"{_counted(self.results, 'result', 'results')}"
        )
        return "; ".join([totals, ", ".join(found)]) if found else totals


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


@dataclass
class TrecImport:
    evaluation: Evaluation
    report: TrecReport


def import_trec(
    *,
    team: Team,
    run: IO[bytes],
    qrels: IO[bytes] | None = None,
    topics: IO[bytes] | None = None,
    name: str,
    scale: str,
    metrics: Sequence[tuple[str, int]],
    scale_levels: Mapping[str, Any] | None = None,
    relevant_from: int = 1,
    profile: str = "searchtweak",
    strategy: int = 1,
    keep_rank: bool = False,
    zero_without_results: bool = False,
    created_by: Any = None,
    progress: Callable[[int], None] | None = None,
) -> TrecImport:
    """Create a pending evaluation from TREC files, with the qrels' grades and metrics,
    and report what was done with them.

    `run` and `qrels` are files (each is read twice). `scale` "custom" without
    `scale_levels` takes the levels the qrels hold (from the lowest, or 0, to the
    highest), relevant from `relevant_from` (trec_eval's relevance level, 1 unless told).
    `progress` as for import_document. Raises InvalidInput listing every problem
    (settings, then `<file> line N: ...`); then nothing is written.
    """
    problems = Problems()
    # A picture or an archive chosen by mistake: one line for it, nothing read further.
    for stream, default in ((run, "run"), (qrels, "qrels"), (topics, "topics")):
        problem = (
            not_text_problem(stream, file_name(stream, default)) if stream is not None else None
        )
        if problem:
            problems.add(problem)
    problems.raise_if_any()
    if scale == "custom" and scale_levels is None:
        held = _levels_in(qrels) if qrels is not None else []
        scale_levels = levels_found(held, relevant_from=relevant_from)
    with transaction.atomic():
        evaluation = evaluation_for_import(
            team=team,
            arguments={
                "name": name,
                "scale": scale,
                "scale_levels": scale_levels,
                "metrics": list(metrics),
                "profile": profile,
                "strategy": strategy,
                "zero_without_results": zero_without_results,
            },
            tag_names=[],
            created_by=created_by,
            problems=problems,
        )
        texts = _read_topics(topics, problems) if topics is not None else {}
        # The grades are checked on the evaluation's scale (when its settings are valid).
        native = evaluation.grading_scale if evaluation is not None else engine.SCALES.get(scale)
        files = _TrecFiles(run, qrels, native, keep_rank=keep_rank)
        keyword_problems = Problems()
        keywords = _keyword_texts(files, texts, keyword_problems)
        # Writing starts while the lines are read; a problem found later stops it, and
        # the transaction is rolled back, so nothing is half written.
        writable = evaluation if not problems and not keyword_problems else None
        report = TrecReport()
        with (
            fewer_collections(),
            writer_for(writable, progress, source_label="TREC import") as writer,
        ):
            for qid in files.qids():
                query, grades = files.read(qid)
                if writer is not None and files.problems_found():
                    writer.stop()
                if writer is None or writer.stopped:
                    continue
                rows = _snapshot_rows(query, grades, keep_rank=keep_rank)
                unretrieved = [
                    (doc_id, grade)
                    for doc_id, grade in grades.items()
                    if doc_id not in query.results
                ]
                writer.add(keywords[qid], rows, unretrieved)
                report.add(query, grades, keep_rank=keep_rank)
            files.report_problems(problems)
            problems.take(keyword_problems)
            problems.raise_if_any()
            assert writer is not None and evaluation is not None  # no problem: both exist
            writer.close()
        evaluation.run_tag = _run_tag(run)
        evaluation.save(update_fields=["run_tag"])
        _keep_qids(evaluation, keywords)
    evaluation.refresh_from_db()
    return TrecImport(evaluation, report)


class _TrecFiles:
    """The run and the qrels read query by query (line_index.py), each qid's lines
    checked as they are read; the problems are kept per file in line order."""

    def __init__(
        self,
        run: IO[bytes],
        qrels: IO[bytes] | None,
        scale: engine.Scale | None,
        *,
        keep_rank: bool,
    ) -> None:
        self.run, self.qrels, self.scale, self.keep_rank = run, qrels, scale, keep_rank
        self.run_file = file_name(run, "run")
        self.qrels_file = file_name(qrels, "qrels")
        self.run_index = index_lines(run)
        self.qrels_index = index_lines(qrels) if qrels is not None else {}
        self.run_problems = ProblemsByLine()
        self.qrels_problems = ProblemsByLine()

    def qids(self) -> list[str]:
        """The run's qids in the order they first appear, then those only judged."""
        judged_only = [qid for qid in self.qrels_index if qid not in self.run_index]
        return [*self.run_index, *judged_only]

    def first_line(self, qid: str) -> str:
        """Where a qid first appears: `<file> line N`, in the run if it is there."""
        file = self.run_file if qid in self.run_index else self.qrels_file
        return f"{file} line {self.first_line_number(qid)}"

    def first_line_number(self, qid: str) -> int:
        found = self.run_index.get(qid) or self.qrels_index[qid]
        return found.first_line

    def read(self, qid: str) -> tuple["_Query", dict[str, int]]:
        """A qid's results and its judgements (doc id -> grade)."""
        results: dict[str, _Result] = {}
        if qid in self.run_index:
            lines = _columns(
                stretches_of(self.run, self.run_index[qid]), self.run_file, self.run_problems
            )
            results = _read_run_query(
                qid, lines, self.run_file, self.run_problems, keep_rank=self.keep_rank
            )
        grades: dict[str, int] = {}
        if self.qrels is not None and qid in self.qrels_index:
            lines = _columns(
                stretches_of(self.qrels, self.qrels_index[qid]),
                self.qrels_file,
                self.qrels_problems,
            )
            grades = _read_qrels_query(qid, lines, self.scale, self.qrels_file, self.qrels_problems)
        return _Query(results), grades

    def problems_found(self) -> bool:
        return bool(self.run_problems) or bool(self.qrels_problems)

    def report_problems(self, problems: Problems) -> None:
        """The run's problems, then the qrels', each in line order."""
        self.run_problems.move_to(problems)
        self.qrels_problems.move_to(problems)


def _keep_qids(evaluation: Evaluation, keywords: dict[str, str]) -> None:
    """Each keyword's qid as the files wrote it, for the TREC exports (query_ids.py)."""
    ids = dict(Keyword.objects.filter(evaluation=evaluation).values_list("text", "id"))
    TrecQuery.objects.bulk_create(
        [TrecQuery(keyword_id=ids[text], qid=qid) for qid, text in keywords.items()],
        batch_size=5_000,
    )


def _columns(
    stretches: Iterable[tuple[int, bytes]], file: str, problems: "ProblemsByLine"
) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) of every line that is not blank. A stretch of lines is
    decoded and searched at once; only one that is not UTF-8 or holds a NUL, a "%" or
    the first line is checked line by line."""
    for first, block in stretches:
        lines, suspect = _split_stretch(first, block)
        for number, line in enumerate(lines, start=first):
            checked = _checked_line(number, line, file, problems) if suspect else line
            columns = checked.split() if isinstance(checked, str) else None
            if columns:
                yield number, columns


def _split_stretch(first: int, block: bytes) -> tuple[Sequence[str | bytes], bool]:
    """A stretch's lines, decoded when it is all UTF-8, and whether they need checking."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        return block.split(b"\n"), True
    return text.split("\n"), first == 1 or "\x00" in text or "%" in text


def _checked_line(
    number: int, raw: str | bytes, file: str, problems: "ProblemsByLine"
) -> str | None:
    """A line as text, or None after reporting why it cannot be read."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.add(number, f"{file} line {number}: not UTF-8 text")
            return None
    line = raw.removeprefix("\ufeff") if number == 1 else raw  # not part of the first qid
    if "\x00" in line:
        problems.add(number, f"{file} line {number}: contains a NUL character")
        return None
    # "%00" would decode (trec_columns.from_column) to the NUL no text column can hold.
    if "%" in line and any(
        "\x00" in from_column(column) for column in line.split() if "%" in column
    ):
        problems.add(number, f"{file} line {number}: a column decodes to a NUL character (%00)")
        return None
    return line


def _read_topics(stream: IO[bytes], problems: Problems) -> dict[str, str]:
    file = file_name(stream, "topics")
    texts: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            problems.add(f"{file} line {number}: not UTF-8 text")
            continue
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        if "\x00" in line:
            problems.add(f"{file} line {number}: contains a NUL character")
            continue
        qid, tab, text = line.rstrip("\r\n").partition("\t")
        qid = qid.strip()
        if not tab or not qid or not text.strip():
            problems.add(f"{file} line {number}: expected qid<TAB>text")
        elif qid in texts:
            problems.add(f"{file} line {number}: qid {qid!r} given twice (line {lines[qid]})")
        else:
            texts[qid] = text.strip()
            lines[qid] = number
    return texts


def _read_run_query(
    qid: str,
    lines: Iterable[tuple[int, list[str]]],
    file: str,
    problems: "ProblemsByLine",
    *,
    keep_rank: bool,
) -> dict[str, _Result]:
    """One qid's results (by doc id) from its run lines."""
    results: dict[str, _Result] = {}
    for number, columns in lines:
        where = f"{file} line {number}"
        if len(columns) < 6:
            problems.add(
                number,
                f"{where}: expected 6 columns (qid Q0 docno rank score tag), got {len(columns)}",
            )
            continue
        # Text after the tag is ignored, as trec_eval ignores it.
        _, _, docno, rank_text, score_text = columns[:5]
        score = _float(score_text)
        if score is None:
            problems.add(number, f"{where}: score {score_text!r} is not a number")
        # The rank column is read only when it gives the positions (trec_eval ignores it).
        rank = _whole(rank_text) if keep_rank else 0
        if keep_rank and (rank is None or not 1 <= rank <= MAX_POSITION):
            problems.add(
                number,
                f"{where}: rank {rank_text!r} is not a whole number from 1 to {MAX_POSITION}",
            )
            rank = None
        doc_id = from_column(docno)
        if len(doc_id) > DOC_ID_LIMIT:
            problems.add(number, f"{where}: docno longer than {DOC_ID_LIMIT} characters")
        first = results.get(doc_id)
        if first is not None:
            problems.add(
                number,
                f"{where}: docno {docno!r} given twice for qid {qid!r} (line {first.line})",
            )
        elif score is not None:
            results[doc_id] = _Result(docno, score, rank or 0, number)
    if keep_rank:
        seen: dict[int, int] = {}
        for result in results.values():
            first_line = seen.setdefault(result.rank, result.line)
            if first_line != result.line and result.rank >= 1:
                problems.add(
                    result.line,
                    f"{file} line {result.line}: rank {result.rank} given twice for "
                    f"qid {qid!r} (line {first_line})",
                )
    return results


def _run_tag(stream: IO[bytes]) -> str:
    """The run's tag: the first line's with a tag, as trec_eval reads it."""
    for _, _, line in numbered_lines(stream):
        columns = line.split()
        if len(columns) >= 6:
            return columns[5].decode("utf-8", errors="replace")[:RUN_TAG_LIMIT]
    return ""


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _whole(text: str) -> int | None:
    return parse_int(text, BIGINT_MIN, BIGINT_MAX)


def _keyword_texts(
    files: "_TrecFiles", topics: dict[str, str], problems: Problems
) -> dict[str, str]:
    """qid -> its keyword: the topic's text, else the qid decoded; each distinct."""
    texts: dict[str, str] = {}
    owner: dict[str, str] = {}
    for qid in files.qids():
        text = topics.get(qid) or from_column(qid).strip()
        where = files.first_line(qid)
        if not text:
            problems.add(f"{where}: qid {qid!r} gives an empty keyword")
        elif len(text) > KEYWORD_LIMIT:
            problems.add(f"{where}: keyword of qid {qid!r} longer than {KEYWORD_LIMIT} characters")
        elif text in owner:
            problems.add(
                f"{where}: qid {qid!r} gives the keyword {text!r} of qid {owner[text]!r} "
                f"(line {files.first_line_number(owner[text])})"
            )
        owner.setdefault(text, qid)
        texts[qid] = text
    return texts


def _levels_in(stream: IO[bytes]) -> list[int]:
    """The distinct grades of the qrels' well-formed lines (the real read reports the
    others); the stream is read from the start and left there again."""
    found: set[int] = set()
    for raw in stream:
        columns = raw.split()
        if len(columns) == 4:
            text = columns[3]
            grade = _whole(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
            if grade is not None:
                found.add(grade)
    stream.seek(0)
    return sorted(found)


def _read_qrels_query(
    qid: str,
    lines: Iterable[tuple[int, list[str]]],
    scale: engine.Scale | None,
    file: str,
    problems: "ProblemsByLine",
) -> dict[str, int]:
    """One qid's judgements (doc id -> grade on the evaluation's scale), every line kept:
    those of documents the run did not retrieve too, and of qids it did not run."""
    grades: dict[str, int] = {}
    lines_of_docs: dict[str, int] = {}
    for number, columns in lines:
        where = f"{file} line {number}"
        if len(columns) != 4:
            problems.add(
                number,
                f"{where}: expected 4 columns (qid iteration docno grade), got {len(columns)}",
            )
            continue
        _, _, docno, grade_text = columns
        grade = _whole(grade_text)
        if grade is None:
            problems.add(number, f"{where}: grade {grade_text!r} is not a whole number")
            continue
        doc_id = from_column(docno)
        if doc_id in lines_of_docs:
            problems.add(
                number,
                f"{where}: docno {docno!r} judged twice for qid {qid!r} "
                f"(line {lines_of_docs[doc_id]})",
            )
            continue
        lines_of_docs[doc_id] = number
        if len(doc_id) > DOC_ID_LIMIT:
            problems.add(number, f"{where}: docno longer than {DOC_ID_LIMIT} characters")
            continue
        if scale is None:
            continue  # the scale itself is wrong, and already reported
        if scale.name == "binary":
            grade = 1 if grade >= 1 else 0
        elif grade not in scale.grades:
            problems.add(
                number,
                f"{where}: grade {grade} is not a {scale.name} grade {scale.describe_grades()}",
            )
            continue
        grades[doc_id] = grade
    return grades


def _snapshot_rows(query: _Query, grades: dict[str, int], *, keep_rank: bool) -> list[SnapshotRow]:
    results = list(query.results.items())
    if keep_rank:
        ordered = sorted(results, key=lambda item: item[1].rank)
        positions = [result.rank for _, result in ordered]
    else:
        ordered = sorted(results, key=lambda item: (item[1].score, item[1].docno), reverse=True)
        positions = list(range(1, len(ordered) + 1))
    rows: list[SnapshotRow] = []
    for position, (doc_id, _) in zip(positions, ordered, strict=True):
        grade = grades.get(doc_id)
        slots: list[SlotGrade | None] = [] if grade is None else [(grade, None, "", "", "", None)]
        rows.append((position, doc_id, "", "", "{}", slots, None))
    return rows
