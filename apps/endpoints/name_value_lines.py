"""Name/value pairs as a lead types them: one pair per line, and back again.

Headers are ``Name: value`` and query parameters ``name=value``. A line is split at the
FIRST separator only, so values keep theirs (``Authorization: Basic a:b``,
``fq=type:shoe``, ``filter=a=b``). Blank lines are skipped; a line without the separator
or without a name is a problem naming its line number, as the lead counts lines in the
text box. Pure Python, no Django: tested on plain strings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based, counting blank lines too, as a text box shows them
    name: str
    value: str


def parse_lines(text: str, *, separator: str, field: str) -> tuple[list[Line], list[str]]:
    """The pairs typed in `text`, and every problem located as "<field> line N: ..."."""
    pairs: list[Line] = []
    problems: list[str] = []
    example = "Name: value" if separator == ":" else "name=value"
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        name, found, value = raw.partition(separator)
        if not found:
            problems.append(f"{field} line {number}: no '{separator}' (write {example})")
            continue
        if not name.strip():
            problems.append(f"{field} line {number}: the name before '{separator}' is empty")
            continue
        pairs.append(Line(number, name.strip(), value.strip()))
    return pairs, problems


def format_lines(pairs: list[list[str]] | list[tuple[str, str]], *, separator: str) -> str:
    """Stored pairs as the text the lead typed (for an edit form)."""
    joiner = ": " if separator == ":" else separator
    return "\n".join(f"{name}{joiner}{value}" for name, value in pairs)


def keyword_lines(text: str) -> list[str]:
    """One keyword per line: trimmed, blank lines and repeats skipped, order kept."""
    seen: dict[str, None] = {}
    for raw in text.splitlines():
        keyword = raw.strip()
        if keyword:
            seen.setdefault(keyword, None)
    return list(seen)


# Header names whose values are credentials: pages that only show a header (the endpoint
# and model pages, open to every lead) hide the value; the edit form still holds it.
SECRET_HEADER_WORDS = ("authorization", "token", "key", "secret", "password", "cookie", "auth")


def shown_headers(headers: list[list[str]]) -> list[tuple[str, str]]:
    """Headers to show on a page: a credential's value replaced by a note of its length."""
    shown = []
    for name, value in headers:
        if any(word in name.lower() for word in SECRET_HEADER_WORDS):
            value = f"hidden ({len(value)} characters; Edit shows it)"
        shown.append((name, value))
    return shown
