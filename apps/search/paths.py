"""Paths and templates that point into a JSON response: the language of the mapper.

A path is a chain of steps from a starting value:

    hits.hits[*]            key, key, wildcard over a list
    _source.price.amount    dotted keys
    images[0].url           an array index (negative counts from the end)
    ["my key"].value        a quoted key, for names with dots, brackets or spaces

A template joins text and paths: ``"{brand} {title} ({size})"``; ``{{`` and ``}}`` are
literal braces. Nothing here is ever evaluated as code: a path is parsed once into steps
and walked over dicts and lists, so a mapper typed into a form cannot run anything.

Looking a path up never raises for a shape mismatch; it returns `Missing` with a reason
written for a person ("'hits' is missing (top-level keys: took, data)"), because the
reason is what a team lead reads when their mapper and their search system disagree.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

_INDEX = re.compile(r"-?\d+")
# How many keys to list when a key is missing; more would drown the message.
_KEYS_SHOWN = 8


class PathSyntaxError(ValueError):
    """A path or template that cannot be parsed; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path. `end` is where the step ends in the source text, so error
    messages can quote the path up to the step that failed, as the user wrote it."""

    kind: Literal["key", "index", "wildcard"]
    key: str | int | None
    end: int


@dataclass(frozen=True, slots=True)
class Missing:
    """What a lookup returns when the path finds nothing, with the reason why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Path:
    source: str
    steps: tuple[Step, ...]

    @property
    def wildcard_count(self) -> int:
        return sum(1 for step in self.steps if step.kind == "wildcard")

    def lookup(self, value: object, *, root: str = "top-level") -> object:
        """Follow the steps from `value`; return what is there or a `Missing`.

        `root` names the starting value in messages: "top-level" for a whole response,
        "result" for one result. JSON null is returned as None (callers decide whether
        null counts as found).
        """
        return walk(self.source, self.steps, value, root=root)

    def split_at_wildcard(self) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
        """The steps before and after the (single) wildcard."""
        for position, step in enumerate(self.steps):
            if step.kind == "wildcard":
                return self.steps[:position], self.steps[position + 1 :]
        return self.steps, ()


@dataclass(frozen=True, slots=True)
class Template:
    source: str
    parts: tuple[str | Path, ...]

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(part for part in self.parts if isinstance(part, Path))

    def lookup(self, value: object, *, root: str = "result") -> str | Missing:
        """Render the template. A placeholder that finds nothing (or null) renders as
        empty text, so one absent field does not lose the whole label; the template as a
        whole finds nothing only when none of its placeholders found anything."""
        rendered: list[str] = []
        first_miss: Missing | None = None
        found_any = False
        for part in self.parts:
            if isinstance(part, str):
                rendered.append(part)
                continue
            found = part.lookup(value, root=root)
            if isinstance(found, Missing) or found is None:
                if first_miss is None:
                    first_miss = (
                        found if isinstance(found, Missing) else Missing(f"'{part.source}' is null")
                    )
                continue
            found_any = True
            rendered.append(as_text(found))
        if not found_any:
            reason = first_miss.reason if first_miss else "nothing found"
            return Missing(f"none of its placeholders found anything ({reason})")
        return "".join(rendered)


Selector = Path | Template


def parse_selector(text: str) -> Selector:
    """A template if the text has a brace, otherwise a path. (A key containing a brace
    can still be reached from inside a template: ``{["odd{key"]}``.)"""
    if "{" in text or "}" in text:
        return parse_template(text)
    return parse_path(text)


def parse_path(text: str) -> Path:
    if not text:
        raise PathSyntaxError("empty path")
    steps: list[Step] = []
    position = 0
    if text[0] != "[":
        position = _parse_key(text, 0, steps)
    while position < len(text):
        char = text[position]
        if char == ".":
            position = _parse_key(text, position + 1, steps)
        elif char == "[":
            position = _parse_bracket(text, position, steps)
        elif char == "]":
            raise PathSyntaxError(f"unmatched ] at character {position + 1}")
        else:
            raise PathSyntaxError(f"expected '.' or '[' after ']' at character {position + 1}")
    return Path(text, tuple(steps))


def _parse_key(text: str, start: int, steps: list[Step]) -> int:
    end = start
    while end < len(text) and text[end] not in ".[]":
        end += 1
    if end < len(text) and text[end] == "]":
        raise PathSyntaxError(f"unmatched ] at character {end + 1}")
    if end == start:
        if start == len(text):
            raise PathSyntaxError("path ends with '.'")
        raise PathSyntaxError(f"empty key at character {start + 1}")
    steps.append(Step("key", text[start:end], end))
    return end


def _parse_bracket(text: str, start: int, steps: list[Step]) -> int:
    inner_start = start + 1
    if inner_start < len(text) and text[inner_start] in "\"'":
        key, after_quote = _parse_quoted(text, inner_start)
        if after_quote >= len(text) or text[after_quote] != "]":
            raise PathSyntaxError("unclosed [")
        steps.append(Step("key", key, after_quote + 1))
        return after_quote + 1
    close = text.find("]", inner_start)
    if close < 0:
        raise PathSyntaxError("unclosed [")
    inner = text[inner_start:close]
    if inner == "*":
        steps.append(Step("wildcard", None, close + 1))
    elif _INDEX.fullmatch(inner):
        steps.append(Step("index", int(inner), close + 1))
    elif not inner:
        raise PathSyntaxError(f"empty [] at character {start + 1}")
    else:
        raise PathSyntaxError(f'[{inner}] must be a number, * or a quoted key like ["{inner}"]')
    return close + 1


def _parse_quoted(text: str, start: int) -> tuple[str, int]:
    """Read a quoted key starting at the quote; a backslash escapes the next character."""
    quote = text[start]
    chars: list[str] = []
    position = start + 1
    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            chars.append(text[position + 1])
            position += 2
        elif char == quote:
            return "".join(chars), position + 1
        else:
            chars.append(char)
            position += 1
    raise PathSyntaxError("unclosed quote")


def parse_template(text: str) -> Template:
    parts: list[str | Path] = []
    literal: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char in "{}" and text[position + 1 : position + 2] == char:
            literal.append(char)
            position += 2
        elif char == "}":
            raise PathSyntaxError(f"unmatched }} at character {position + 1}")
        elif char == "{":
            close = _placeholder_end(text, position + 1)
            inner = text[position + 1 : close]
            if not inner:
                raise PathSyntaxError(f"empty {{}} at character {position + 1}")
            try:
                path = parse_path(inner)
            except PathSyntaxError as exc:
                raise PathSyntaxError(f"{{{inner}}}: {exc}") from None
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(path)
            position = close + 1
        else:
            literal.append(char)
            position += 1
    if literal:
        parts.append("".join(literal))
    if not any(isinstance(part, Path) for part in parts):
        raise PathSyntaxError("template has no {path} placeholder")
    return Template(text, tuple(parts))


def _placeholder_end(text: str, start: int) -> int:
    """Index of the `}` closing a placeholder, skipping braces inside quoted keys."""
    position = start
    while position < len(text):
        char = text[position]
        if char in "\"'" and position > start and text[position - 1] == "[":
            try:
                _, position = _parse_quoted(text, position)
            except PathSyntaxError:
                raise PathSyntaxError("unclosed {") from None
            continue
        if char == "}":
            return position
        position += 1
    raise PathSyntaxError("unclosed {")


def walk(source: str, steps: tuple[Step, ...], value: object, *, root: str) -> object:
    """Follow `steps` from `value`; see `Path.lookup`."""
    current = value
    parent = ""  # the source text of the path so far, "" meaning the starting value
    for step in steps:
        here = source[: step.end]
        if step.kind == "key":
            if not isinstance(current, dict):
                return Missing(f"{_describe(parent, root)} is {kind_of(current)}, not an object")
            if step.key not in current:
                return Missing(f"'{here}' is missing ({_keys_hint(current, parent, root)})")
            current = current[step.key]
        elif step.kind == "index":
            assert isinstance(step.key, int)
            if not isinstance(current, list):
                return Missing(f"{_describe(parent, root)} is {kind_of(current)}, not a list")
            if not -len(current) <= step.key < len(current):
                return Missing(f"'{here}' is out of range (the list has {len(current)} items)")
            current = current[step.key]
        else:
            # A wildcard is only meaningful to the caller that iterates (the results
            # path); walking over one here would be a bug in that caller.
            raise ValueError("walk() does not expand [*]; split the path at the wildcard")
        parent = here
    return current


def _describe(parent: str, root: str) -> str:
    if parent:
        return f"'{parent}'"
    return "the response" if root == "top-level" else f"the {root}"


def _keys_hint(mapping: dict[object, object], parent: str, root: str) -> str:
    owner = f"keys of '{parent}'" if parent else f"{root} keys"
    if not mapping:
        return f"{owner}: none, it is an empty object"
    return f"{owner}: {keys_preview(mapping)}"


def keys_preview(mapping: dict[object, object]) -> str:
    keys = [str(key) for key in mapping]
    shown = ", ".join(keys[:_KEYS_SHOWN])
    return shown + (f", ... ({len(keys)} in all)" if len(keys) > _KEYS_SHOWN else "")


def kind_of(value: object) -> str:
    """A JSON type name for messages ("a list", "text", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def as_text(value: object) -> str:
    """How a found value reads in text: strings as they are, everything else in its JSON
    form (so true stays `true`, not Python's `True`)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
