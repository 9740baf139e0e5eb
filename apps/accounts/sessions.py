"""The database session store, reading its row with one plain SELECT.

Every request of a logged-in person reads their session; Django's store builds an ORM
query for it, whose Python costs several times what PostgreSQL takes to answer. Rows,
writes and invalidation (logout deletes the row) are exactly the database store's.
"""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone


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
