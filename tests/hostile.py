"""Hostile inputs and the answer property shared by the property-based tests
(tests/test_property_api.py, tests/test_property_imports.py, tests/test_property_forms.py).

The property: every request gets a success, or a 4xx whose JSON body
says what is wrong in the API's error shape (apps/api/errors.py); never a 5xx. A rejected
import leaves the database as it was.
"""

import json
import logging
import os
import re
import sys
import traceback
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.core.signals import got_request_exception
from django.db import transaction

# --- Hostile values ---------------------------------------------------------------------

# Integers just past the columns' ranges: int4 (positions, counts), smallint (grades,
# cutoffs), and one past any 64-bit column.
INT4_OVER = 2**31  # 2147483648
SMALLINT_OVER = 2**15  # 32768
SMALLINT_UNDER = -(2**15) - 1  # -32769
HUGE = 10**30
HOSTILE_INTS = {
    "2**31": INT4_OVER,
    "2**15": SMALLINT_OVER,
    "-2**15-1": SMALLINT_UNDER,
    "10**30": HUGE,
}
DEPTH = 5_000
MEGABYTE = 1_000_000


def deep_array(depth: int = DEPTH) -> str:
    """JSON text of a list nested `depth` deep: [[[...]]]."""
    return "[" * depth + "]" * depth


def deep_object(depth: int = DEPTH) -> str:
    """JSON text of an object nested `depth` deep: {"a":{"a":...1}}."""
    return '{"a":' * depth + "1" + "}" * depth


@dataclass(frozen=True)
class Raw:
    """A JSON value given as its exact text (what json.dumps cannot write: NaN kept as a
    token, 5,000 levels of nesting without recursion, an escaped lone surrogate)."""

    text: str


# What every field of a JSON body gets in place of its value: out-of-range integers,
# wrong types, text no database column takes. Each is (label, JSON text).
HOSTILE_JSON_VALUES: list[tuple[str, str]] = [
    *((label, str(value)) for label, value in HOSTILE_INTS.items()),
    ("lone surrogate", '"\\udfff"'),
    ("lone surrogate key", '{"\\udfff": 1}'),
    ("NUL", '"a\\u0000b"'),
    ("NUL key", '{"a\\u0000": 1}'),
    ("1 MB string", '"' + "x" * MEGABYTE + '"'),
    ("deep array", deep_array()),
    ("deep object", deep_object()),
    ("NaN", "NaN"),
    ("1e999", "1e999"),
    ("float", "1.5"),
    ("whole float", "3.0"),
    ("1e20", "1e20"),
    ("true", "true"),
    ("null", "null"),
    ("empty string", '""'),
    ("list", '[1, "a"]'),
    ("object", '{"a": 1}'),
]


def render(value: Any, *, ensure_ascii: bool = True) -> str:
    """JSON text of a value that may hold Raw parts, pasted as they are."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        items = (
            json.dumps(str(key), ensure_ascii=ensure_ascii)
            + ":"
            + render(item, ensure_ascii=ensure_ascii)
            for key, item in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(render(item, ensure_ascii=ensure_ascii) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


def encode(text: str) -> bytes:
    """UTF-8, with any lone surrogate written as its (invalid) three-byte form."""
    return text.encode("utf-8", "surrogatepass")


Path = tuple[str | int, ...]


def leaf_paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """The path of every value in a JSON structure: containers and leaves alike."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaf_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaf_paths(item, (*prefix, index))


def replaced(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with the value at `path` replaced by `new`."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {
            key: (replaced(item, rest, new) if key == head else item) for key, item in value.items()
        }
    assert isinstance(value, list)
    return [
        replaced(item, rest, new) if index == head else item for index, item in enumerate(value)
    ]


def path_text(path: Path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(body)"


# --- Multipart bodies -------------------------------------------------------------------


def multipart(
    fields: dict[str, bytes | str], files: dict[str, tuple[str, bytes]]
) -> tuple[str, bytes]:
    """(content type, body) of a multipart/form-data request, built byte for byte so a
    field may hold bytes that are not UTF-8 (the test client would refuse them)."""
    boundary = "hostile" + uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        data = value if isinstance(value, bytes) else encode(value)
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    for name, (filename, data) in files.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: text/plain\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return f"multipart/form-data; boundary={boundary}", body


# --- The answer property ----------------------------------------------------------------


class _TracebackHandler(logging.Handler):
    def __init__(self, tracebacks: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.tracebacks = tracebacks

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.tracebacks.append("".join(traceback.format_exception(*record.exc_info)))


class ServerErrors:
    """The tracebacks of the exceptions Django turned into 500 answers, as they happen.

    Use as a context manager around the requests; `head()` gives the last one's last
    lines, for a failure message."""

    def __init__(self) -> None:
        self.tracebacks: list[str] = []
        self._handler = _TracebackHandler(self.tracebacks)

    def _record(self, sender: Any, **kwargs: Any) -> None:
        self.tracebacks.append("".join(traceback.format_exception(*sys.exc_info())))

    def __enter__(self) -> "ServerErrors":
        got_request_exception.connect(self._record, weak=False)
        # A 5xx the app answers itself (the 503 of apps.core.unavailable) is logged with
        # its exception rather than signalled.
        logging.getLogger().addHandler(self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        got_request_exception.disconnect(self._record)
        logging.getLogger().removeHandler(self._handler)

    def head(self, lines: int = 12) -> str:
        """The last traceback's deepest frame in the app's own code, then its last lines."""
        if not self.tracebacks:
            return "(no traceback recorded)"
        text = self.tracebacks[-1].rstrip().splitlines()
        ours = [
            index
            for index, line in enumerate(text)
            if line.lstrip().startswith('File "') and f"{os.sep}apps{os.sep}" in line
        ]
        frame = [*text[ours[-1] : ours[-1] + 2], "    ..."] if ours else []
        return "\n".join(frame + text[-lines:])


def problems_with_answer(
    status: int, content_type: str, content: bytes, *, needs_location: bool = False
) -> list[str]:
    """What is wrong with an answer under the property; an empty list when nothing.

    2xx and 3xx are fine. A 4xx must be JSON {"detail": "<text>", "errors": [{"field",
    "message"}]}; with `needs_location`, a 400 must list at least one problem and each
    must name its field or line (the last may be "... and N more problems")."""
    if status >= 500:
        return [f"server error {status}"]
    if status < 400:
        return []
    if not content_type.startswith("application/json"):
        return [
            f"{status} answered {content_type or 'no content type'}, not JSON: {content[:200]!r}"
        ]
    try:
        body = json.loads(content)
    except ValueError:
        return [f"{status} with a body that is not JSON: {content[:200]!r}"]
    found = []
    if not isinstance(body, dict) or not isinstance(body.get("detail"), str) or not body["detail"]:
        found.append(f"{status} without a 'detail' message: {content[:300]!r}")
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list) or not all(
        isinstance(e, dict) and isinstance(e.get("message"), str) and e["message"] for e in errors
    ):
        found.append(f"{status} without an 'errors' list of messages: {content[:300]!r}")
        return found
    if needs_location and status == 400:
        if not errors:
            found.append(f"400 listing no problem: {content[:300]!r}")
        for index, error in enumerate(errors):
            tail = index == len(errors) - 1 and error["message"].startswith("... and ")
            if not (isinstance(error.get("field"), str) and error["field"].strip()) and not tail:
                found.append(f"400 with a problem naming no field or line: {error!r}")
    return found


@dataclass
class Failure:
    """One request that broke the property: what was sent, what was wrong, and the head
    of the server's traceback (empty when there was none)."""

    request: str
    problem: str
    traceback: str = ""

    @property
    def cause(self) -> str:
        """The exception's line ("module.Error: message"), or the problem: failures with
        one cause group."""
        lines = self.traceback.strip().splitlines()
        for line in reversed(lines):
            if re.match(r"^\s*[\w.]+(Error|Exception|Warning|Exit)\b", line):
                return line.strip()[:300]
        return lines[-1][:300] if lines else self.problem[:120]


def report(failures: list[Failure], sent: int, examples: int = 3) -> str:
    """The failures grouped by cause, each group with its first few requests."""
    groups: dict[str, list[Failure]] = {}
    for failure in failures:
        groups.setdefault(failure.cause, []).append(failure)
    lines = [f"{len(failures)} of {sent} requests broke the property, {len(groups)} causes:"]
    for cause, members in groups.items():
        lines.append(f"\n* {cause}  ({len(members)} requests)")
        for failure in members[:examples]:
            lines.append(f"  - {failure.request[:300]} -> {failure.problem[:300]}")
        lines.extend("    " + line for line in members[0].traceback.splitlines())
    return "\n".join(lines)


def problems_with_invalid_input(problems: list[str]) -> list[str]:
    """InvalidInput.problems of an import: each "<field or line>: <message>"."""
    if not problems:
        return ["InvalidInput listing no problem"]
    found = []
    for index, problem in enumerate(problems):
        location, separator, message = problem.partition(": ")
        tail = index == len(problems) - 1 and problem.startswith("... and ")
        if not tail and (not separator or not location.strip() or not message.strip()):
            found.append(f"problem naming no field or line: {problem!r}")
    return found


# --- The database -----------------------------------------------------------------------


def row_counts() -> dict[str, int]:
    """The number of rows of every model: what a rejected import must leave as it was."""
    return {
        f"{model._meta.app_label}.{model.__name__}": model._base_manager.count()
        for model in apps.get_models()
        if not model._meta.proxy
    }


@contextmanager
def rolled_back() -> Iterator[None]:
    """Run a block in a savepoint that is rolled back after it: each example starts from
    the same rows, and a database error the app let through cannot break the next one."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def count_changes(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {name: (before[name], after[name]) for name in before if before[name] != after[name]}
