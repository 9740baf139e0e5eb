"""Judging's hand-written SQL, each statement with the figure that keeps it over the ORM.

(The claim's statements are in queue_sql.py.)
"""

from django.db import connection

from apps.evaluations.models import Evaluation, FeedbackSlot

SLOTS = FeedbackSlot._meta.db_table
EVALUATIONS = Evaluation._meta.db_table


def lock_snapshot_of_slot() -> str:
    """The grade writer's read: every slot of the given slot's snapshot with its
    evaluation's team, status and scale, locked in id order (on SQLite the transaction
    holds the database's write lock instead).

    The ORM's version (select_related, a subquery, select_for_update(of=...)) took
    1.7 to 2.0 ms of the web process's CPU per grade to build, about what a whole grade
    request took before (bench/before_after.py, short runs); this takes a tenth of it.
    """
    lock = " FOR UPDATE OF s" if connection.features.has_select_for_update_of else ""
    return (
        "SELECT s.id, s.keyword_id, s.snapshot_id, s.grader_id, s.grade, s.snapshot_started, "
        "e.team_id, e.status, e.scale, e.scale_levels "
        f"FROM {SLOTS} s JOIN {EVALUATIONS} e ON e.id = s.evaluation_id "
        f"WHERE s.snapshot_id = (SELECT o.snapshot_id FROM {SLOTS} o WHERE o.id = %s) "
        f"ORDER BY s.id{lock}"
    )


def update_slot(columns: tuple[str, ...]) -> str:
    """The grade writer's write of one slot's columns (parameters: their values, then
    the slot's id). The ORM's update() built the same statement anew on every grade, for
    about 0.3 ms of the web process's CPU; with the lock read above it was a third of
    what the grade writer added to a grade request."""
    statement = _UPDATES.get(columns)
    if statement is None:
        assignments = ", ".join(f"{column} = %s" for column in columns)
        statement = _UPDATES[columns] = f"UPDATE {SLOTS} SET {assignments} WHERE id = %s"
    return statement


_UPDATES: dict[tuple[str, ...], str] = {}
