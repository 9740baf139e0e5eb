"""Who is logged in: the session and the person, each read with one plain SELECT.

Every request of a logged-in person reads their session and then the person; Django's
store and backend build an ORM query for each, whose Python costs several times what
PostgreSQL takes to answer. Rows, writes and invalidation (logout deletes the session
row) are exactly the database store's, and the checks on the person (active, session
hash) exactly Django's: only the reads are written by hand.
"""

from typing import Any, cast

from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connection, connections, router
from django.utils import timezone

from .models import Membership, Team, User
from .selectors import RowModels


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):  # type: ignore[no-untyped-def]
        if not self.session_key:  # no cookie, or one the store refused as malformed
            self._session_key = None
            return None
        model = self.model
        connection = connections[router.db_for_read(model)]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT session_data, expire_date FROM {model._meta.db_table} "
                "WHERE session_key = %s AND expire_date > %s",
                [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return model(session_key=self.session_key, session_data=row[0], expire_date=row[1])


USER_WITH_MEMBERSHIPS = RowModels((User, "u"), (Membership, "m"), (Team, "t"))
USER_WITH_MEMBERSHIPS_SQL = (
    f"SELECT {USER_WITH_MEMBERSHIPS.columns} FROM {User._meta.db_table} u "
    f"LEFT JOIN {Membership._meta.db_table} m ON m.user_id = u.id "
    f"LEFT JOIN {Team._meta.db_table} t ON t.id = m.team_id "
    "WHERE u.id = %s ORDER BY t.name, m.id"
)


class UserBackend(ModelBackend):
    """Django's model backend, whose get_user (run on every request of a logged-in
    person) reads the person with their memberships and teams in one statement.

    The memberships, in the order memberships_of gives them, wait on the user as
    `loaded_memberships` for current_membership, which would otherwise read them.
    """

    def get_user(self, user_id: Any) -> User | None:  # type: ignore[override]
        with connection.cursor() as cursor:
            cursor.execute(USER_WITH_MEMBERSHIPS_SQL, [user_id])
            rows = cursor.fetchall()
        if not rows:
            return None
        user = cast(User, USER_WITH_MEMBERSHIPS.build(rows[0])[0])
        memberships = []
        for row in rows:
            _user, membership, team = USER_WITH_MEMBERSHIPS.build(row)
            if membership.pk is None:  # the person belongs to no team
                break
            Membership.team.field.set_cached_value(membership, team)
            Membership.user.field.set_cached_value(membership, user)
            memberships.append(membership)
        user.loaded_memberships = memberships  # type: ignore[attr-defined]
        return user if self.user_can_authenticate(user) else None
