"""Model instances from the rows of hand-written SELECTs, as the ORM builds them.

Reads made on every request (the session's person, the grader's card) are written in
SQL: building and compiling an ORM query costs about half a millisecond of Python, more
than the query itself. RowModels turns their rows into the instances the ORM would give.
"""

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model


class RowModels:
    """`columns` is the select list of the (model, alias) pairs given, in order;
    `build(row)` applies each field's database converters (dates on SQLite, JSON, ...)
    and returns one instance per model."""

    def __init__(
        self,
        *parts: tuple[type[Model], str],
        leave_out: Mapping[type[Model], Collection[str]] | None = None,
    ) -> None:
        """`leave_out`: per model, fields the reader never needs, which the instance then
        defers (read on first access, as QuerySet.defer gives them)."""
        leave_out = leave_out or {}
        self.parts = [
            (
                model,
                alias,
                [
                    field
                    for field in model._meta.concrete_fields
                    if field.name not in leave_out.get(model, ())
                ],
            )
            for model, alias in parts
        ]
        self.names = [[field.attname for field in fields] for _model, _alias, fields in self.parts]
        self.columns = ", ".join(
            f'{alias}."{field.column}"' for _model, alias, fields in self.parts for field in fields
        )
        self._converters: dict[str, list] = {}

    def _converters_for_connection(self) -> list:
        converters = self._converters.get(connection.vendor)
        if converters is None:
            converters = []
            for _model, alias, fields in self.parts:
                for field in fields:
                    column = field.get_col(alias)
                    chain = connection.ops.get_db_converters(column)
                    chain += column.get_db_converters(connection)
                    converters.append((chain, column))
            self._converters[connection.vendor] = converters
        return converters

    def build(self, row: Sequence[Any]) -> list[Model]:
        values = list(row)
        for position, (chain, column) in enumerate(self._converters_for_connection()):
            for convert in chain:
                values[position] = convert(values[position], column, connection)
        made, start = [], 0
        for (model, _alias, fields), names in zip(self.parts, self.names, strict=True):
            made.append(instance_from_db(model, names, values[start : start + len(fields)]))
            start += len(fields)
        return made


def instance_from_db(model: type[Model], names: list[str], values: Sequence[Any]) -> Model:
    """`model.from_db` for a row of the concrete fields `names` (all of them, or some: the
    others are deferred), in their order. (Building the
    instance without Model.__init__ saved 11 to 28 us a read, 1.03 to 1.16x: not enough
    to keep a copy of Django's construction; bench/raw_sql_bench.py at d7c3974.)"""
    return model.from_db(connection.alias, names, values)
