"""Set different values on many rows in few statements.

Django's bulk_update builds one CASE expression per column, which grows slow past a few
thousand rows. On PostgreSQL we send each column as one array and join on the ids
(UPDATE ... FROM unnest(...)), which updates hundreds of thousands of rows in seconds.
Other databases fall back to bulk_update.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models


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
    sql = (
        f'UPDATE "{meta.db_table}" AS t SET {assignments} '
        f"FROM unnest({casts}) AS v({names}) WHERE t.id = v.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, *columns.values()])


def _set_portably(model: type[models.Model], ids: list[int], columns: dict[str, list[Any]]) -> None:
    objects = []
    for position, pk in enumerate(ids):
        obj = model(pk=pk)
        for name, values in columns.items():
            setattr(obj, name, values[position])
        objects.append(obj)
    model._default_manager.bulk_update(objects, list(columns), batch_size=500)
