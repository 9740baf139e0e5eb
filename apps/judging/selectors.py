"""Reads of the grader's work: which evaluations they may judge, what they hold, counts.

The reads on the grading path (every grade posts and gets the next card) are written in
SQL: building and compiling an ORM query costs about half a millisecond of Python each,
more than PostgreSQL takes to answer it, and grading makes several per request. They run
through Django's cursor (so they are counted and logged like any query) and on SQLite as
on PostgreSQL; RowModels turns their rows into the same model instances the ORM would.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import connection
from django.db.models import ForeignKey, Model, QuerySet
from django.utils import timezone

from apps.accounts.models import Membership, Tag
from apps.core.rows import RowModels
from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    Keyword,
    Snapshot,
    SnapshotSkip,
    Status,
)

SLOTS = FeedbackSlot._meta.db_table
SKIPS = SnapshotSkip._meta.db_table
EVALUATIONS = Evaluation._meta.db_table
EVALUATION_TAGS = Evaluation.tags.through._meta.db_table
MEMBERSHIP_TAGS = Membership.tags.through._meta.db_table
TAGS = Tag._meta.db_table


class SlotRows:
    """A slot read in one statement with its snapshot, keyword and evaluation, built into
    the instances select_related would give (aliases s, p, k, e)."""

    RELATED_JOINS = (
        f"JOIN {Snapshot._meta.db_table} p ON p.id = s.snapshot_id "
        f"JOIN {Keyword._meta.db_table} k ON k.id = s.keyword_id "
        f"JOIN {EVALUATIONS} e ON e.id = s.evaluation_id"
    )
    JOINS = f"{SLOTS} s {RELATED_JOINS}"
    RELATED = ("snapshot", "keyword", "evaluation")

    def __init__(self, *related: tuple[type[Model], str]) -> None:
        self.rows = RowModels((FeedbackSlot, "s"), *related)
        # Unquoted but for "index" (a keyword to SQLite even after "alias."): the claim's
        # statement must stay short (queue_sql.claim_sql).
        self.columns = ", ".join(
            f'{alias}."{field.column}"' if field.column == "index" else f"{alias}.{field.column}"
            for _model, alias, fields in self.rows.parts
            for field in fields
        )
        # The slot's foreign key to each related model, which caches the instance built.
        self.relations = [
            next(
                field
                for field in map(FeedbackSlot._meta.get_field, self.RELATED)
                if isinstance(field, ForeignKey) and field.related_model is model
            )
            for model, _alias in related
        ]

    def slot(self, row: Sequence[Any]) -> FeedbackSlot:
        slot, *related = self.rows.build(row)
        for relation, instance in zip(self.relations, related, strict=True):
            relation.set_cached_value(slot, instance)
        return cast(FeedbackSlot, slot)  # the rows' first model (__init__)


SLOT_WITH_ALL = SlotRows((Snapshot, "p"), (Keyword, "k"), (Evaluation, "e"))
SLOT_WITH_EVALUATION = SlotRows((Evaluation, "e"))


def _one(sql: str, params: Sequence[Any] | dict[str, Any]) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _slot_with_all(where: str, params: Sequence[Any], order: str = "") -> FeedbackSlot | None:
    row = _one(
        f"SELECT {SLOT_WITH_ALL.columns} FROM {SlotRows.JOINS} WHERE {where} {order} LIMIT 1",
        params,
    )
    return None if row is None else SLOT_WITH_ALL.slot(row)


def lock_cutoff(now: datetime | None = None) -> datetime:
    """Slots assigned before this moment have lost their lock."""
    return (now or timezone.now()) - timedelta(seconds=settings.SLOT_LOCK_SECONDS)


def evaluations_open_to(membership: Membership) -> QuerySet[Evaluation]:
    """Active evaluations of the team whose every tag the member holds (the shared pool)."""
    tags_not_held = Tag.objects.filter(team_id=membership.team_id).exclude(
        id__in=membership.tags.values("id")
    )
    return (
        Evaluation.objects.filter(team_id=membership.team_id, status=Status.ACTIVE, archived=False)
        .exclude(tags__in=tags_not_held)
        .order_by("started_at", "id")
    )


# The ids of evaluations_open_to(membership), in the same order, as one cheap SELECT with
# the named parameters team, active and membership (the queue's claim embeds it).
OPEN_EVALUATIONS_SQL = (
    f"SELECT e.id FROM {EVALUATIONS} e "
    "WHERE e.team_id = %(team)s AND e.status = %(active)s AND NOT e.archived "
    f"AND NOT EXISTS (SELECT 1 FROM {EVALUATION_TAGS} et WHERE et.evaluation_id = e.id "
    f"AND et.tag_id IN (SELECT t.id FROM {TAGS} t WHERE t.team_id = %(team)s AND t.id NOT IN "
    f"(SELECT mt.tag_id FROM {MEMBERSHIP_TAGS} mt WHERE mt.membership_id = %(membership)s))) "
    "ORDER BY e.started_at, e.id"
)


def open_evaluations_parameters(membership: Membership) -> dict[str, Any]:
    return {"team": membership.team_id, "active": Status.ACTIVE.value, "membership": membership.id}


def evaluation_ids_open_to(membership: Membership) -> list[int]:
    """The ids of evaluations_open_to(membership), in the same order, in one cheap read."""
    with connection.cursor() as cursor:
        cursor.execute(OPEN_EVALUATIONS_SQL, open_evaluations_parameters(membership))
        return [evaluation_id for (evaluation_id,) in cursor.fetchall()]


def slot_for_display(slot_id: int) -> FeedbackSlot:
    """The slot with its snapshot, keyword and evaluation, as the card shows it."""
    slot = _slot_with_all("s.id = %s", [slot_id])
    if slot is None:
        raise FeedbackSlot.DoesNotExist(f"no slot {slot_id}")
    return slot


def slot_in_team(*, slot_id: int, team_id: int) -> FeedbackSlot | None:
    """The slot, with its evaluation, if it belongs to the team (None otherwise)."""
    row = _one(
        f"SELECT {SLOT_WITH_EVALUATION.columns} FROM {SLOTS} s "
        f"JOIN {EVALUATIONS} e ON e.id = s.evaluation_id WHERE s.id = %s AND e.team_id = %s",
        [slot_id, team_id],
    )
    return None if row is None else SLOT_WITH_EVALUATION.slot(row)


def previous_graded_slot(
    *, user: Any, team_id: int, before: datetime | None = None
) -> FeedbackSlot | None:
    """The grader's last graded slot of an active evaluation of the team (before a moment,
    to walk further back)."""
    slots = FeedbackSlot.objects.filter(
        grader=user,
        graded_at__isnull=False,
        evaluation__status=Status.ACTIVE,
        evaluation__team_id=team_id,
    )
    if before is not None:
        slots = slots.filter(graded_at__lt=before)
    return slots.select_related("snapshot", "keyword", "evaluation").order_by("-graded_at").first()


def start_of_today() -> Any:
    """Midnight of today in the site's time zone, as the database compares it."""
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return connection.ops.adapt_datetimefield_value(start)


# How many grades the grader gave today (named parameters user and today).
GRADES_TODAY_SQL = (
    f"SELECT COUNT(*) FROM {SLOTS} WHERE grader_id = %(user)s AND graded_at >= %(today)s"
)


def grades_today(*, user: Any) -> int:
    row = _one(GRADES_TODAY_SQL, {"user": user.id, "today": start_of_today()})
    assert row is not None
    return row[0]
