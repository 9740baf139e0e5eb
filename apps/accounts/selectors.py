"""Reads about people and teams."""

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Model

from .models import Membership, Role, Team

SESSION_TEAM_KEY = "relevo_team_id"


class RowModels:
    """Model instances from the rows of one hand-written SELECT, as the ORM builds them.

    `columns` is the select list of the (model, alias) pairs given, in order; `build(row)`
    applies each field's database converters (dates on SQLite, JSON, ...) and returns one
    instance per model. Reads made on every request use it: building and compiling an
    ORM query costs about half a millisecond of Python, more than the query itself.
    """

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
            made.append(model.from_db(connection.alias, names, values[start : start + len(fields)]))
            start += len(fields)
        return made


MEMBERSHIP_WITH_TEAM = RowModels((Membership, "m"), (Team, "t"))


def memberships_of(user: Any) -> list[Membership]:
    """The person's memberships with their teams, by team name (read on every page)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {MEMBERSHIP_WITH_TEAM.columns} FROM {Membership._meta.db_table} m "
            f"JOIN {Team._meta.db_table} t ON t.id = m.team_id "
            "WHERE m.user_id = %s ORDER BY t.name, m.id",
            [user.id],
        )
        rows = cursor.fetchall()
    memberships = []
    for row in rows:
        membership, team = MEMBERSHIP_WITH_TEAM.build(row)
        Membership.team.field.set_cached_value(membership, team)
        memberships.append(membership)
    return memberships  # type: ignore[return-value]


def current_membership(request: Any) -> Membership | None:
    """The membership of the team the person is working in (chosen in the switcher).

    Falls back to their first team when nothing is chosen or the choice is stale.
    """
    memberships = getattr(request, "_relevo_memberships", None)
    if memberships is None:
        # Read with the person when the session logged them in (accounts.sessions).
        memberships = getattr(request.user, "loaded_memberships", None)
    if memberships is None:
        memberships = memberships_of(request.user)
        for membership in memberships:
            # membership.user is the person already loaded, not another query.
            Membership.user.field.set_cached_value(membership, request.user)
    request._relevo_memberships = memberships
    chosen = request.session.get(SESSION_TEAM_KEY)
    for membership in memberships:
        if membership.team_id == chosen:
            return membership
    return memberships[0] if memberships else None


def is_lead(membership: Membership | None) -> bool:
    return membership is not None and membership.role in (Role.OWNER, Role.ADMIN)
