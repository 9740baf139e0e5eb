"""Who is logged in: the session and the person with their teams, read in one statement.

Every request of a logged-in person reads their session and then the person; Django's
store and backend build an ORM query for each, whose Python costs several times what
PostgreSQL takes to answer, and each is a round trip. Here the session row names its
person (models.Session.user, filled in whenever the session is saved), so one plain
SELECT reads the session, the person, and their memberships with their teams. Rows,
writes and invalidation (logout deletes the session row) are the database store's, and
the checks on the person (the id in the signed session data, active, session hash)
exactly Django's: only the reads are written by hand (sql.py, with the figure that keeps
them: Django's store and backend took 3.7 to 6.0 times as long).
"""

from contextvars import ContextVar
from typing import Any, cast

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connection
from django.utils import timezone

from apps.core.typed import parse_id

from .models import Membership, Session, User
from .sql import PERSON, PERSON_SQL, SESSION_AND_PERSON_SQL

# The person the last session read named, for UserBackend.get_user, which Django calls
# with the id from that session's data later in the same request.
_read_with_session: ContextVar[User | None] = ContextVar("read_with_session", default=None)


class SessionStore(DatabaseSessionStore):
    @classmethod
    def get_model_class(cls) -> type[Session]:
        return Session

    def create_model_instance(self, data: dict[str, Any]) -> Session:
        session = cast(Session, super().create_model_instance(data))
        session.user_id = parse_id(str(data.get(SESSION_KEY)))
        return session

    def _get_session_from_db(self) -> Session | None:
        _read_with_session.set(None)
        if not self.session_key:  # no cookie, or one the store refused as malformed
            self._session_key = None
            return None
        with connection.cursor() as cursor:
            cursor.execute(
                SESSION_AND_PERSON_SQL,
                [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())],
            )
            rows = cursor.fetchall()
        if not rows:
            self._session_key = None
            return None
        session_data, expire_date = rows[0][:2]
        _read_with_session.set(_person(row[2:] for row in rows))
        return Session(
            session_key=self.session_key, session_data=session_data, expire_date=expire_date
        )


def _person(rows: Any) -> User | None:
    """The person of PERSON rows (one per membership), their memberships, in name order,
    waiting on the user as `loaded_memberships` for current_membership."""
    user: User | None = None
    memberships: list[Membership] = []
    for row in rows:
        person, membership, team = PERSON.build(row)
        if person.pk is None:  # a session of nobody
            return None
        if user is None:
            user = cast(User, person)
        if membership.pk is None:  # the person belongs to no team
            break
        Membership.team.field.set_cached_value(membership, team)
        Membership.user.field.set_cached_value(membership, user)
        memberships.append(cast(Membership, membership))
    if user is not None:
        user.loaded_memberships = memberships
    return user


class UserBackend(ModelBackend):
    """Django's model backend, whose get_user (run on every request of a logged-in
    person) takes the person read with the session, when it is the one the session's
    data names, or else reads the person with their memberships and teams in one
    statement."""

    def get_user(self, user_id: Any) -> User | None:
        user = _read_with_session.get()
        _read_with_session.set(None)
        if user is None or str(user.pk) != str(user_id):
            with connection.cursor() as cursor:
                cursor.execute(PERSON_SQL, [user_id])
                user = _person(cursor.fetchall())
        if user is None:
            return None
        return user if self.user_can_authenticate(user) else None
