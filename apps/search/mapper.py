"""The response mapper: turns a search system's JSON into documents.

A mapper spec is plain data that a team lead types into a form::

    {
        "results": "hits.hits[*]",
        "id": "_id",
        "name": "_source.title",
        "image": "_source.img",
        "attributes": {"price": "_source.price.amount", "label": "{_source.brand} {_source.title}"},
    }

`results` has exactly one ``[*]``, as its last step, over the list of results; every
other entry is a path or template relative to one result (see `paths`). `id` and `name`
are required, `image` and attributes optional.

Two kinds of failure are kept apart: a spec that is wrong in itself (`validate_mapper`
lists every problem with its location, for the form) and a spec that does not fit a
particular response (`MappingError`, naming the path and what was found instead, for the
keyword's execution status).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .paths import (
    Missing,
    Path,
    PathSyntaxError,
    Selector,
    as_text,
    keys_preview,
    kind_of,
    parse_path,
    parse_selector,
)

REQUIRED_FIELDS = ("id", "name")
KNOWN_FIELDS = ("results", "id", "name", "image", "attributes")
# Duplicate ids listed in one error before "and N more".
_DUPLICATES_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Document:
    """One mapped result. `image` is "" when the mapper has none or it found nothing;
    `attributes` holds only the attributes that found something (JSON values as found,
    templates as text)."""

    doc_id: str
    name: str
    image: str = ""
    attributes: dict[str, object] = field(default_factory=dict)


class InvalidMapper(ValueError):
    """The spec itself is wrong. `problems` are located ("mapper.id: required")."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class MappingError(ValueError):
    """The spec does not fit this response. `result` is the 1-based result number when
    one result is at fault, `path` the mapper path that found nothing or the wrong kind."""

    def __init__(self, message: str, *, result: int | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.result = result
        self.path = path


@dataclass(frozen=True, slots=True)
class Mapper:
    """A checked spec, ready to apply to many responses (compile once per model)."""

    results: Path
    id: Selector
    name: Selector
    image: Selector | None
    attributes: tuple[tuple[str, Selector], ...]

    @classmethod
    def compile(cls, spec: object) -> Mapper:
        mapper, problems = _compile(spec)
        if mapper is None:
            raise InvalidMapper(problems)
        return mapper

    def apply(self, payload: object) -> list[Document]:
        items = self._result_list(payload)
        documents = [self._document(item, number) for number, item in enumerate(items, 1)]
        _check_unique_ids(documents)
        return documents

    def _result_list(self, payload: object) -> list[object]:
        before, _ = self.results.split_at_wildcard()
        found = Path(self.results.source, before).lookup(payload)
        where = f"results path '{self.results.source}'"
        if isinstance(found, Missing):
            raise MappingError(f"{where}: {found.reason}", path=self.results.source)
        if not isinstance(found, list):
            holder = f"'{self.results.source[: before[-1].end]}'" if before else "the response"
            hint = f" (keys: {keys_preview(found)})" if isinstance(found, dict) and found else ""
            raise MappingError(
                f"{where}: {holder} is {kind_of(found)}, not a list{hint}",
                path=self.results.source,
            )
        return found

    def _document(self, item: object, number: int) -> Document:
        label = self._result_label(number)
        doc_id = _required_text(self.id, item, "id", label, number)
        if doc_id == "":
            raise MappingError(
                f"{label}: id path '{self.id.source}' found an empty string",
                result=number,
                path=self.id.source,
            )
        name = _required_text(self.name, item, "name", label, number)
        image = ""
        if self.image is not None:
            found = self.image.lookup(item, root="result")
            if not _is_nothing(found):
                image = _scalar_text(found, self.image, "image", label, number)
        attributes: dict[str, object] = {}
        for attribute, selector in self.attributes:
            found = selector.lookup(item, root="result")
            if not _is_nothing(found):
                attributes[attribute] = found
        return Document(doc_id=doc_id, name=name, image=image, attributes=attributes)

    def _result_label(self, number: int) -> str:
        # "result 3 (hits.hits[2])": the count a person uses, then where it sits in the
        # raw JSON, which is what they will look for in the response shown beside it.
        before, _ = self.results.split_at_wildcard()
        container = self.results.source[: before[-1].end] if before else ""
        return f"result {number} ({container}[{number - 1}])"


def validate_mapper(spec: object) -> list[str]:
    """Every problem of the spec, each with its location; empty when it is usable."""
    return _compile(spec)[1]


def map_response(spec: Mapping[str, object] | Mapper, payload: object) -> list[Document]:
    """Apply a spec (or a compiled `Mapper`) to a parsed JSON response.

    Raises `InvalidMapper` for a broken spec and `MappingError` when the response does
    not fit it (results not found, a required field missing, duplicate ids).
    """
    mapper = spec if isinstance(spec, Mapper) else Mapper.compile(spec)
    return mapper.apply(payload)


def _compile(spec: object) -> tuple[Mapper | None, list[str]]:
    if not isinstance(spec, Mapping):
        return None, [f"mapper: must be an object, not {kind_of(spec)}"]
    problems: list[str] = []
    for key in spec:
        if key not in KNOWN_FIELDS:
            problems.append(f"mapper.{key}: unknown field (expected {', '.join(KNOWN_FIELDS)})")

    results = _compile_results(spec.get("results"), problems)
    selectors: dict[str, Selector | None] = {}
    for name in ("id", "name", "image"):
        selectors[name] = _compile_selector(
            spec.get(name), f"mapper.{name}", problems, required=name in REQUIRED_FIELDS
        )

    attributes: list[tuple[str, Selector]] = []
    raw_attributes = spec.get("attributes")
    if raw_attributes is not None and not isinstance(raw_attributes, Mapping):
        problems.append(f"mapper.attributes: must be an object, not {kind_of(raw_attributes)}")
    elif raw_attributes:
        for attribute, raw in raw_attributes.items():
            if not isinstance(attribute, str) or not attribute.strip():
                problems.append("mapper.attributes: attribute names must be non-empty text")
                continue
            location = f"mapper.attributes.{attribute}"
            if raw is None or raw == "":
                problems.append(f"{location}: empty path")
                continue
            selector = _compile_selector(raw, location, problems, required=True)
            if selector is not None:
                attributes.append((attribute, selector))

    id_selector, name_selector = selectors["id"], selectors["name"]
    if problems or results is None or id_selector is None or name_selector is None:
        return None, problems
    mapper = Mapper(results, id_selector, name_selector, selectors["image"], tuple(attributes))
    return mapper, []


def _compile_results(raw: object, problems: list[str]) -> Path | None:
    location = "mapper.results"
    if raw is None or raw == "":
        problems.append(f"{location}: required")
        return None
    if not isinstance(raw, str):
        problems.append(f"{location}: must be a path (text), not {kind_of(raw)}")
        return None
    try:
        path = parse_path(raw)
    except PathSyntaxError as exc:
        problems.append(f"{location}: {exc}")
        return None
    if path.wildcard_count != 1:
        problems.append(f"{location}: needs exactly one [*] (found {path.wildcard_count})")
        return None
    if path.steps[-1].kind != "wildcard":
        problems.append(f"{location}: [*] must be the last step (the list of results)")
        return None
    return path


def _compile_selector(
    raw: object, location: str, problems: list[str], *, required: bool
) -> Selector | None:
    """An optional entry left out, null or blank (as a form sends it) is not mapped."""
    if raw is None or raw == "":
        if required:
            problems.append(f"{location}: required")
        return None
    if not isinstance(raw, str):
        problems.append(f"{location}: must be a path or template (text), not {kind_of(raw)}")
        return None
    try:
        selector = parse_selector(raw)
    except PathSyntaxError as exc:
        problems.append(f"{location}: {exc}")
        return None
    paths = selector.paths if not isinstance(selector, Path) else (selector,)
    if any(path.wildcard_count for path in paths):
        problems.append(f"{location}: [*] is only allowed in mapper.results")
        return None
    return selector


def _is_nothing(found: object) -> bool:
    return isinstance(found, Missing) or found is None


def _required_text(selector: Selector, item: object, field: str, label: str, number: int) -> str:
    found = selector.lookup(item, root="result")
    if _is_nothing(found):
        reason = found.reason if isinstance(found, Missing) else "it is null"
        raise MappingError(
            f"{label}: {field} path '{selector.source}' found nothing ({reason})",
            result=number,
            path=selector.source,
        )
    if field == "id" and isinstance(found, bool):
        raise MappingError(
            f"{label}: id path '{selector.source}' found a boolean, expected text or a number",
            result=number,
            path=selector.source,
        )
    return _scalar_text(found, selector, field, label, number)


def _scalar_text(found: object, selector: Selector, field: str, label: str, number: int) -> str:
    """Ids, names and images are text; numbers (e.g. numeric ids) become their JSON text,
    while an object or list means the path stops one level too early."""
    if isinstance(found, dict | list):
        raise MappingError(
            f"{label}: {field} path '{selector.source}' found {kind_of(found)}, "
            "expected text or a number",
            result=number,
            path=selector.source,
        )
    return as_text(found)


def _check_unique_ids(documents: list[Document]) -> None:
    seen: dict[str, list[int]] = {}
    for number, document in enumerate(documents, 1):
        seen.setdefault(document.doc_id, []).append(number)
    duplicates = [(doc_id, numbers) for doc_id, numbers in seen.items() if len(numbers) > 1]
    if not duplicates:
        return
    described = [
        f"'{doc_id}' (results {', '.join(map(str, numbers))})"
        for doc_id, numbers in duplicates[:_DUPLICATES_SHOWN]
    ]
    more = len(duplicates) - _DUPLICATES_SHOWN
    tail = f" and {more} more" if more > 0 else ""
    raise MappingError(f"duplicate ids in one response: {', '.join(described)}{tail}")
