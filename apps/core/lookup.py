"""Finding one of the team's objects the way people and CI jobs name them: by id, or by
name when no id matches (a job's script knows a model as "Staging ranker", not as 17)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, QuerySet

from .typed import parse_id

NAME_LIMIT = 200  # longer than any name column: a longer text names nothing

Found = TypeVar("Found", bound=Model)


def by_id_or_name(
    objects: QuerySet[Found], chosen: Any, *, field: str, label: str, problems: list[str]
) -> Found | None:
    """The one of `objects` (already the team's) whose id, or else name, is `chosen`;
    None, with a problem naming `field`, when there is none."""
    text = str(chosen if chosen is not None else "").strip()
    if "\x00" in text:
        problems.append(f"{field}: must not contain NUL (0x00) characters")
        return None
    if not text:
        problems.append(f"{field}: a {label} of the team, by id or name")
        return None
    text = text[:NAME_LIMIT]
    number = parse_id(text)
    found = objects.filter(id=number).first() if number is not None else None
    found = found or objects.filter(name=text).first()
    if found is None:
        problems.append(f"{field}: the team has no {label} {text!r}")
    return found
