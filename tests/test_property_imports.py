"""Property of the imports: a file gets a new evaluation (201), or a
4xx listing problems that each name their field or line; never a 5xx; and a rejected
import leaves every table as it was.

Hypothesis writes evaluation documents (relevo.evaluation/1) and TREC run/qrels/topics
files, valid ones and ones with one thing wrong: wrong types, integers past the int4 and
smallint columns (positions and ranks 2147483648, grades 32768), a document listed twice
for a keyword, nesting 5,000 deep in attributes, lone surrogates, NUL, byte-order marks,
CRLF, text of 1 MB, images that are not web addresses (javascript:alert(1)), wrong
column counts, unicode junk. Each goes through the API (POST /api/v1/evaluations/import/
as a JSON body or an upload, POST /api/v1/evaluations/import-trec/) and through the
services (import_document, import_trec). An accepted file must also have been stored
sensibly: pictures are web addresses, a keyword lists a document once, no byte-order
mark in a text.

There is no CSV import (CSV is an export only: apps/interchange/export.py),
so there is no CSV grammar to test. The example counts are bounded and the examples
derandomized, so a run is reproducible and fits the default suite.
"""

import io
import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from apps import engine
from apps.accounts.api_tokens import api_token_create
from apps.core.errors import InvalidInput
from apps.engine.metrics import NOT_ON_CUSTOM_SCALES
from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Evaluation, Keyword, Snapshot, UnretrievedJudgement
from apps.interchange.document import import_document
from apps.interchange.trec import import_trec
from tests.factories import make_evaluation, make_grader, make_team
from tests.hostile import (
    HOSTILE_INTS,
    INT4_OVER,
    MEGABYTE,
    SMALLINT_OVER,
    SMALLINT_UNDER,
    Raw,
    ServerErrors,
    count_changes,
    deep_array,
    deep_object,
    encode,
    leaf_paths,
    multipart,
    path_text,
    problems_with_answer,
    problems_with_invalid_input,
    render,
    replaced,
    rolled_back,
    row_counts,
)

# Examples per kind of file (each kind its own test): the API ones, the service ones.
EXAMPLES = 10
SERVICE_EXAMPLES = 5
OWNER = "owner@imports.test"
GRADER = "grader@imports.test"

PROPERTY = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


@pytest.fixture
def world() -> dict[str, Any]:
    """A team with a member grader, a token, and an evaluation already there (so the
    counts are not all zero)."""
    team = make_team("Import team", owner=OWNER)
    make_grader(team, GRADER)
    make_evaluation(team=team, keywords={"existing": 2})
    _token, text = api_token_create(team=team, name="imports")
    client = Client(headers={"Authorization": f"Bearer {text}"}, raise_request_exception=False)
    client.get("/api/v1/evaluations/")  # the token's first use is marked; later ones read
    return {"team": team, "client": client}


@pytest.fixture
def server_errors():
    with ServerErrors() as recorder:
        yield recorder


# --- Evaluation documents -------------------------------------------------------------

SCALE_NAMES = ["binary", "graded", "detail", "custom"]
CUSTOM_METRICS = [name for name in sorted(engine.METRICS) if name not in NOT_ON_CUSTOM_SCALES]
CUTOFFS = [None, 0, 1, 3, 5, 10, 1000]
GRADER_NAMES = [OWNER, GRADER.upper(), "vendor-1", "vendor-2", "Annotator 3"]
IMAGES = ["https://example.test/shoe.png", "http://cdn.example.test/a.jpg?x=1", ""]
# Pictures that are not web addresses: an accepted import must not store them.
BAD_IMAGES = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(document.cookie)",
    " javascript:alert(1)",
    "java\nscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:image/svg+xml,<svg onload=alert(1)>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.test/a.png",
    "//evil.test/a.png",
    "http://",
    "x" * 3000,
]
# Short texts, printable, no byte-order mark (an accepted file must not store one).
plain_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\ufeff"),
    min_size=1,
    max_size=12,
).filter(lambda text: text.strip() == text and text)
json_scalar = st.none() | st.booleans() | st.integers(-1000, 1000) | plain_text
attributes = st.dictionaries(
    plain_text, json_scalar | st.lists(json_scalar, max_size=3), max_size=3
)


@st.composite
def grade_entries(draw, grades: list[int], strategy: int) -> list[Any]:
    count = draw(st.integers(0, strategy))
    graders = draw(
        st.lists(st.sampled_from(GRADER_NAMES), min_size=count, max_size=count, unique_by=str.lower)
    )
    entries: list[Any] = []
    for index in range(count):
        kind = draw(st.sampled_from(["int", "object", "null", "empty object"]))
        grade = draw(st.sampled_from(grades))
        if kind == "int":
            entries.append(grade)
        elif kind == "object":
            entry: dict[str, Any] = {"grader": graders[index], "grade": grade}
            if draw(st.booleans()):
                entry["reason"] = draw(plain_text)
            entries.append(entry)
        elif kind == "empty object":
            entries.append({"grader": graders[index], "grade": None})
        else:
            entries.append(None)
    return entries


@st.composite
def snapshots(draw, grades: list[int], strategy: int) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 4))
    if draw(st.booleans()):
        positions = list(range(1, count + 1))
    else:  # sparse, up to the largest position an int4 column takes
        positions = draw(
            st.lists(
                st.integers(1, 50) | st.just(2**31 - 1), min_size=count, max_size=count, unique=True
            )
        )
    doc_ids = draw(st.lists(plain_text, min_size=count, max_size=count, unique=True))
    found = []
    for position, doc_id in zip(positions, doc_ids, strict=True):
        snapshot: dict[str, Any] = {"position": position, "doc_id": doc_id}
        if draw(st.booleans()):
            snapshot["name"] = draw(plain_text)
            snapshot["image"] = draw(st.sampled_from(IMAGES))
            snapshot["attributes"] = draw(attributes)
        snapshot["grades"] = draw(grade_entries(grades, strategy))
        if draw(st.integers(0, 4)) == 0:
            snapshot["decision"] = {
                "grade": draw(st.sampled_from(grades)),
                "by": draw(st.sampled_from([OWNER, "someone@else.test", None])),
                "reason": draw(plain_text),
            }
        found.append(snapshot)
    return found


@st.composite
def documents(draw) -> dict[str, Any]:
    """A valid evaluation document (almost always: metrics may not fit the scale)."""
    scale = draw(st.sampled_from(SCALE_NAMES))
    document: dict[str, Any] = {
        "format": "relevo.evaluation/1",
        "name": draw(plain_text),
        "scale": scale,
    }
    if scale == "custom":
        lowest = draw(st.integers(-3, 1))
        highest = draw(st.integers(lowest + 1, lowest + 5))
        document["scale_levels"] = {
            "lowest": lowest,
            "highest": highest,
            "relevant_from": draw(st.integers(lowest + 1, highest)),
        }
        grades = list(range(lowest, highest + 1))
        names = CUSTOM_METRICS
    else:
        grades = list(engine.SCALES[scale].grades)
        names = sorted(engine.METRICS)
    strategy = draw(st.sampled_from([1, 3]))
    document["strategy"] = strategy
    document["profile"] = draw(st.sampled_from(["searchtweak", "trec"]))
    metrics = draw(
        st.lists(
            st.tuples(st.sampled_from(names), st.sampled_from(CUTOFFS)),
            min_size=1,
            max_size=3,
            unique_by=lambda m: (m[0], m[1] or 0),
        )
    )
    document["metrics"] = [{"metric": metric, "k": k} for metric, k in metrics]
    for key in ("description", "scoring_guidelines"):
        if draw(st.booleans()):
            document[key] = draw(plain_text)
    if draw(st.booleans()):
        document["tags"] = draw(st.lists(plain_text, max_size=2))
    document["zero_without_results"] = draw(st.booleans())
    texts = draw(st.lists(plain_text, max_size=3, unique=True))
    keywords = []
    for text in texts:
        keyword: dict[str, Any] = {"keyword": text, "snapshots": draw(snapshots(grades, strategy))}
        if draw(st.integers(0, 2)) == 0:
            taken = {s["doc_id"] for s in keyword["snapshots"]}
            keyword["unretrieved"] = [
                {"doc_id": doc_id, "grade": draw(st.sampled_from(grades))}
                for doc_id in draw(st.lists(plain_text, max_size=2, unique=True))
                if doc_id not in taken
            ]
        keywords.append(keyword)
    document["keywords"] = keywords
    return document


def paths_of(document: dict[str, Any], kind: type | tuple[type, ...]) -> list[tuple]:
    """Paths of the document's values of a type (bools are not ints here)."""
    found = []
    for path in leaf_paths(document):
        value = document
        for part in path:
            value = value[part]
        if isinstance(value, kind) and not isinstance(value, bool):
            found.append(path)
    return found


def value_at(document: Any, path: tuple) -> Any:
    for part in path:
        document = document[part]
    return document


HOSTILE_VALUES = [
    *(Raw(str(value)) for value in HOSTILE_INTS.values()),
    Raw('"\\udfff"'),
    Raw('"\\ud800x"'),
    Raw('"a\\u0000b"'),
    Raw(deep_array()),
    Raw(deep_object()),
    Raw("NaN"),
    Raw("-Infinity"),
    Raw("1e999"),
    1.5,
    True,
    None,
    "",
    "  ",
    [1],
    {"a": 1},
    "2147483648",
]


DOCUMENT_MUTATIONS = [
    "none",
    "hostile value",
    "int overflow",
    "string overflow",
    "duplicate doc_id",
    "duplicate position",
    "duplicate keyword",
    "deep attributes",
    "bad image",
    "NUL",
    "lone surrogate",
    "invalid UTF-8",
    "BOM",
    "CRLF and tabs",
    "truncated",
    "trailing garbage",
    "missing key",
    "unknown key",
]


@st.composite
def document_files(draw, mutation: str) -> tuple[str, bytes]:
    """(what was done, the file) for a document that is valid or has one thing wrong."""
    document = draw(documents())
    ensure_ascii = True
    label = mutation
    if mutation == "hostile value":
        path = draw(st.sampled_from(list(leaf_paths(document))))
        value = draw(st.sampled_from(HOSTILE_VALUES))
        label = f"{path_text(path)} = {value!r:.60}"
        document = replaced(document, path, value)
    elif mutation == "int overflow":
        path = draw(st.sampled_from(paths_of(document, int)))
        value = draw(
            st.sampled_from([INT4_OVER, SMALLINT_OVER, SMALLINT_UNDER, 10**30, -(2**31) - 1, 2**63])
        )
        label = f"{path_text(path)} = {value}"
        document = replaced(document, path, value)
    elif mutation == "string overflow":
        path = draw(st.sampled_from(paths_of(document, str)))
        # Past each column's length; 1 MB in ASCII (ijson's C parser takes time that grows
        # with the square of a long non-ASCII string's length: 1 MB of "é" is a second).
        size = draw(st.sampled_from([201, 501, 1001, 2001, 100_000, MEGABYTE]))
        label = f"{path_text(path)} = {size} characters"
        document = replaced(document, path, ("x" if size == MEGABYTE else "é") * size)
    elif mutation in ("duplicate doc_id", "duplicate position"):
        key = "doc_id" if mutation == "duplicate doc_id" else "position"
        document = with_snapshots(document, 2)
        keyword = draw(st.integers(0, len(document["keywords"]) - 1))
        found = document["keywords"][keyword]["snapshots"]
        if len(found) < 2:
            found.append({"position": 99, "doc_id": "extra"})
        found[-1][key] = found[0][key]
        label = f"keywords[{keyword}] {key} {found[0][key]!r} twice"
    elif mutation == "deep attributes":
        document = with_snapshots(document, 1)
        depth = draw(st.sampled_from([15, 25, 100, 5_000]))
        first = document["keywords"][0]["snapshots"][0]
        first["attributes"] = Raw(deep_object(depth))
        label = f"attributes nested {depth} deep"
    elif mutation == "bad image":
        document = with_snapshots(document, 1)
        image = draw(st.sampled_from(BAD_IMAGES))
        document["keywords"][0]["snapshots"][0]["image"] = image
        label = f"image {image!r:.60}"
    elif mutation in ("NUL", "lone surrogate"):
        path = draw(st.sampled_from(paths_of(document, str)))
        bad = (
            "\x00"
            if mutation == "NUL"
            else draw(st.sampled_from(["\udfff", "\ud800", "\udbff\udbff"]))
        )
        ensure_ascii = draw(st.booleans())  # escaped, or as the raw (invalid) bytes
        label = f"{path_text(path)} with {bad!r} ({'escaped' if ensure_ascii else 'raw bytes'})"
        document = replaced(document, path, value_at(document, path) + bad)
    elif mutation == "duplicate keyword":
        document = with_snapshots(document, 0)
        document["keywords"].append(dict(document["keywords"][0]))
    elif mutation == "missing key":
        document = with_snapshots(document, 1)
        path = draw(
            st.sampled_from(
                [
                    ("format",),
                    ("name",),
                    ("scale",),
                    ("metrics",),
                    ("keywords", 0, "keyword"),
                    ("keywords", 0, "snapshots", 0, "position"),
                    ("keywords", 0, "snapshots", 0, "doc_id"),
                    ("metrics", 0, "k"),
                ]
            )
        )
        label = f"without {path_text(path)}"
        parent = value_at(document, path[:-1])
        parent.pop(path[-1], None)
    elif mutation == "unknown key":
        path = draw(
            st.sampled_from(
                [p for p in [(), *leaf_paths(document)] if isinstance(value_at(document, p), dict)]
            )
        )
        value_at(document, path)["grade"] = 1
        label = f"{path_text(path)}.grade (unknown)"
    data = encode(render(document, ensure_ascii=ensure_ascii))
    if mutation == "invalid UTF-8":
        cut = draw(st.integers(0, len(data)))
        data = (
            data[:cut]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]))
            + data[cut:]
        )
    elif mutation == "BOM":
        data = b"\xef\xbb\xbf" + data
    elif mutation == "CRLF and tabs":  # valid JSON, laid out with CRLF and tabs
        data = json.dumps(document, indent="\t").replace("\n", "\r\n").encode()
    elif mutation == "truncated":
        data = data[: draw(st.integers(0, max(0, len(data) - 1)))]
    elif mutation == "trailing garbage":
        data += draw(st.sampled_from([b"x", b"{}", b",", b"\x00", b"]"]))
    return label, data


def with_snapshots(document: dict[str, Any], count: int) -> dict[str, Any]:
    """The document (a copy) with a first keyword of at least `count` snapshots."""
    document = json.loads(json.dumps(document))
    if not document["keywords"]:
        document["keywords"].append({"keyword": "added", "snapshots": []})
    found = document["keywords"][0].setdefault("snapshots", [])
    taken = {s.get("position") for s in found}
    while len(found) < count:
        position = max((p for p in taken if isinstance(p, int)), default=0) % (2**31 - 2) + 1
        taken.add(position)
        found.append({"position": position, "doc_id": f"added-{len(found)}"})
    return document


def is_web_picture(text: str) -> bool:
    """An http(s) address with a host, or an inline raster picture: what a page may put
    in <img src> (no script, no SVG, no other scheme)."""
    if text[:5].lower() == "data:":
        return bool(re.match(r"data:image/(png|jpeg|gif|webp|avif);base64,", text, re.I))
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and text.isprintable()
        and not any(char.isspace() for char in text)
    )


def stored_problems(evaluation: Evaluation) -> list[str]:
    """What an accepted import must not have stored: a picture that is not a web
    address, a document twice for a keyword, a byte-order mark (the generated texts have
    none, so one comes from a file's start) or a NUL (PostgreSQL refuses it: a file
    SQLite took would fail there)."""
    found = []
    images = Snapshot.objects.filter(keyword__evaluation=evaluation).values_list("image", flat=True)
    found += [
        f"stored a picture that is not a web address: {image[:80]!r}"
        for image in images
        if image and not is_web_picture(image)
    ]
    for keyword in Keyword.objects.filter(evaluation=evaluation):
        doc_ids = list(keyword.snapshots.values_list("doc_id", flat=True))
        if len(doc_ids) != len(set(doc_ids)):
            found.append(
                f"keyword {keyword.text[:40]!r} lists a document twice: {sorted(doc_ids)[:10]!r}"
            )
    texts = [*Keyword.objects.filter(evaluation=evaluation).values_list("text", flat=True)]
    texts += Snapshot.objects.filter(keyword__evaluation=evaluation).values_list(
        "doc_id", flat=True
    )
    texts += UnretrievedJudgement.objects.filter(keyword__evaluation=evaluation).values_list(
        "doc_id", flat=True
    )
    found += [f"stored a byte-order mark in {text[:40]!r}" for text in texts if "\ufeff" in text]
    found += [f"stored a NUL in {text[:40]!r}" for text in texts if "\x00" in text]
    return found


def check_answer(
    response: Any, label: str, before: dict[str, int], server_errors: ServerErrors
) -> None:
    status = response.status_code
    event(f"{label.split(':')[0].split(' (')[0]} -> {status}")
    found = problems_with_answer(
        status, response.get("Content-Type", ""), response.content, needs_location=True
    )
    # (After a 5xx the connection may be unusable: nothing more is read.)
    if 400 <= status < 500:
        changed = count_changes(before, row_counts())
        if changed:
            found.append(f"rejected, but rows changed (table: before, after): {changed}")
    elif status == 201:
        evaluation = Evaluation.objects.get(id=json.loads(response.content)["id"])
        found += stored_problems(evaluation)
    assert not found, (
        f"[{label}] -> {status}: {'; '.join(found)}\n{response.content[:1500]!r}\n"
        + (server_errors.head() if status >= 500 else "")
    )


@pytest.mark.django_db
@pytest.mark.parametrize("mutation", DOCUMENT_MUTATIONS)
@settings(PROPERTY, max_examples=EXAMPLES)
@given(data=st.data())
def test_a_document_sent_to_the_api_is_imported_or_refused_with_located_problems(
    world, server_errors, mutation, data
):
    label, file = data.draw(document_files(mutation), label="file")
    upload = data.draw(st.booleans(), label="as an upload (else the JSON body)")
    client = world["client"]
    with rolled_back():
        before = row_counts()
        if upload:
            content_type, body = multipart({}, {"file": ("evaluation.json", file)})
            response = client.generic(
                "POST", "/api/v1/evaluations/import/", data=body, content_type=content_type
            )
        else:
            response = client.generic(
                "POST", "/api/v1/evaluations/import/", data=file, content_type="application/json"
            )
        check_answer(response, label, before, server_errors)


def call_service(function: Any, label: str, **arguments: Any) -> Any:
    """The import's result, or None when it refused the file with located problems and
    left every table as it was; any other exception fails the test."""
    before = row_counts()
    try:
        return function(**arguments)
    except InvalidInput as error:
        found = problems_with_invalid_input(error.problems)
        changed = count_changes(before, row_counts())
        if changed:
            found.append(f"rejected, but rows changed (table: before, after): {changed}")
        assert not found, f"[{label}]: {'; '.join(found)}\n{error.problems[:20]!r}"
        return None


@pytest.mark.django_db
@pytest.mark.parametrize("mutation", DOCUMENT_MUTATIONS)
@settings(PROPERTY, max_examples=SERVICE_EXAMPLES)
@given(data=st.data())
def test_import_document_imports_or_raises_invalid_input_naming_each_place(world, mutation, data):
    label, file = data.draw(document_files(mutation), label="file")
    with rolled_back():
        evaluation = call_service(
            import_document, label, team=world["team"], source=io.BytesIO(file)
        )
        if evaluation is not None:
            found = stored_problems(evaluation)
            assert not found, f"[{label}]: {'; '.join(found)}"


# --- TREC files -------------------------------------------------------------------------

# A column: no whitespace; may be percent-encoded (trec_columns.py) like an export writes it.
column = st.text(
    st.characters(
        codec="utf-8",
        exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
        exclude_characters="\ufeff\x85\xa0%",
    ),
    min_size=1,
    max_size=8,
) | st.sampled_from(["red%20shoes", "100%25", "q%09tab"])
score_text = (
    st.integers(-5, 100).map(str)
    | st.floats(-1e6, 1e6, allow_nan=False).map(repr)
    | st.sampled_from(["1e-300", "-0", "0.0"])
)
JUNK = [
    "\u00a0",
    "\u2028",
    "\u200b",
    "\x85",
    "\u202e",
    "e\u0301",
    "😀",
    "%00",
    "%zz",
    "%ff",
    "%ED%BF%BF",
    "\x0b",
    "\x1c",
]


@st.composite
def trec_files(draw) -> dict[str, Any]:
    scale = draw(st.sampled_from(SCALE_NAMES))
    grades = list(range(-2, 5)) if scale == "custom" else list(engine.SCALES[scale].grades)
    qids = draw(
        st.lists(column, min_size=1, max_size=3, unique_by=lambda text: text.replace("%20", " "))
    )
    run_lines: list[list[str]] = []
    qrels_lines: list[list[str]] = []
    for number, qid in enumerate(qids):
        docnos = draw(st.lists(column, min_size=1 if number == 0 else 0, max_size=4, unique=True))
        for rank, docno in enumerate(docnos, start=1):
            run_lines.append(
                [
                    qid,
                    "Q0",
                    docno,
                    str(rank),
                    draw(score_text),
                    draw(st.sampled_from(["run", "tag", "run extra text"])),
                ]
            )
            if draw(st.booleans()):
                qrels_lines.append(
                    [
                        qid,
                        draw(st.sampled_from(["0", "1", "grader"])),
                        docno,
                        str(draw(st.sampled_from(grades))),
                    ]
                )
        for docno in draw(st.lists(column, max_size=2, unique=True)):
            if docno not in docnos:  # judged, not retrieved
                qrels_lines.append([qid, "0", docno, str(draw(st.sampled_from(grades)))])
    if draw(st.booleans()):  # a query judged but not run
        qrels_lines.append(["judged-only", "0", "d", str(draw(st.sampled_from(grades)))])
    topics = [[qid, draw(plain_text)] for qid in qids if draw(st.booleans())]
    return {
        "scale": scale,
        "run": run_lines,
        "qrels": qrels_lines
        if qrels_lines and (draw(st.booleans()) or scale == "custom")
        else None,
        "topics": topics or None,
        "fields": {
            "name": draw(plain_text),
            "scale": scale,
            "metrics": draw(
                st.sampled_from(
                    ["ndcg@10,precision@5", "ap", "map, P_10, ndcg_cut_5", "rr@3, recall@1000"]
                )
            ),
            "profile": draw(st.sampled_from(["searchtweak", "trec"])),
            "strategy": draw(st.sampled_from(["1", "3"])),
            "keep_rank": draw(st.sampled_from(["true", "false"])),
            "relevant_from": str(draw(st.integers(1, 2))),
            "zero_without_results": draw(st.sampled_from(["true", "false"])),
        },
    }


def joined(
    lines: list[list[str]] | None, separator: str, ending: str, *, tab: bool = False
) -> bytes | None:
    if lines is None:
        return None
    return encode("".join(("\t" if tab else separator).join(line) + ending for line in lines))


TREC_MUTATIONS = [
    "none",
    "wrong column count",
    "BOM",
    "rank overflow",
    "grade overflow",
    "not a number",
    "duplicate docno",
    "unicode junk",
    "NUL",
    "invalid UTF-8",
    "huge column",
    "empty file",
    "topics broken",
    "hostile field",
]


@st.composite
def trec_uploads(draw, mutation: str) -> tuple[str, dict[str, Any]]:
    """(what was done, {fields, run, qrels, topics}) for TREC files that are valid or
    have one thing wrong."""
    files = draw(trec_files())
    fields = dict(files["fields"])
    separator = draw(st.sampled_from([" ", "\t", "  "]))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    label = f"{mutation} (separator {separator!r}, ending {ending!r})"
    run, qrels, topics = files["run"], files["qrels"], files["topics"]
    target_name = draw(st.sampled_from(["run", "qrels"])) if qrels else "run"
    target = run if target_name == "run" else qrels
    if mutation == "wrong column count" and target:
        line = draw(st.integers(0, len(target) - 1))
        target[line] = (
            target[line][: draw(st.integers(0, 3))]
            if draw(st.booleans())
            else [*target[line], "extra"]
        )
        label += f": {target_name} line {line + 1} = {target[line]}"
    elif mutation == "rank overflow" and run:
        fields["keep_rank"] = "true"
        line = draw(st.integers(0, len(run) - 1))
        run[line][3] = str(draw(st.sampled_from([INT4_OVER, 10**30, 2**63, 0, -1, -(2**31) - 1])))
        label += f": run line {line + 1} rank {run[line][3]}"
    elif mutation == "grade overflow" and qrels:
        line = draw(st.integers(0, len(qrels) - 1))
        qrels[line][3] = str(
            draw(st.sampled_from([SMALLINT_OVER, SMALLINT_UNDER, INT4_OVER, 10**30, 101, -101]))
        )
        label += f": qrels line {line + 1} grade {qrels[line][3]}"
    elif mutation == "not a number" and target:
        line = draw(st.integers(0, len(target) - 1))
        index = 4 if target is run else 3
        target[line][index] = draw(
            st.sampled_from(["x", "nan", "inf", "-inf", "1e999", "1.5", "0x10", "١", "½", "1_000"])
        )
        label += f": {target_name} line {line + 1} column {index + 1} = {target[line][index]!r}"
    elif mutation == "duplicate docno" and target:
        line = draw(st.integers(0, len(target) - 1))
        target.append(list(target[line]))
        label += f": {target_name} line {line + 1} again"
    elif mutation in ("unicode junk", "NUL", "huge column") and target:
        line = draw(st.integers(0, len(target) - 1))
        index = draw(st.sampled_from([0, 2]))
        if mutation == "unicode junk":
            junk = draw(st.sampled_from(JUNK))
            target[line][index] += junk
        elif mutation == "NUL":
            target[line][index] += "\x00"
        else:
            target[line][index] = "d" * draw(st.sampled_from([501, MEGABYTE]))
        label += (
            f": {target_name} line {line + 1} column {index + 1} = {target[line][index][:40]!r}"
        )
    elif mutation == "topics broken":
        topics = [
            *(topics or []),
            *draw(
                st.sampled_from(
                    [
                        [["1"]],
                        [["1", ""]],
                        [["1", "a"], ["1", "b"]],
                        [["q", "\udfff"]],
                        [["q", "t" * 501]],
                        [["", "no qid"]],
                    ]
                )
            ),
        ]
        label += f": topics {topics!r:.80}"
    elif mutation == "hostile field":
        name = draw(st.sampled_from(sorted(fields)))
        value = draw(
            st.sampled_from(
                [
                    str(INT4_OVER),
                    str(SMALLINT_OVER),
                    str(SMALLINT_UNDER),
                    str(10**30),
                    "\udfff",
                    "a\x00b",
                    "x" * MEGABYTE,
                    "",
                    "ndcg@2147483648",
                    "ndcg@0",
                    "ndcg@-1",
                    "nope@5",
                    "ndcg@10,ndcg@10",
                    "[1]",
                ]
            )
        )
        fields[name] = value
        label += f": form {name} = {value!r:.40}"
    parts = {
        "run": joined(run, separator, ending),
        "qrels": joined(qrels, separator, ending),
        "topics": joined(topics, separator, ending, tab=True),
    }
    if mutation == "BOM":
        name = draw(st.sampled_from([n for n, v in parts.items() if v is not None]))
        parts[name] = b"\xef\xbb\xbf" + parts[name]
        label += f": {name}"
    elif mutation == "invalid UTF-8":
        name = draw(st.sampled_from([n for n, v in parts.items() if v is not None]))
        cut = draw(st.integers(0, len(parts[name])))
        parts[name] = parts[name][:cut] + b"\xff\xfe" + parts[name][cut:]
        label += f": {name} at byte {cut}"
    elif mutation == "empty file":
        name = draw(st.sampled_from([n for n, v in parts.items() if v is not None]))
        parts[name] = draw(st.sampled_from([b"", b"\n\n", b"   \r\n", b"\xef\xbb\xbf"]))
        label += f": {name} = {parts[name]!r}"
    return label, {"fields": fields, **parts}


@pytest.mark.django_db
@pytest.mark.parametrize("mutation", TREC_MUTATIONS)
@settings(PROPERTY, max_examples=EXAMPLES)
@given(data=st.data())
def test_trec_files_sent_to_the_api_are_imported_or_refused_with_located_problems(
    world, server_errors, mutation, data
):
    label, parts = data.draw(trec_uploads(mutation), label="files")
    files = {
        name: (f"{name}.txt", parts[name])
        for name in ("run", "qrels", "topics")
        if parts[name] is not None
    }
    content_type, body = multipart(parts["fields"], files)
    with rolled_back():
        before = row_counts()
        response = world["client"].generic(
            "POST", "/api/v1/evaluations/import-trec/", data=body, content_type=content_type
        )
        check_answer(response, label, before, server_errors)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "mutation",
    # The API's form checks the settings before the service sees them (every caller
    # does); hostile settings are the API test's.
    [mutation for mutation in TREC_MUTATIONS if mutation != "hostile field"],
)
@settings(PROPERTY, max_examples=SERVICE_EXAMPLES)
@given(data=st.data())
def test_import_trec_imports_or_raises_invalid_input_naming_each_place(world, mutation, data):
    label, parts = data.draw(trec_uploads(mutation), label="files")
    fields = parts["fields"]
    try:
        metrics = parse_metric_list(fields["metrics"])
        relevant_from = int(fields["relevant_from"])
    except ValueError:
        return  # the API's form refuses these before the service (the API test sends them)
    streams = {
        name: io.BytesIO(parts[name])
        for name in ("run", "qrels", "topics")
        if parts[name] is not None
    }
    for name, stream in streams.items():
        stream.name = f"{name}.txt"
    with rolled_back():
        check_trec_service(label, world, streams, fields, metrics, relevant_from)


def check_trec_service(
    label: str,
    world: dict[str, Any],
    streams: dict[str, io.BytesIO],
    fields: dict[str, str],
    metrics: list[tuple[str, int]],
    relevant_from: int,
) -> None:
    imported = call_service(
        import_trec,
        label,
        team=world["team"],
        run=streams["run"],
        qrels=streams.get("qrels"),
        topics=streams.get("topics"),
        name=fields["name"],
        scale=fields["scale"],
        metrics=metrics,
        profile=fields["profile"],
        strategy=int(fields["strategy"]) if fields["strategy"].isdigit() else fields["strategy"],
        keep_rank=fields["keep_rank"] == "true",
        relevant_from=relevant_from,
        zero_without_results=fields["zero_without_results"] == "true",
    )
    if imported is not None:
        found = stored_problems(imported.evaluation)
        assert not found, f"[{label}]: {'; '.join(found)}"
