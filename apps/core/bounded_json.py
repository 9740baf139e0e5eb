"""JSON read with limits: nesting depth, and text that is valid Unicode.

Python's `json` recurses once per nesting level (a body nested 5,000 deep raises
RecursionError), and accepts escapes of lone UTF-16 surrogates ("\\udfff"), which give a
str that cannot be encoded as UTF-8: the database refuses it later with a 500, or a
driver writes "?" in its place. Every JSON Relevo reads from a person, a file or a search
system goes through here first, so such input is refused with where it went wrong.

The streaming import (ijson) has the same limits: it counts the depth of the parser's
events as it goes (interchange/document.py, refusing with `too_deep`), and
`SurrogateGuard` reads the raw bytes before the parser does (its C backend turns a lone
surrogate into "?" or a decoding error).

No Django here: the checks are pure and used by the API, forms, imports and the search
client alike.
"""

import json
import re
from typing import IO, Any

# Deepest nesting any JSON Relevo reads may have. An evaluation document needs 7 levels
# (document, keywords, keyword, snapshots, snapshot, grades, grade); a result's
# `attributes` object starts at level 6 and may nest a few levels more.
MAX_DEPTH = 20

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_OPEN = frozenset("[{")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class JsonLimitError(ValueError):
    """JSON that breaks a limit; the message says which and where."""


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, refusing JSON nested deeper than max_depth and text that is not
    valid Unicode (lone surrogates) or holds NUL characters, which no column can store.

    Raises JsonLimitError for a broken limit, json.JSONDecodeError (a ValueError) for
    text that is not JSON.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise JsonLimitError(f"not UTF-8 text (byte {error.start})") from None
    check_depth(text, max_depth)
    value = json.loads(text)
    problem = text_problem(value)
    if problem is not None:
        raise JsonLimitError(problem)
    return value


def check_depth(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse text whose arrays and objects nest deeper than max_depth, before a
    recursive parser sees it. Linear: strings are cut out by a regular expression, then
    only the brackets are counted."""
    depth = 0
    outside_strings = _STRING.sub('""', text)
    for match in _BRACKET.finditer(outside_strings):
        if match.group() in _OPEN:
            depth += 1
            if depth > max_depth:
                raise too_deep(max_depth)
        else:
            depth -= 1


def text_problem(value: Any, where: str = "") -> str | None:
    """The first text (a key or a string, at any depth) that is not valid Unicode or
    holds a NUL character, as "<where>: ..."; None when all are valid. Iterative, so
    it is safe on any depth the parser allowed."""
    pending: list[tuple[str, Any]] = [(where, value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            problem = _bad_text(item)
            if problem:
                return f"{path or 'body'}: {problem}"
        elif isinstance(item, dict):
            for key, inner in item.items():
                problem = _bad_text(key)
                if problem:
                    return f"{path or 'body'}: a key {problem}"
                pending.append((f"{path}.{key}" if path else key, inner))
        elif isinstance(item, list):
            pending.extend((f"{path}[{index}]", inner) for index, inner in enumerate(item))
    return None


def _bad_text(text: str) -> str | None:
    if _SURROGATE.search(text):
        return "is not valid Unicode (a lone surrogate such as \\ud800)"
    if "\x00" in text:
        return "must not contain NUL characters"
    return None


def too_deep(max_depth: int = MAX_DEPTH) -> JsonLimitError:
    return JsonLimitError(f"nested deeper than {max_depth} levels")


# A backslash run, then u and a surrogate's four hex digits: an escape only when the run
# is odd (an even run is escaped backslashes followed by a plain "u").
_SURROGATE_ESCAPE = re.compile(rb"(\\+)u[dD]([89a-fA-F])[0-9a-fA-F]{2}")
_LOW_ESCAPE = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark
# The longest run of bytes between two double quotes: the longest string (or number) a
# streamed document may hold. No field is near it; ijson's C parser takes time that grows
# with the square of a long non-ASCII string's length (4 MB of "é": 3 s), so longer ones
# are refused before it sees them.
MAX_VALUE_BYTES = 1024 * 1024


class SurrogateGuard:
    """A binary reader over a JSON stream that refuses escapes of lone surrogates and
    values longer than MAX_VALUE_BYTES before the parser sees them, and drops a leading
    UTF-8 byte-order mark.

    High surrogates must be followed at once by a low one ("\\ud83d\\ude00" is an emoji,
    as json.dumps writes it); anything else raises JsonLimitError naming the line.
    Scans with a regular expression, so a large import costs little more.
    """

    def __init__(self, source: IO[bytes]) -> None:
        self._source = source
        self._resume = 0  # where the next scan starts in the held bytes
        self._ready = b""  # scanned, not yet handed to the parser
        self._held = b""  # the unscanned end of the last read (an escape may span reads)
        self._line = 1
        self._since_quote = 0  # bytes read since the last double quote
        self._started = False
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        # Never answer b"" before the end: the parser would take it for the end.
        while not self._ready and not self._ended:
            self._fill(size if size and size > 0 else 65536)
        if size is None or size < 0:
            size = len(self._ready)
        answer, self._ready = self._ready[:size], self._ready[size:]
        return answer

    def _fill(self, size: int) -> None:
        # Reads no longer than the longest value, so _measure sees every long run.
        size = min(size, MAX_VALUE_BYTES)
        data = self._source.read(size)
        if not self._started:
            self._started = True
            while 0 < len(data) < len(BOM):  # the mark may come in more than one read
                more = self._source.read(size)
                if not more:
                    break
                data += more
            if data.startswith(BOM):
                data = data[len(BOM) :] or self._source.read(size)
        if not data:
            self._ended = True
            data, self._held = self._held, b""
            self._scan(data, len(data))
            self._ready += data
            return
        self._measure(data)
        data = self._held + data
        cut = self._safe_end(data)
        self._scan(data, cut)
        self._ready += data[:cut]
        self._held = data[cut:]

    def _measure(self, data: bytes) -> None:
        """Refuse a run of more than MAX_VALUE_BYTES without a double quote. A read is no
        longer than that, so such a run spans reads: it is what came after the last
        quote of earlier reads plus what comes before the first quote of this one."""
        first = data.find(b'"')
        if first == -1:
            self._since_quote += len(data)
        else:
            self._since_quote += first
            if self._since_quote <= MAX_VALUE_BYTES:
                self._since_quote = len(data) - data.rfind(b'"') - 1
        if self._since_quote > MAX_VALUE_BYTES:
            raise JsonLimitError(
                f"after line {self._line}: a value longer than {MAX_VALUE_BYTES:,} bytes"
            )

    @staticmethod
    def _safe_end(data: bytes) -> int:
        """Where to stop scanning: 12 bytes before the end (a pair of escapes), moved
        back out of a run of backslashes so that no run is split between reads."""
        cut = max(0, len(data) - 12)
        while cut > 0 and data[cut - 1 : cut] == b"\\":
            cut -= 1
        return cut

    def _scan(self, data: bytes, end: int) -> None:
        """Check the escapes that start before `end` (a low surrogate after a high one
        may lie beyond it: the next scan resumes after it), and count the lines up to
        there."""
        position = self._resume
        while True:
            match = _SURROGATE_ESCAPE.search(data, position, end + 6)
            if match is None or match.start() >= end:
                break
            position = match.end()
            if len(match.group(1)) % 2 == 0:
                continue  # escaped backslashes, then a plain "u"
            is_high = match.group(2).lower() in b"89ab"
            if is_high and _LOW_ESCAPE.match(data, position):
                position += 6
                continue
            line = self._line + data.count(b"\n", 0, match.start())
            escape = match.group()[len(match.group(1)) - 1 :].decode("ascii")
            raise JsonLimitError(f"line {line}: {escape} is a lone surrogate, not valid Unicode")
        self._line += data.count(b"\n", 0, end)
        self._resume = max(0, position - end)
