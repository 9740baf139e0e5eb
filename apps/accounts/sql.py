"""The accounts app's hand-written SQL, with the figures that keep it over the ORM
(bench/raw_sql_bench.py: each against an ORM version that returns the same, in one run).

Every request of a logged-in person reads their session, the person and their teams.
- The session with the person and their memberships (sessions.py, one SELECT):
  Django's database session store and ModelBackend, with the memberships read the same
  way, took 3.7 to 6.0 times as long (1.0 to 3.0 ms more a request).
- The person's memberships with their teams (selectors.memberships_of): the ORM's
  select_related took 4.1 to 5.1 times as long.
"""

from apps.core.rows import RowModels

from .models import Membership, Session, Team, User

PERSON = RowModels((User, "u"), (Membership, "m"), (Team, "t"))
PERSON_JOINS = (
    f"LEFT JOIN {Membership._meta.db_table} m ON m.user_id = u.id "
    f"LEFT JOIN {Team._meta.db_table} t ON t.id = m.team_id"
)
SESSION_AND_PERSON_SQL = (
    f"SELECT s.session_data, s.expire_date, {PERSON.columns} FROM {Session._meta.db_table} s "
    f"LEFT JOIN {User._meta.db_table} u ON u.id = s.user_id {PERSON_JOINS} "
    "WHERE s.session_key = %s AND s.expire_date > %s ORDER BY t.name, m.id"
)
PERSON_SQL = (
    f"SELECT {PERSON.columns} FROM {User._meta.db_table} u {PERSON_JOINS} "
    "WHERE u.id = %s ORDER BY t.name, m.id"
)


MEMBERSHIP_WITH_TEAM = RowModels((Membership, "m"), (Team, "t"))
MEMBERSHIPS_SQL = (
    f"SELECT {MEMBERSHIP_WITH_TEAM.columns} FROM {Membership._meta.db_table} m "
    f"JOIN {Team._meta.db_table} t ON t.id = m.team_id "
    "WHERE m.user_id = %s ORDER BY t.name, m.id"
)
