"""Model instances from the rows of hand-written SELECTs, as the ORM builds them.

Reads made on every request (the session's person, the grader's card) are written in
SQL: building and compiling an ORM query costs about half a millisecond of Python, more
than the query itself. RowModels turns their rows into the instances the ORM would give.
"""

from collections.abc import Sequence
from inspect import getattr_static
from typing import Any

from django.db import connection
from django.db.models import Model, signals
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute

# Descriptors whose only work on assignment is storing the value in the instance's
# __dict__ (a foreign key's also forgets a cached related object, which a new instance
# has none of).
PLAIN_DESCRIPTORS = (DeferredAttribute, ForeignKeyDeferredAttribute)


class RowModels:
    """`columns` is the select list of the (model, alias) pairs given, in order;
    `build(row)` applies each field's database converters (dates on SQLite, JSON, ...)
    and returns one instance per model."""

    def __init__(self, *parts: tuple[type[Model], str]) -> None:
        self.parts = [(model, alias, model._meta.concrete_fields) for model, alias in parts]
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
    """What `model.from_db(alias, names, values)` gives for a row of every concrete field,
    in their order, made without running Model.__init__.

    __init__ sends two signals and assigns each field through its descriptor: on the
    grading path, where every request builds seven instances, that was a tenth of the
    web process's time. Made directly, the instance holds the same __dict__ and state.
    A model for which that would not be the same (a pre_init or post_init receiver, its
    own from_db, a field with a descriptor of its own) is built by from_db.
    """
    if not takes_the_direct_path(model):
        return model.from_db(connection.alias, names, values)
    instance = model.__new__(model)
    state = ModelState()
    state.adding = False
    state.db = connection.alias
    instance._state = state
    instance.__dict__.update(zip(names, values, strict=True))
    return instance


_PLAIN: dict[type[Model], bool] = {}


def takes_the_direct_path(model: type[Model]) -> bool:
    """Whether instance_from_db builds this model without __init__."""
    plain = _PLAIN.get(model)
    if plain is None:
        # The classmethod object itself, found in the class dicts: Model's unless overridden.
        plain = getattr_static(model, "from_db") is getattr_static(Model, "from_db") and all(
            type(getattr(model, field.attname, None)) in PLAIN_DESCRIPTORS
            for field in model._meta.concrete_fields
        )
        _PLAIN[model] = plain
    # Receivers can be connected at any time; the signal caches the answer per sender.
    return plain and not (
        signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model)
    )
