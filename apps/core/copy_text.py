"""PostgreSQL COPY in its text format: values as COPY reads them, and a model's table.

Used by the paths that create many rows at once (an import: apps/interchange/pgcopy.py,
with the rows each app owns: judging's slots and decisions, scoring's metrics). Rows are
written as COPY text directly: psycopg's write_row spends several microseconds per row on
type dispatch, which at millions of slots was the larger part of an import.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import models

NULL = "\\N"
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def text(value: str) -> str:
    """A text value in COPY's text format."""
    if "\\" in value or not value.isprintable():
        return value.translate(_ESCAPES)
    return value


def literal(value: Any) -> str:
    """Any other value in COPY's text format."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    if isinstance(value, str):
        return text(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"no COPY text for {value!r}")


def _concrete(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):  # a reverse relation has no column
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


class Table:
    """COPY into a model's table: the given fields in order, then every other column
    with its field's default, as bulk_create would give it (`tail` ends each line)."""

    def __init__(self, model: type[models.Model], fields: Sequence[str], connection: Any) -> None:
        named = [_concrete(model, name) for name in fields]
        others = [
            field
            for field in model._meta.concrete_fields
            if field not in named and not field.primary_key
        ]
        columns = ", ".join(f'"{field.column}"' for field in [*named, *others])
        self.table = model._meta.db_table
        self.sql = f'COPY "{self.table}" ({columns}) FROM STDIN'
        defaults = [field.get_db_prep_save(field.get_default(), connection) for field in others]
        self.tail = "".join(f"\t{literal(value)}" for value in defaults) + "\n"
