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

The files are read whole and checked before anything is written; every problem is
reported as `<file name> line N: ...`.
"""

import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction

from apps import engine
from apps.accounts.models import Team
from apps.core.typed import BIGINT_MAX, BIGINT_MIN, parse_int
from apps.evaluations.models import Evaluation, Keyword
from apps.evaluations.scales import levels_found

from .checks import DOC_ID_LIMIT, KEYWORD_LIMIT, MAX_POSITION
from .creation import evaluation_for_import, writer_for
from .models import TrecQuery
from .problems import Problems
from .rows import SlotGrade, SnapshotRow
from .text_files import file_name, not_text_problem
from .trec_columns import from_column

# The run tag kept as the evaluation's run id: trec_eval's tags are short names.
RUN_TAG_LIMIT = 100


@dataclass
class _Result:
    docno: str  # the column as written, for trec_eval's tie order
    score: float
    rank: int
    line: int


@dataclass
class _Query:
    line: int  # where the qid first appears
    results: dict[str, _Result]  # by doc id (the docno decoded)
    file: str | None = None  # where it appears, when not in the run (the qrels)


@dataclass
class _Judged:
    line: int  # where the qid first appears in the qrels
    grades: dict[str, int]  # doc id (docno decoded) -> grade on the evaluation's scale


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

    `scale` "custom" without `scale_levels` takes the levels the qrels hold (from the
    lowest, or 0, to the highest), relevant from `relevant_from` (trec_eval's relevance
    level, 1 unless told). `progress` as for import_document. Raises InvalidInput listing
    every problem (settings, then `<file> line N: ...`); then nothing is written.
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
        queries, run_tag = _read_run(run, keep_rank=keep_rank, problems=problems)
        # The grades are checked on the evaluation's scale (when its settings are valid).
        native = evaluation.grading_scale if evaluation is not None else engine.SCALES.get(scale)
        judgements = _read_qrels(qrels, native, problems) if qrels is not None else {}
        for qid, judged in judgements.items():
            # A query judged but not run: a keyword without results (trec_eval -c counts it).
            queries.setdefault(qid, _Query(judged.line, {}, file_name(qrels, "qrels")))
        keywords = _keyword_texts(queries, texts, file_name(run, "run"), problems)
        problems.raise_if_any()
        assert evaluation is not None  # no problem: it exists
        evaluation.run_tag = run_tag
        evaluation.save(update_fields=["run_tag"])
        report = TrecReport()
        with writer_for(evaluation, progress, source_label="TREC import") as writer:
            assert writer is not None and evaluation is not None  # no problem: both exist
            for qid, query in queries.items():
                found = judgements.get(qid)
                grades = found.grades if found is not None else {}
                rows = _snapshot_rows(query, grades, keep_rank=keep_rank)
                unretrieved = [
                    (doc_id, grade)
                    for doc_id, grade in grades.items()
                    if doc_id not in query.results
                ]
                writer.add(keywords[qid], rows, unretrieved)
                report.add(query, grades, keep_rank=keep_rank)
            writer.close()
        _keep_qids(evaluation, keywords)
    evaluation.refresh_from_db()
    return TrecImport(evaluation, report)


def _keep_qids(evaluation: Evaluation, keywords: dict[str, str]) -> None:
    """Each keyword's qid as the files wrote it, for the TREC exports (query_ids.py)."""
    ids = dict(Keyword.objects.filter(evaluation=evaluation).values_list("text", "id"))
    TrecQuery.objects.bulk_create(
        [TrecQuery(keyword_id=ids[text], qid=qid) for qid, text in keywords.items()],
        batch_size=5_000,
    )


def _lines(stream: IO[bytes], file: str, problems: Problems) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) of every line that is not blank."""
    for number, raw in enumerate(stream, start=1):
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(f"{file} line {number}: not UTF-8 text")
                continue
        else:
            line = raw
        if number == 1:  # a byte-order mark is not part of the first qid
            line = line.removeprefix("\ufeff")
        if "\x00" in line:
            problems.add(f"{file} line {number}: contains a NUL character")
            continue
        columns = line.split()
        # "%00" would decode (trec_columns.from_column) to the NUL no text column can hold.
        if any("\x00" in from_column(column) for column in columns if "%" in column):
            problems.add(f"{file} line {number}: a column decodes to a NUL character (%00)")
            continue
        if columns:
            yield number, columns


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


def _read_run(
    stream: IO[bytes], *, keep_rank: bool, problems: Problems
) -> tuple[dict[str, _Query], str]:
    """The run's queries, and its tag (the first line's, as trec_eval reads it)."""
    file = file_name(stream, "run")
    queries: dict[str, _Query] = {}
    tag = ""
    for number, columns in _lines(stream, file, problems):
        where = f"{file} line {number}"
        if len(columns) < 6:
            problems.add(
                f"{where}: expected 6 columns (qid Q0 docno rank score tag), got {len(columns)}"
            )
            continue
        # Text after the tag is ignored, as trec_eval ignores it.
        qid, _, docno, rank_text, score_text = columns[:5]
        if not tag:
            tag = columns[5][:RUN_TAG_LIMIT]
        score = _float(score_text)
        if score is None:
            problems.add(f"{where}: score {score_text!r} is not a number")
        rank = _whole(rank_text)
        if keep_rank and (rank is None or not 1 <= rank <= MAX_POSITION):
            problems.add(
                f"{where}: rank {rank_text!r} is not a whole number from 1 to {MAX_POSITION}"
            )
            rank = None
        doc_id = from_column(docno)
        if len(doc_id) > DOC_ID_LIMIT:
            problems.add(f"{where}: docno longer than {DOC_ID_LIMIT} characters")
        query = queries.setdefault(qid, _Query(number, {}))
        first = query.results.get(doc_id)
        if first is not None:
            problems.add(
                f"{where}: docno {docno!r} given twice for qid {qid!r} (line {first.line})"
            )
        elif score is not None:
            query.results[doc_id] = _Result(docno, score, rank or 0, number)
    if keep_rank:
        for qid, query in queries.items():
            seen: dict[int, int] = {}
            for result in query.results.values():
                first_line = seen.setdefault(result.rank, result.line)
                if first_line != result.line and result.rank >= 1:
                    problems.add(
                        f"{file} line {result.line}: rank {result.rank} given twice for "
                        f"qid {qid!r} (line {first_line})"
                    )
    return queries, tag


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _whole(text: str) -> int | None:
    return parse_int(text, BIGINT_MIN, BIGINT_MAX)


def _keyword_texts(
    queries: dict[str, _Query], topics: dict[str, str], file: str, problems: Problems
) -> dict[str, str]:
    texts: dict[str, str] = {}
    owner: dict[str, str] = {}
    for qid, query in queries.items():
        text = topics.get(qid) or from_column(qid).strip()
        where = f"{query.file or file} line {query.line}"
        if not text:
            problems.add(f"{where}: qid {qid!r} gives an empty keyword")
        elif len(text) > KEYWORD_LIMIT:
            problems.add(f"{where}: keyword of qid {qid!r} longer than {KEYWORD_LIMIT} characters")
        elif text in owner:
            problems.add(
                f"{where}: qid {qid!r} gives the keyword {text!r} of qid {owner[text]!r} "
                f"(line {queries[owner[text]].line})"
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


def _read_qrels(
    stream: IO[bytes], scale: engine.Scale | None, problems: Problems
) -> dict[str, _Judged]:
    """qid -> its judgements (docno -> grade on the evaluation's scale), every line kept:
    those of documents the run did not retrieve too, and of qids it did not run."""
    file = file_name(stream, "qrels")
    judged: dict[str, _Judged] = {}
    lines: dict[tuple[str, str], int] = {}
    for number, columns in _lines(stream, file, problems):
        where = f"{file} line {number}"
        if len(columns) != 4:
            problems.add(
                f"{where}: expected 4 columns (qid iteration docno grade), got {len(columns)}"
            )
            continue
        qid, _, docno, grade_text = columns
        grade = _whole(grade_text)
        if grade is None:
            problems.add(f"{where}: grade {grade_text!r} is not a whole number")
            continue
        doc_id = from_column(docno)
        key = (qid, doc_id)
        if key in lines:
            problems.add(
                f"{where}: docno {docno!r} judged twice for qid {qid!r} (line {lines[key]})"
            )
            continue
        lines[key] = number
        if len(doc_id) > DOC_ID_LIMIT:
            problems.add(f"{where}: docno longer than {DOC_ID_LIMIT} characters")
            continue
        if scale is None:
            continue  # the scale itself is wrong, and already reported
        if scale.name == "binary":
            grade = 1 if grade >= 1 else 0
        elif grade not in scale.grades:
            problems.add(
                f"{where}: grade {grade} is not a {scale.name} grade {scale.describe_grades()}"
            )
            continue
        judged.setdefault(qid, _Judged(number, {})).grades[doc_id] = grade
    return judged


def _snapshot_rows(query: _Query, grades: dict[str, int], *, keep_rank: bool) -> list[SnapshotRow]:
    results = list(query.results.values())
    if keep_rank:
        ordered = sorted(results, key=lambda result: result.rank)
        positions = [result.rank for result in ordered]
    else:
        ordered = sorted(results, key=lambda result: (result.score, result.docno), reverse=True)
        positions = list(range(1, len(ordered) + 1))
    rows: list[SnapshotRow] = []
    for position, result in zip(positions, ordered, strict=True):
        doc_id = from_column(result.docno)
        grade = grades.get(doc_id)
        slots: list[SlotGrade | None] = [] if grade is None else [(grade, None, "", "", "", None)]
        rows.append((position, doc_id, "", "", "{}", slots, None))
    return rows
