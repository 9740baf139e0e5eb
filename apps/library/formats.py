"""Judgement lists, (query text, doc id, grade) triples, read and written in four
published formats: TREC qrels (with a queries file), Quepid's judgement CSV, the
OpenSearch Search Relevance Workbench's imported judgment list (JSON) and the
learning-to-rank judgment list of RankLib and the Elasticsearch and OpenSearch LTR plugins.

A reader returns the judgements it could read and every problem with where it is (a
line, or a JSON path such as `judgmentRatings[3].ratings[1]`). A writer refuses
(FormatError) what its reader would refuse, so whatever it writes reads back as the same
triples. Pure: the standard library and apps.core.bounded_json's depth check, no Django.
"""

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from apps.core.bounded_json import JsonLimitError, check_depth

Judgement = tuple[str, str, int]

MAX_JUDGEMENTS = 1_000_000
QUERY_LIMIT = 500
DOC_ID_LIMIT = 500
# Wide enough for every published scale (TREC's -2 "junk" to 0-99 click scores); the
# service checks each grade against the evaluation's scale.
LOWEST_GRADE = -9
HIGHEST_GRADE = 99
PROBLEM_LIMIT = 200
# An imported SRW list nests five levels: body, judgmentRatings, a query, its ratings, a
# rating. Anything deeper is not this format.
SRW_DEPTH = 5
SRW_TYPE = "IMPORT_JUDGMENT"
SRW_QUERY_KEYS = frozenset({"query", "ratings"})
SRW_RATING_KEYS = frozenset({"docId", "rating"})
# A rating object holds one comma and is followed by one: a body of MAX_JUDGEMENTS
# ratings has about two per judgement, and a few more in texts. More means values the
# format does not hold, refused before json builds them all in memory.
SRW_COMMAS_PER_JUDGEMENT = 8
# A RankLib file holds a line per judgement, a header per query and a few comments.
RANKLIB_LINES = 3 * MAX_JUDGEMENTS
QUEPID_HEADER = ("query", "docid", "rating")
WHOLE_GRADES = "Relevo's grades are whole numbers on the evaluation's scale"

# Control characters (C0, DEL, C1) and lone surrogates: no format holds them in a query
# or doc id (a tab or a line break would split a qrels or RankLib line), so none is
# allowed anywhere and a list read from one format can be written in any other.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return"}
_WHITESPACE = re.compile(r"\s")
_ESCAPED_BYTE = re.compile(r"[\udc80-\udcff]")
# A grade as text: a whole number, or one with a fraction of zeros ("3.000", as SRW writes).
_NUMBER = re.compile(r"[+-]?([0-9]{1,20})(?:\.([0-9]{1,30}))?")
# A line from its first character that is not blank: the regular expression engine skips
# blank lines, so a file of them costs no Python step per line.
_FILLED_LINE = re.compile(r"\S[^\n]*")
_RANKLIB_HEADER = re.compile(r"#\s*qid:([^\s:]+):(.*)")
_RANKLIB_FEATURE = re.compile(r"[^\s:]+:\S+")


@dataclass(frozen=True, slots=True)
class ListedJudgement:
    query: str
    doc_id: str
    grade: int
    where: str  # "line 12", "queries line 3" or "judgmentRatings[3].ratings[1]"

    def triple(self) -> Judgement:
        return (self.query, self.doc_id, self.grade)


@dataclass(frozen=True)
class ListProblem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class ListRead:
    """What a reader found: the judgements read without a problem, the first
    PROBLEM_LIMIT problems in the order found, and how many more there were."""

    judgements: list[ListedJudgement] = field(default_factory=list)
    problems: list[ListProblem] = field(default_factory=list)
    more_problems: int = 0

    def messages(self) -> list[str]:
        """Every listed problem as "where: message", then "... and N more problems"."""
        listed = [str(problem) for problem in self.problems]
        if self.more_problems:
            listed.append(f"... and {self.more_problems} more problems")
        return listed

    def add_problem(self, where: str, message: str) -> None:
        if len(self.problems) < PROBLEM_LIMIT:
            self.problems.append(ListProblem(where, message))
        else:
            self.more_problems += 1


class FormatError(ValueError):
    """Judgements a format cannot write; `problems` names each ("judgement 3: ...")."""

    def __init__(self, problems: list[ListProblem], more_problems: int = 0) -> None:
        self.problems = problems
        self.more_problems = more_problems
        listed = [str(problem) for problem in problems]
        if more_problems:
            listed.append(f"... and {more_problems} more problems")
        super().__init__("; ".join(listed))


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _text_problem(name: str, text: str, limit: int) -> str | None:
    if not text:
        return f"{name} is empty"
    if len(text) > limit:
        return f"{name} is longer than {limit} characters ({len(text):,})"
    control = _CONTROL.search(text)
    if control:
        char = control.group()
        if "\ud800" <= char <= "\udfff":
            named = f"a lone surrogate U+{ord(char):04X}, which is not valid Unicode"
        else:
            named = _CONTROL_NAMES.get(char, f"the control character U+{ord(char):04X}")
        return f"{name} {_shown(text)} holds {named}"
    return None


def _grade(value: Any) -> tuple[int | None, str]:
    """A grade from text or a JSON number, or None and why not ("is not a number")."""
    if isinstance(value, str) and value.isdecimal() and len(value) <= 2 and value.isascii():
        return int(value), ""  # the common case: "0" to "99"
    if isinstance(value, bool):
        return None, "is not a number"
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None, "is not a number"
        if not value.is_integer():
            return None, f"is not a whole number: {WHOLE_GRADES}"
        number = int(value)
    elif isinstance(value, str):
        match = _NUMBER.fullmatch(value.strip())
        if match is None:
            return None, "is not a number"
        if match.group(2) and match.group(2).strip("0"):
            return None, f"is not a whole number: {WHOLE_GRADES}"
        number = int(value.strip().split(".")[0])
    else:
        return None, "is not a number"
    if not LOWEST_GRADE <= number <= HIGHEST_GRADE:
        return None, f"is outside {LOWEST_GRADE} to {HIGHEST_GRADE}"
    return number, ""


class _Reading:
    """A reader's judgements so far, the (query, doc id) pairs seen and the problems."""

    def __init__(self) -> None:
        self.read = ListRead()
        self.stopped = False
        self._counts: dict[str, int] = {}
        self._seen: dict[str, str] = {}  # "query\x00doc id" -> where it was read

    def problem(self, where: str, message: str) -> None:
        self.read.add_problem(where, message)

    def next_entry(self, where: str, counted: str = "judgements", limit: int = 0) -> bool:
        """Count one more entry (read or refused); past `limit` (MAX_JUDGEMENTS unless
        told), say so and stop, so a reader's work is bounded whatever the file holds."""
        limit = limit or MAX_JUDGEMENTS
        count = self._counts[counted] = self._counts.get(counted, 0) + 1
        if count <= limit:
            return True
        self.problem(where, f"more than {limit:,} {counted}: the file is read no further")
        self.stopped = True
        return False

    def add(
        self,
        where: str,
        query: str,
        doc_id: str,
        grade_value: Any,
        *,
        grade_name: str = "grade",
    ) -> None:
        """Check one judgement (text is stripped) and keep it, or report each problem."""
        query, doc_id = query.strip(), doc_id.strip()
        grade, why = _grade(grade_value)
        query_problem = _text_problem("query", query, QUERY_LIMIT)
        doc_id_problem = _text_problem("doc id", doc_id, DOC_ID_LIMIT)
        if query_problem or doc_id_problem or grade is None:
            if query_problem:
                self.problem(where, query_problem)
            if doc_id_problem:
                self.problem(where, doc_id_problem)
            if grade is None:
                shown = _shown(str(grade_value))
                self.problem(where, f"{grade_name} {shown} {why}")
            return
        # One string, not a tuple: a million tuples would slow the garbage collector.
        # The NUL joining them is a control character, which neither text may hold.
        pair = f"{query}\x00{doc_id}"
        first = self._seen.get(pair)
        if first is not None:
            self.problem(
                where,
                f"query {_shown(query)} and doc id {_shown(doc_id)} judged twice (also {first})",
            )
            return
        self._seen[pair] = where
        self.read.judgements.append(ListedJudgement(query, doc_id, grade, where))


def _decoded(data: bytes | str, reading: _Reading, file: str = "") -> str | None:
    """The data as text without a byte-order mark, or None after naming each line that
    is not UTF-8 (`file` prefixes the location: "queries ")."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        pass
    # Bad bytes decode as lone surrogates U+DC80-U+DCFF, which UTF-8 never gives; the
    # regular expression engine finds them in one pass, whatever the file holds.
    text = data.decode("utf-8", "surrogateescape")
    number, counted_to, position = 1, 0, 0
    while match := _ESCAPED_BYTE.search(text, position):
        number += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        where = f"{file}line {number}"
        if not reading.next_entry(where, "lines that are not UTF-8"):
            break
        reading.problem(where, "not UTF-8 text")
        position = text.find("\n", match.start()) + 1
        if position == 0:
            break
    return None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line from its first character that is not blank) of the lines that
    are not blank. Lines end at "\\n" only: a query may hold U+2028, which
    str.splitlines takes for a line break."""
    number, counted_to = 1, 0
    for match in _FILLED_LINE.finditer(text):
        number += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        yield number, match.group().removesuffix("\r")


def _writable(
    judgements: Iterable[Judgement], *, whitespace_free_doc_ids: str = ""
) -> list[Judgement]:
    """The judgements as a list, or FormatError naming each one a reader would refuse
    or read differently. `whitespace_free_doc_ids` names the line that cannot hold a
    space in a doc id ("a qrels line")."""
    rows: list[Judgement] = []
    read = ListRead()
    seen: dict[str, int] = {}  # "query\x00doc id" -> its number, as _Reading keeps them
    for number, (query, doc_id, grade) in enumerate(judgements, start=1):
        if number > MAX_JUDGEMENTS:
            read.add_problem(f"judgement {number}", f"more than {MAX_JUDGEMENTS:,} judgements")
            break
        found = _unwritable(query, doc_id, grade, whitespace_free_doc_ids)
        if not found:
            first = seen.setdefault(f"{query}\x00{doc_id}", number)
            if first == number:
                rows.append((query, doc_id, grade))
                continue
            found = [
                f"query {_shown(query)} and doc id {_shown(doc_id)} given twice "
                f"(also judgement {first})"
            ]
        for problem in found:
            read.add_problem(f"judgement {number}", problem)
    if read.problems:
        raise FormatError(read.problems, read.more_problems)
    return rows


def _unwritable(query: Any, doc_id: Any, grade: Any, whitespace_free_doc_ids: str) -> list[str]:
    """Why a reader would refuse a judgement or read it back changed; [] if it would not."""
    if not isinstance(query, str) or not isinstance(doc_id, str):
        return ["the query and the doc id must be text"]
    found = []
    for name, text, limit in (("query", query, QUERY_LIMIT), ("doc id", doc_id, DOC_ID_LIMIT)):
        problem = _text_problem(name, text, limit)
        if problem:
            found.append(problem)
        elif text != text.strip():  # readers strip the ends
            found.append(f"{name} {_shown(text)} starts or ends with whitespace")
    if whitespace_free_doc_ids and _WHITESPACE.search(doc_id):
        found.append(
            f"doc id {_shown(doc_id)} holds whitespace, which {whitespace_free_doc_ids} cannot hold"
        )
    if isinstance(grade, bool) or not isinstance(grade, int):
        found.append(f"grade {grade!r} is not a whole number")
    elif not LOWEST_GRADE <= grade <= HIGHEST_GRADE:
        found.append(f"grade {grade} is outside {LOWEST_GRADE} to {HIGHEST_GRADE}")
    return found


def _numbered_queries(rows: list[Judgement]) -> dict[str, int]:
    """Each query's number, 1, 2, ... in the order the queries first appear."""
    numbers: dict[str, int] = {}
    for query, _, _ in rows:
        numbers.setdefault(query, len(numbers) + 1)
    return numbers


def _by_query(rows: list[Judgement]) -> dict[str, list[tuple[str, int]]]:
    """Each query's (doc id, grade) in the order given, the queries in first-seen order."""
    grouped: dict[str, list[tuple[str, int]]] = {}
    for query, doc_id, grade in rows:
        grouped.setdefault(query, []).append((doc_id, grade))
    return grouped


def read_qrels(qrels: bytes | str, queries: bytes | str | None = None) -> ListRead:
    """TREC qrels, `qid iteration docid grade` (the iteration is ignored, as trec_eval
    ignores it), with an optional queries file of `qid<TAB>query text` lines. A qid the
    queries file does not name is itself the query text. Doc ids are read as written
    (no percent-decoding). Problems of the queries file say "queries line N"."""
    reading = _Reading()
    texts: dict[str, str] = {}
    refused: set[str] = set()
    queries_text = _decoded(queries, reading, "queries ") if queries is not None else ""
    if queries_text:
        texts, refused = _qrels_queries(queries_text, reading)
    qrels_text = _decoded(qrels, reading)
    if qrels_text is None or queries_text is None or reading.stopped:
        return reading.read
    for number, line in _lines(qrels_text):
        where = f"line {number}"
        if not reading.next_entry(where):
            break
        columns = line.split()
        if len(columns) != 4:
            reading.problem(
                where, f"expected 4 columns (qid iteration docid grade), got {len(columns)}"
            )
            continue
        qid, _, doc_id, grade = columns
        if qid in refused:
            continue  # its queries line is reported
        reading.add(where, texts.get(qid, qid), doc_id, grade)
    return reading.read


def _qrels_queries(text: str, reading: _Reading) -> tuple[dict[str, str], set[str]]:
    """qid -> query text, and the qids whose text is refused (each reported)."""
    texts: dict[str, str] = {}
    first_lines: dict[str, int] = {}
    refused: set[str] = set()
    for number, line in _lines(text):
        where = f"queries line {number}"
        if not reading.next_entry(where, "queries"):
            break
        qid, tab, query = line.partition("\t")
        qid, query = qid.strip(), query.strip()
        if not tab or not qid:
            reading.problem(where, "expected qid<TAB>query text")
            continue
        if qid in first_lines:
            reading.problem(
                where, f"qid {_shown(qid)} given again (first on queries line {first_lines[qid]})"
            )
            continue
        first_lines[qid] = number
        problem = _text_problem("query", query, QUERY_LIMIT)
        if problem:
            reading.problem(where, problem)
            refused.add(qid)
        else:
            texts[qid] = query
    return texts, refused


def write_qrels(judgements: Iterable[Judgement]) -> str:
    """One `qid 0 docid grade` line per judgement, in the order given; the qids number
    the queries 1, 2, ... in the order they first appear (write_qrels_queries gives
    their texts). A doc id holding whitespace is refused: a qrels column cannot."""
    rows = _writable(judgements, whitespace_free_doc_ids="a qrels line")
    numbers = _numbered_queries(rows)
    return "".join(f"{numbers[query]} 0 {doc_id} {grade}\n" for query, doc_id, grade in rows)


def write_qrels_queries(judgements: Iterable[Judgement]) -> str:
    """The queries file that goes with write_qrels: `qid<TAB>query text` per query,
    numbered as write_qrels numbers them. It refuses what write_qrels refuses."""
    rows = _writable(judgements, whitespace_free_doc_ids="a qrels line")
    return "".join(f"{number}\t{query}\n" for query, number in _numbered_queries(rows).items())


def read_quepid(data: bytes | str) -> ListRead:
    """Quepid's judgement CSV: a header naming the columns query, docid and rating (in
    any order and case, no others), then one row per judgement (RFC 4180 quoting).
    Blank rows are skipped."""
    reading = _Reading()
    text = _decoded(data, reading)
    if text is None:
        return reading.read
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    columns: dict[str, int] | None = None
    last_line = 0
    try:
        for row in rows:
            where, last_line = f"line {last_line + 1}", rows.line_num
            if not any(cell.strip() for cell in row):
                if not reading.next_entry(where, "blank rows"):
                    break
                continue
            if columns is None:
                columns = _quepid_columns(row, where, reading)
                if columns is None:
                    break
                continue
            if not reading.next_entry(where):
                break
            if len(row) != len(QUEPID_HEADER):
                reading.problem(where, f"expected 3 cells (query, docid, rating), got {len(row)}")
                continue
            reading.add(
                where,
                row[columns["query"]],
                row[columns["docid"]],
                row[columns["rating"]],
                grade_name="rating",
            )
    except csv.Error as error:
        reading.problem(f"line {rows.line_num}", f"not readable as CSV: {error}")
    return reading.read


def _quepid_columns(row: list[str], where: str, reading: _Reading) -> dict[str, int] | None:
    """Where each column is, or None after reporting what is wrong with the header."""
    names = [cell.strip().lower() for cell in row]
    columns: dict[str, int] = {}
    problems = []
    for index, name in enumerate(names):
        if name not in QUEPID_HEADER:
            problems.append(
                f"column {_shown(row[index].strip())} is not one of query, docid, rating"
            )
        elif name in columns:
            problems.append(f"column {name!r} given twice")
        columns.setdefault(name, index)
    problems += [f"missing column {name!r}" for name in QUEPID_HEADER if name not in columns]
    for problem in problems:
        reading.problem(where, problem)
    return None if problems else columns


def write_quepid(judgements: Iterable[Judgement]) -> str:
    """The header `query,docid,rating`, then one row per judgement in the order given,
    quoted as RFC 4180 says (lines end in "\\n"). Cells are written as they are, not
    guarded against spreadsheet formulas: Quepid would keep a guard's apostrophe as part
    of the query."""
    rows = _writable(judgements)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(QUEPID_HEADER)
    writer.writerows(rows)
    return out.getvalue()


def read_srw(data: bytes | str) -> ListRead:
    """The body of an SRW judgment list import: {"judgmentRatings": [{"query": ...,
    "ratings": [{"docId": ..., "rating": ...}]}]}. A rating is a JSON number or a
    numeric string ("3.000") and must be whole. The other top-level keys (name,
    description, type) describe the list and are not read."""
    reading = _Reading()
    text = _decoded(data, reading)
    if text is None:
        return reading.read
    if text.count(",") > SRW_COMMAS_PER_JUDGEMENT * MAX_JUDGEMENTS:
        reading.problem("body", f"holds more values than {MAX_JUDGEMENTS:,} judgements need")
        return reading.read
    try:
        # Only the depth check of bounded_json.loads: its scan of every text for NULs
        # and lone surrogates adds 4 s to the 15 s of a million ratings, and the texts
        # read are checked for those (with the other control characters) anyway.
        check_depth(text, SRW_DEPTH)
        body = json.loads(text)
    except JsonLimitError as error:
        reading.problem("body", str(error))
        return reading.read
    except json.JSONDecodeError as error:
        reading.problem(f"line {error.lineno}", f"not JSON: {error.msg} (column {error.colno})")
        return reading.read
    except ValueError as error:  # an integer of thousands of digits
        reading.problem("body", f"not readable as JSON: {error}")
        return reading.read
    if not isinstance(body, dict) or "judgmentRatings" not in body:
        reading.problem("body", "expected an object with judgmentRatings")
        return reading.read
    entries = body["judgmentRatings"]
    if not isinstance(entries, list):
        reading.problem("judgmentRatings", "expected a list of queries and their ratings")
        return reading.read
    for index, entry in enumerate(entries):
        _read_srw_query(f"judgmentRatings[{index}]", entry, reading)
        if reading.stopped:
            break
    return reading.read


def _read_srw_query(where: str, entry: Any, reading: _Reading) -> None:
    if not isinstance(entry, dict):
        reading.problem(where, "expected an object with query and ratings")
        return
    for key in sorted(set(entry) - SRW_QUERY_KEYS):
        reading.problem(where, f"unknown key {_shown(key)} (a query holds query and ratings)")
    query = entry.get("query")
    if not isinstance(query, str):
        reading.problem(f"{where}.query", "missing, or not a string")
        return
    query = query.strip()
    problem = _text_problem("query", query, QUERY_LIMIT)
    if problem:
        reading.problem(f"{where}.query", problem)
        return
    ratings = entry.get("ratings")
    if not isinstance(ratings, list):
        reading.problem(f"{where}.ratings", "missing, or not a list of docId and rating")
        return
    for index, rating in enumerate(ratings):
        at = f"{where}.ratings[{index}]"
        if not reading.next_entry(at):
            return
        if not isinstance(rating, dict) or rating.keys() != SRW_RATING_KEYS:
            _srw_rating_problems(at, rating, reading)
            continue
        doc_id, value = rating["docId"], rating["rating"]
        if not isinstance(doc_id, str):
            reading.problem(at, "docId is not a string")
            continue
        grade, why = _grade(value)
        if grade is None:
            # Named in full: a list of a thousand queries has many ratings[1].
            reading.problem(
                at,
                f"rating {_shown(str(value))} of docId {_shown(doc_id.strip())} "
                f"for query {_shown(query)} {why}",
            )
            continue
        reading.add(at, query, doc_id, grade)


def _srw_rating_problems(where: str, rating: Any, reading: _Reading) -> None:
    """What is wrong with a rating that is not an object of docId and rating."""
    if not isinstance(rating, dict):
        reading.problem(where, "expected an object with docId and rating")
        return
    for key in sorted(set(rating) - SRW_RATING_KEYS):
        reading.problem(where, f"unknown key {_shown(key)} (a rating holds docId and rating)")
    for key in sorted(SRW_RATING_KEYS - set(rating)):
        reading.problem(where, f"{key} missing")


def write_srw(
    judgements: Iterable[Judgement],
    *,
    name: str = "Judgements from Relevo",
    description: str = "",
) -> str:
    """The body of `PUT _plugins/_search_relevance/judgments` importing the list: one
    judgmentRatings entry per query (first-seen order) on a line of its own, its ratings
    in the order given, each rating the whole grade as a string ("3"), as SRW reads
    ratings."""
    rows = _writable(judgements)
    # json.dumps with indent runs its pure-Python encoder (11 s for a million ratings);
    # each query dumped whole on its own line runs the C one and stays readable.
    entries = [
        json.dumps(
            {
                "query": query,
                "ratings": [{"docId": doc_id, "rating": str(grade)} for doc_id, grade in rated],
            },
            ensure_ascii=False,
        )
        for query, rated in _by_query(rows).items()
    ]
    head = json.dumps(
        {"name": name, "description": description, "type": SRW_TYPE}, ensure_ascii=False, indent=2
    )
    listed = "[\n    " + ",\n    ".join(entries) + "\n  ]" if entries else "[]"
    return head.removesuffix("\n}") + f',\n  "judgmentRatings": {listed}\n}}\n'


def read_ranklib(data: bytes | str) -> ListRead:
    """A learning-to-rank judgment list: `grade qid:N # docid text` lines (feature
    columns `k:v` before the `#` are allowed and ignored) and `# qid:N: query text`
    header lines naming the queries. A qid's header gives its query text; a line's own
    text after the doc id is used only for a qid no header names, since the published
    examples put the document's title there. Other `#` lines and blank lines are skipped."""
    reading = _Reading()
    text = _decoded(data, reading)
    if text is None:
        return reading.read
    headers, refused = _ranklib_headers(text, reading)
    if reading.stopped:
        return reading.read
    for number, line in _lines(text):
        if line.startswith("#"):
            continue  # a header, read above, or a comment
        where = f"line {number}"
        if not reading.next_entry(where):
            break
        before, mark, after = line.partition("#")
        columns = before.split()
        if (
            len(columns) < 2
            or not columns[1].startswith("qid:")
            or len(columns[1]) == len("qid:")
            or not all(_RANKLIB_FEATURE.fullmatch(column) for column in columns[2:])
        ):
            reading.problem(where, "expected `grade qid:N # docid query text`")
            continue
        parts = after.split(None, 1)
        if not mark or not parts:
            reading.problem(where, "no doc id: expected `# docid` after the qid")
            continue
        qid = columns[1][len("qid:") :]
        if qid in refused:
            continue  # its header line is reported
        query = headers.get(qid) or (parts[1].strip() if len(parts) > 1 else "")
        if not query:
            reading.problem(
                where,
                f"no query text for qid {_shown(qid)}: none after the doc id, and no "
                f"`# qid:{qid}: query text` line names it",
            )
            continue
        reading.add(where, query, parts[0], columns[0])
    return reading.read


def _ranklib_headers(text: str, reading: _Reading) -> tuple[dict[str, str], set[str]]:
    """qid -> query text from the `# qid:N: text` lines, and the qids refused. Counts
    every line, so the second pass over them is bounded too."""
    texts: dict[str, str] = {}
    first_lines: dict[str, int] = {}
    refused: set[str] = set()
    for number, line in _lines(text):
        where = f"line {number}"
        if not reading.next_entry(where, "lines", RANKLIB_LINES):
            break
        match = _RANKLIB_HEADER.fullmatch(line.rstrip()) if line.startswith("#") else None
        if match is None:
            continue
        qid, query = match.group(1), match.group(2).strip()
        if qid in first_lines:
            reading.problem(
                where, f"qid {_shown(qid)} named again (first on line {first_lines[qid]})"
            )
            continue
        first_lines[qid] = number
        problem = _text_problem("query", query, QUERY_LIMIT)
        if problem:
            reading.problem(where, problem)
            refused.add(qid)
        else:
            texts[qid] = query
    return texts, refused


def write_ranklib(judgements: Iterable[Judgement]) -> str:
    """A `# qid:N: query text` line per query (numbered 1, 2, ... in first-seen order),
    then each query's judgements together, in the order given, as
    `grade<TAB>qid:N #<TAB>docid<TAB>query text`: RankLib reads a query's lines as one
    group. A doc id holding whitespace is refused: the line splits on it."""
    rows = _writable(judgements, whitespace_free_doc_ids="a RankLib line")
    numbers = _numbered_queries(rows)
    headers = [f"# qid:{number}: {query}\n" for query, number in numbers.items()]
    lines = [
        f"{grade}\tqid:{numbers[query]} #\t{doc_id}\t{query}\n"
        for query, rated in _by_query(rows).items()
        for doc_id, grade in rated
    ]
    return "".join(headers + lines)


@dataclass(frozen=True)
class Companion:
    """A second file a format writes beside the list (the qrels' queries file); it is
    read back by passing it to the format's read as `queries`."""

    label: str
    extension: str
    media_type: str
    write: Callable[[Iterable[Judgement]], str]


@dataclass(frozen=True)
class ListFormat:
    name: str
    label: str
    extension: str  # without the dot
    media_type: str
    reader: Callable[..., ListRead]
    write: Callable[..., str]
    companion: Companion | None = None

    def read(self, data: bytes | str, queries: bytes | str | None = None) -> ListRead:
        """Read a list; `queries` only for a format with a companion file."""
        if self.companion is not None:
            return self.reader(data, queries)
        if queries is not None:
            refused = ListRead()
            refused.add_problem("queries", f"a {self.label} list has no queries file")
            return refused
        return self.reader(data)


FORMATS: dict[str, ListFormat] = {
    "qrels": ListFormat(
        name="qrels",
        label="TREC qrels",
        extension="qrels",
        media_type="text/plain",
        reader=read_qrels,
        write=write_qrels,
        companion=Companion(
            label="TREC queries (qid<TAB>query text)",
            extension="tsv",
            media_type="text/tab-separated-values",
            write=write_qrels_queries,
        ),
    ),
    "quepid": ListFormat(
        name="quepid",
        label="Quepid judgement CSV",
        extension="csv",
        media_type="text/csv",
        reader=read_quepid,
        write=write_quepid,
    ),
    "srw": ListFormat(
        name="srw",
        label="OpenSearch Search Relevance Workbench judgment list",
        extension="json",
        media_type="application/json",
        reader=read_srw,
        write=write_srw,
    ),
    "ranklib": ListFormat(
        name="ranklib",
        label="RankLib / LTR plugin judgment list",
        extension="txt",
        media_type="text/plain",
        reader=read_ranklib,
        write=write_ranklib,
    ),
}
