"""Set or upsert different values on many rows in few statements.

Django's bulk_update builds one CASE expression per column, which grows slow past a few
thousand rows. On PostgreSQL we send each column as one array and join on the ids
(UPDATE ... FROM unnest(...)), which updates hundreds of thousands of rows in seconds.
Upserts go the same way (INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE):
bulk_create spends most of its time building and preparing one model instance per row.
Other databases fall back to bulk_update and bulk_create.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models
from psycopg.types.json import Jsonb


def bulk_set(
    model: type[models.Model],
    ids: Sequence[int],
    columns: Mapping[str, Sequence[Any]],
    *,
    batch_size: int = 5000,
) -> None:
    """For each i, set row ids[i]'s field name to columns[name][i]."""
    if not ids:
        return
    for values in columns.values():
        if len(values) != len(ids):
            raise ValueError("every column needs one value per id")
    for start in range(0, len(ids), batch_size):
        stop = start + batch_size
        batch = {name: list(values[start:stop]) for name, values in columns.items()}
        # pipeline_bench.py, full recompute of 600,000 slots: 23 s this way, 189 s through
        # bulk_update and bulk_create (both branches of this module; 2026-11-28, loaded machine).
        if connection.vendor == "postgresql":
            _set_on_postgres(model, list(ids[start:stop]), batch)
        else:
            _set_portably(model, list(ids[start:stop]), batch)


def _concrete_field(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or not field.concrete:
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field


def _set_on_postgres(
    model: type[models.Model], ids: list[int], columns: dict[str, list[Any]]
) -> None:
    meta = model._meta
    fields = [_concrete_field(model, name) for name in columns]
    assignments = ", ".join(f'"{f.column}" = v."{f.column}"' for f in fields)
    casts = ", ".join(["%s::bigint[]"] + [f"%s::{f.db_type(connection)}[]" for f in fields])
    names = ", ".join(["id"] + [f'"{f.column}"' for f in fields])
    # The range is redundant for the result but not for the plan: the planner sees a
    # batch of thousands of ids and, without it, hashes a sequential scan of the whole
    # table for every batch. With it, a batch of neighbouring ids (rows created
    # together) reads only their part of the primary key index.
    sql = (
        f'UPDATE "{meta.db_table}" AS t SET {assignments} '
        f"FROM unnest({casts}) AS v({names}) "
        f"WHERE t.id = v.id AND t.id BETWEEN %s AND %s"
    )
    values = [
        _adapted(field, column) for field, column in zip(fields, columns.values(), strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, *values, min(ids), max(ids)])


def _set_portably(model: type[models.Model], ids: list[int], columns: dict[str, list[Any]]) -> None:
    objects = []
    for position, pk in enumerate(ids):
        obj = model(pk=pk)
        for name, values in columns.items():
            setattr(obj, name, values[position])
        objects.append(obj)
    model._default_manager.bulk_update(objects, list(columns), batch_size=500)


def bulk_upsert(
    model: type[models.Model],
    columns: Mapping[str, Sequence[Any]],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
    batch_size: int = 5000,
) -> None:
    """Insert row i with field name = columns[name][i]; where a row with the same
    unique_fields exists, set its update_fields instead (none: leave that row as it is).

    Values are given as the database stores them (a foreign key's id, an aware datetime);
    no field defaults or auto_now apply, so give every column the table needs.
    """
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise ValueError("every column needs the same number of values")
    count = lengths.pop() if lengths else 0
    for start in range(0, count, batch_size):
        stop = start + batch_size
        batch = {name: list(values[start:stop]) for name, values in columns.items()}
        # Measured with bulk_set's branch above (pipeline_bench.py: 23 s against 189 s).
        if connection.vendor == "postgresql":
            _upsert_on_postgres(model, batch, unique_fields, update_fields)
        else:
            _upsert_portably(model, batch, unique_fields, update_fields)


def _upsert_on_postgres(
    model: type[models.Model],
    columns: dict[str, list[Any]],
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
) -> None:
    fields = [_concrete_field(model, name) for name in columns]
    names = ", ".join(f'"{f.column}"' for f in fields)
    casts = ", ".join(f"%s::{f.db_type(connection)}[]" for f in fields)
    conflict = ", ".join(f'"{_concrete_field(model, name).column}"' for name in unique_fields)
    assignments = ", ".join(
        f'"{column}" = EXCLUDED."{column}"'
        for column in (_concrete_field(model, name).column for name in update_fields)
    )
    on_conflict = f"DO UPDATE SET {assignments}" if assignments else "DO NOTHING"
    sql = (
        f'INSERT INTO "{model._meta.db_table}" ({names}) SELECT * FROM unnest({casts}) '
        f"ON CONFLICT ({conflict}) {on_conflict}"
    )
    values = [
        _adapted(field, column) for field, column in zip(fields, columns.values(), strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)


def _adapted(field: models.Field, values: list[Any]) -> list[Any]:
    """A column's values as the driver sends them in an array: JSON wrapped as jsonb
    (a list would otherwise be read as a nested array)."""
    if not isinstance(field, models.JSONField):
        return values
    return [None if value is None else Jsonb(value) for value in values]


def _upsert_portably(
    model: type[models.Model],
    columns: dict[str, list[Any]],
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
) -> None:
    attnames = [_concrete_field(model, name).attname for name in columns]
    objects = []
    for values in zip(*columns.values(), strict=True):
        obj = model()
        for attname, value in zip(attnames, values, strict=True):
            setattr(obj, attname, value)
        objects.append(obj)
    if not update_fields:
        model._default_manager.bulk_create(objects, ignore_conflicts=True, batch_size=500)
        return
    model._default_manager.bulk_create(
        objects,
        update_conflicts=True,
        unique_fields=list(unique_fields),
        update_fields=list(update_fields),
        batch_size=500,
    )
