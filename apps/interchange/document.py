"""Import an evaluation document (format relevo.evaluation/1; README.md here).

Two passes over the file, so memory holds one batch however large it is:

1. the top-level settings, which may come before or after `keywords`: a scan of the
   parser's events that builds every top-level value except the keywords, which it
   skips (and so finds any syntax error before anything is written);
2. the keywords, one at a time (`keywords.item`), checked and written in batches.

Everything happens in one transaction: the first problem stops the writing, the checks
go on to list every problem, and the transaction is rolled back, so a rejected document
leaves nothing behind. A valid one is scored as it is written (writer.py), so its
metrics are there as soon as the evaluation is.
"""

import shutil
import tempfile
from collections.abc import Callable
from typing import IO, Any

import ijson
from django.db import transaction

from apps.accounts.models import Team
from apps.core.bounded_json import (
    BOM,
    MAX_DEPTH,
    MAX_VALUE_BYTES,
    JsonLimitError,
    SurrogateGuard,
    text_problem,
    too_deep,
)
from apps.evaluations.models import Evaluation

from .checks import KeywordCheck, team_members
from .creation import evaluation_for_import, writer_for
from .problems import Problems
from .settings_check import SettingsCheck
from .text_files import file_name, not_text_problem

# The parser reads this much at a time: a long string costs it far less than in 64 KiB
# reads (bounded_json.MAX_VALUE_BYTES says why).
_BUFFER = MAX_VALUE_BYTES
_OPENING = ("start_map", "start_array")
_CLOSING = ("end_map", "end_array")
_DEPTH_STEP = {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1}


def import_document(
    *,
    team: Team,
    source: IO[bytes],
    name: str = "",
    created_by: Any = None,
    progress: Callable[[int], None] | None = None,
) -> Evaluation:
    """Create a pending evaluation from a JSON document, with its grades and metrics.

    `source` is a binary file object (read twice; copied to a temporary file first when
    it cannot seek). `name`, when given (the import page's field), is the evaluation's
    name instead of the document's: a document imports back into its own team under a
    new one. `progress`, if given, is called as batches are stored with the number of
    snapshots stored so far, in this thread and while no batch is being written (it
    may use the database). Raises InvalidInput listing every problem with its
    location; then nothing is written.
    """
    if not source.seekable():
        return _import_copy(
            team=team, source=source, name=name, created_by=created_by, progress=progress
        )
    start = source.tell()
    problems = Problems()
    not_text = not_text_problem(source, file_name(source, "document"))
    if not_text:  # a picture or an archive chosen by mistake: one line says it
        problems.add(not_text)
        problems.raise_if_any()
    header = read_top_level(SurrogateGuard(source), problems)
    if header is None:  # not JSON, or not an object: nothing more can be said
        problems.raise_if_any()
    assert header is not None
    if name.strip():
        header["name"] = name.strip()
    settings = SettingsCheck(header, problems)
    _skip_byte_order_mark(source, start)
    with transaction.atomic():
        evaluation = evaluation_for_import(
            team=team,
            arguments=settings.arguments,
            tag_names=settings.tag_names,
            created_by=created_by,
            problems=problems,
            reported=settings.flagged,
        )
        members = team_members(team)
        check = KeywordCheck(
            scale=settings.scale, strategy=settings.strategy, members=members, problems=problems
        )
        with writer_for(
            evaluation, progress, members.values(), source_label="JSON import"
        ) as writer:
            # The first pass checked the whole file's bytes (SurrogateGuard) and depth, so
            # this one reads the file as it is and builds.
            keywords = ijson.items(source, "keywords.item", use_float=True, buf_size=_BUFFER)
            for index, item in enumerate(keywords):
                keyword = check.check(index, item)
                if writer is None:
                    continue
                if keyword is None:
                    writer.stop()
                else:
                    writer.add(*keyword)
            problems.raise_if_any()
            assert writer is not None and evaluation is not None  # no problem: both exist
            writer.close()
    evaluation.refresh_from_db()
    return evaluation


def _skip_byte_order_mark(source: IO[bytes], start: int) -> None:
    """Back to the start for the second pass, past a UTF-8 byte-order mark if any."""
    source.seek(start)
    if source.read(len(BOM)) != BOM:
        source.seek(start)


def _import_copy(
    *,
    team: Team,
    source: IO[bytes],
    name: str,
    created_by: Any,
    progress: Callable[[int], None] | None,
) -> Evaluation:
    with tempfile.TemporaryFile() as copy:
        shutil.copyfileobj(source, copy)
        copy.seek(0)
        return import_document(
            team=team, source=copy, name=name, created_by=created_by, progress=progress
        )


def read_top_level(source: IO[bytes] | SurrogateGuard, problems: Problems) -> dict[str, Any] | None:
    """Every top-level value of the document except `keywords`, whose shape is checked.

    None when the file is not a JSON object: a syntax error, a nesting deeper than
    bounded_json.MAX_DEPTH or text that is not Unicode anywhere in the file is found
    here, before any write, and so is a setting holding a NUL character.
    """
    values: dict[str, Any] = {}
    try:
        events = ijson.basic_parse(source, use_float=True, buf_size=_BUFFER)
        first = next(events, None)
        if first is None or first[0] != "start_map":
            problems.add("document: must be a JSON object")
            return None
        for event, key in events:
            if event == "end_map":
                break
            # event is map_key: the next events are this key's value
            if key in values:
                problems.add(f"{key}: given twice")
            if key == "keywords":
                _skip_keywords(events, problems)
                values[key] = None
            else:
                values[key] = _build_value(events)
                # Lone surrogates never get here (SurrogateGuard); NUL can, as "\u0000",
                # and no column stores it: the document is refused as is, unchecked further.
                problem = text_problem(values[key], key)
                if problem:
                    problems.add(problem)
                    return None
        for _ in events:  # trailing content is a syntax error the parser reports
            pass
    except ijson.JSONError as error:
        problems.add(f"document: not valid JSON ({error})")
        return None
    except JsonLimitError as error:
        problems.add(f"document: {error}")
        return None
    except UnicodeDecodeError as error:
        problems.add(f"document: not UTF-8 text ({error.reason})")
        return None
    return values


# The values of the top-level keys sit one level below the document itself: nesting is
# counted from there, and refused past MAX_DEPTH before anything deeper is built (ijson's
# own builders cost memory and time that grow with the square of the depth).
_DEEPEST = MAX_DEPTH - 1


def _build_value(events: Any) -> Any:
    event, value = next(events)
    if event not in _OPENING:
        return value
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for event, value in events:
        if event in _OPENING:
            depth += 1
            if depth > _DEEPEST:
                raise too_deep()
        elif event in _CLOSING:
            depth -= 1
        builder.event(event, value)
        if depth == 0:
            break
    return builder.value


def _skip_keywords(events: Any, problems: Problems) -> None:
    """Pass over the keywords without building them (the second pass reads them)."""
    event, _ = next(events)
    if event != "start_array":
        problems.add("keywords: must be a list")
    if event not in _OPENING:
        return
    # The hot loop of the first pass: one event per JSON token of every keyword.
    depth = 1
    step = _DEPTH_STEP.get
    for event, _ in events:
        change = step(event)
        if change:
            depth += change
            if depth > _DEEPEST:
                raise too_deep()
            if not depth:
                break
