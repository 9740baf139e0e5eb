"""Judging's hand-written SQL, each statement with the figure that keeps it over the ORM.

bench/raw_sql_bench.py times each against an ORM version that returns the same, in one
run on the HTTP bench's data (3,000 keywords x 20 results x 3 slots, 32 graders); the
rule is to keep a statement only where the ORM took at least 1.5 times as long on the
grading path. Most of the difference is Python: building and compiling an ORM query
costs about half a millisecond, more than PostgreSQL takes to answer it.

- The claim (claim_sql): pick, take and read a slot with the grader's count of grades
  today in one statement: ORM 13.3 ms against 3.0 ms (4.4x; 9 statements against 3).
- The card's slot with its snapshot, keyword and evaluation (SLOT_WITH_ALL, SQLite's
  claim): ORM select_related().get() 4.1 to 4.3x.
- The evaluations open to a grader (OPEN_EVALUATIONS_SQL, embedded in the claim):
  ORM 15 to 20x; the count of grades today (GRADES_TODAY_SQL): ORM 2.4 to 2.8x.
- The grade writer's read (about 11x) and slot write (2.5x): snapshot_of_slot,
  update_slot.

A claim picks the slot to give the grader (the one they hold, else the first free slot
they may take), takes it with a conditional UPDATE, and reads it for the card. On
PostgreSQL all of it is one statement (claim_sql); elsewhere the pick, the take and the
read run one after the other in the claim's transaction (pick_sql, TAKE_SQL).
"""

from collections.abc import Sequence
from typing import Any, cast

from django.db import connection
from django.db.models import ForeignKey, Model

from apps.accounts.models import Membership, Tag
from apps.core.rows import RowModels
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Snapshot, SnapshotSkip

SLOTS = FeedbackSlot._meta.db_table
SKIPS = SnapshotSkip._meta.db_table
EVALUATIONS = Evaluation._meta.db_table
EVALUATION_TAGS = Evaluation.tags.through._meta.db_table
MEMBERSHIP_TAGS = Membership.tags.through._meta.db_table
TAGS = Tag._meta.db_table


# What the grader's card never reads of a slot: whether a copied grade is stale, and who
# gave its grade (the claim's slots have none yet).
CARD_UNREAD_SLOT_FIELDS = (
    "content_fingerprint",
    "stale",
    "source",
    "source_detail",
    "reused_from",
    "reused_from_list",
)
REUSE_FIELDS = ("reuse", "reuse_fresh_only", "reuse_judges")


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
        # The grader's card never reads whether a copied grade is stale, who gave it, nor
        # how its evaluation reuses grades: the claim's statement stays under 4,096 bytes
        # without those columns (claim_sql).
        self.rows = RowModels(
            (FeedbackSlot, "s"),
            *related,
            leave_out={FeedbackSlot: CARD_UNREAD_SLOT_FIELDS, Evaluation: REUSE_FIELDS},
        )
        # Unquoted but for "index" (a keyword to SQLite even after "alias."): the claim's
        # statement must stay short (claim_sql).
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


# How many grades the grader gave today (named parameters user and today): their own,
# not an import's that names them nor one reuse copied (models.FeedbackSlot).
GRADES_TODAY_SQL = (
    f"SELECT COUNT(*) FROM {SLOTS} WHERE grader_id = %(user)s AND graded_at >= %(today)s "
    "AND NOT (reused OR imported)"
)


# Slots are offered in the order of the index slot_queue_order: snapshots that have a
# grade first, then keyword order, then position.
ALL_KEYWORDS = 2**31 - 1  # above any keyword_position


# Taking the picked slot: the held one (its lock renewed) or a free one. The condition
# makes it succeed for one claimer only: a slot taken by another grader since it was
# picked (whose lock is live) is refused.
TAKE_CONDITION = (
    "grade IS NULL AND (grader_id = %(user)s OR grader_id IS NULL OR assigned_at < %(cutoff)s)"
)
TAKE_SQL = (
    f"UPDATE {SLOTS} SET grader_id = %(user)s, assigned_at = %(now)s "
    f"WHERE id = %(slot)s AND {TAKE_CONDITION}"
)


def claim_sql(lead_queue: bool) -> str:
    """PostgreSQL: one statement that finds the evaluations open to the grader (or takes
    the lead's one), picks a slot (pick_sql), takes it (as TAKE_SQL), and reads it with
    its snapshot, keyword and evaluation, and the grader's count of grades today.

    Its row: the picked slot's id (None: nothing free), the count, then the taken slot's
    columns (None: another claim took the slot first).

    It is kept under psycopg's 4,096 bytes, the longest statement whose conversion to
    PostgreSQL's placeholders psycopg remembers: a longer one was converted again on every
    claim, a tenth of the web process's time.
    """
    key = ("claim", int(lead_queue))
    sql = STATEMENTS.get(key)
    if sql is None:
        sql = (
            f"WITH open AS ({_evaluations(lead_queue)}), "
            f"pick AS ({pick_sql(None)}), "
            f"taken AS (UPDATE {SLOTS} t SET grader_id = %(user)s, assigned_at = %(now)s "
            f"FROM pick WHERE t.id = pick.id AND {TAKE_CONDITION} RETURNING t.*) "
            f"SELECT pick.id, ({GRADES_TODAY_SQL}), {SLOT_WITH_ALL.columns} FROM pick "
            f"LEFT JOIN (taken s {SlotRows.RELATED_JOINS}) ON TRUE"
        )
        STATEMENTS[key] = sql
    return sql


def locked_left_sql(lead_queue: bool) -> str:
    """PostgreSQL, when a claim picked nothing: whether slots are left for the grader that
    others hold locked for now (their claim or grade has not committed yet)."""
    key = ("locked left", int(lead_queue))
    sql = STATEMENTS.get(key)
    if sql is None:
        in_evaluations = f"s.evaluation_id IN ({_evaluations(lead_queue)})"
        sql = f"SELECT EXISTS (SELECT 1 FROM {SLOTS} s WHERE {_open_to_grader(in_evaluations)})"
        STATEMENTS[key] = sql
    return sql


def waiting_sql(*, started: bool) -> str:
    """How many results the grader could be given: the distinct snapshots among at most
    %(walk)s free slots of the evaluations open to them. Snapshots that have a grade
    (started) and those that have none are counted apart: no snapshot is in both, and the
    fresh ones are found without passing over the grader's own."""
    key = ("waiting", int(started))
    sql = STATEMENTS.get(key)
    if sql is None:
        in_evaluations = f"s.evaluation_id IN ({OPEN_EVALUATIONS_SQL})"
        flag = "s.snapshot_started" if started else "NOT s.snapshot_started"
        sql = (
            "SELECT COUNT(DISTINCT w.snapshot_id) FROM "
            f"(SELECT s.snapshot_id FROM {SLOTS} s WHERE {_open_to_grader(in_evaluations)} "
            f"AND {flag} LIMIT %(walk)s) w"
        )
        STATEMENTS[key] = sql
    return sql


def held_sql() -> str:
    """Whether the grader holds an ungraded slot in an evaluation open to them (the queue
    gives it back first)."""
    key = ("held", 0)
    sql = STATEMENTS.get(key)
    if sql is None:
        sql = (
            f"SELECT EXISTS (SELECT 1 FROM {SLOTS} h WHERE h.grader_id = %(user)s "
            f"AND h.grade IS NULL AND h.evaluation_id IN ({OPEN_EVALUATIONS_SQL}))"
        )
        STATEMENTS[key] = sql
    return sql


def _evaluations(lead_queue: bool) -> str:
    """The evaluations a claim draws from: the lead's one, or those open to the grader."""
    return "SELECT %(evaluation)s::bigint AS id" if lead_queue else OPEN_EVALUATIONS_SQL


def pick_sql(evaluations: int | None) -> str:
    """One SELECT that picks the slot to give the grader: the ungraded slot they hold in
    one of the evaluations (most recently assigned first), else the first free slot they
    may take, locked for the claim. The evaluations are the parameters e0, e1... (their
    number given), or on PostgreSQL (None given) the rows of the CTE `open`, in order.

    In each evaluation in turn (oldest first) it tries three searches, and answers the
    first slot found; PostgreSQL runs a search only when all before it found nothing, so
    one statement costs what the searches it needs cost, whatever the number of
    evaluations (a search per evaluation used to be a query per evaluation).

    Each search walks the queue's index (slot_queue_order); the walk passes over slots
    the grader may not take. A grader far ahead of the others has a slot on every
    started snapshot near the front, and one search over the whole queue walked past all
    of them on every claim (42 ms behind a lead of 10,000 snapshots, against 2 ms). So
    the started snapshots are searched only in a window at the front, then the fresh
    ones; only when both have nothing for the grader is the whole queue searched, which
    may find a started snapshot beyond the window. Such a grader therefore starts fresh
    snapshots before joining started ones far back: the others finish those.

    On PostgreSQL the searches of an evaluation sit in a LATERAL subquery fenced with
    OFFSET 0: unfenced, the planner pulled it up and wrote its COALESCE twice, once to
    test it and once to answer it, and every claim ran its searches twice.

    The window ends with the keyword of its STARTED_WINDOW-th slot: a bound on
    keyword_position is a range on the index, so the walk stops there whatever plan the
    database picks. The "grader already has a slot of this snapshot" and "skipped it"
    tests are subqueries fenced with OFFSET 0, so PostgreSQL runs them per slot walked,
    as a lookup in a unique index; unfenced, it turned them into anti-joins whose plan
    follows the statistics, and with statistics from before the grading began it scanned
    every assigned slot for each slot walked.
    """
    key = (connection.vendor, -1 if evaluations is None else evaluations)
    sql = STATEMENTS.get(key)
    if sql is not None:
        return sql
    if evaluations is None:
        searches = ", ".join(_searches("o.id"))
        held_in = "SELECT id FROM open"
        free = (
            f"(SELECT f.id FROM open o, LATERAL (SELECT COALESCE({searches}) AS id OFFSET 0) f "
            "WHERE f.id IS NOT NULL LIMIT 1)"
        )
    else:
        held_in = ", ".join(f"%(e{n})s" for n in range(evaluations))
        free = ", ".join(search for n in range(evaluations) for search in _searches(f"%(e{n})s"))
    # Still theirs: nobody took it, even if its lock ran out (the take renews it).
    held = (
        f"(SELECT h.id FROM {SLOTS} h WHERE h.grader_id = %(user)s AND h.grade IS NULL "
        f"AND h.evaluation_id IN ({held_in}) ORDER BY h.assigned_at DESC LIMIT 1)"
    )
    sql = f"SELECT COALESCE({held}, {free}) AS id"
    STATEMENTS[key] = sql
    return sql


def _searches(evaluation: str) -> list[str]:
    """The three searches for a free slot in one evaluation (an SQL expression).

    On PostgreSQL each locks the slot it finds and passes over slots others hold locked:
    concurrent claimers pass over each other's candidates. None of them waits for a
    lock: a search that waited used to deadlock with another claim, because a locking
    search keeps the locks it took on slots that changed under it (a slot claimed since
    the search began) while it waits. When every slot left is locked, the claim looks
    again a moment later (services.slot_claim_next_for_card).
    """
    features = connection.features
    lock = ""
    if features.has_select_for_update:
        lock = " FOR UPDATE OF s" + (
            " SKIP LOCKED" if features.has_select_for_update_skip_locked else ""
        )
    # The index's order; the first two searches fix snapshot_started, so it starts after.
    within = 's.keyword_position, s.snapshot_position, s."index"'
    open_to_grader = _open_to_grader(f"s.evaluation_id = {evaluation}")
    window_end = (
        f"(SELECT w.keyword_position FROM {SLOTS} w WHERE w.evaluation_id = {evaluation} "
        "AND w.grade IS NULL AND w.snapshot_started "
        'ORDER BY w.keyword_position, w.snapshot_position, w."index" LIMIT 1 OFFSET %(window)s)'
    )
    return [
        f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_grader} AND s.snapshot_started "
        f"AND s.keyword_position <= COALESCE({window_end}, {ALL_KEYWORDS}) "
        f"ORDER BY {within} LIMIT 1{lock})",
        f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_grader} AND NOT s.snapshot_started "
        f"ORDER BY {within} LIMIT 1{lock})",
        f"(SELECT s.id FROM {SLOTS} s WHERE {open_to_grader} "
        f"ORDER BY s.snapshot_started DESC, {within} LIMIT 1{lock})",
    ]


def _open_to_grader(in_evaluation: str) -> str:
    """The condition on a slot `s` the grader may take: in the evaluation(s), ungraded,
    free or its lock run out, on a snapshot where they hold no slot and that they did not
    skip."""
    # OFFSET 0 fences the subqueries (see pick_sql); SQLite needs no fence, and takes an
    # OFFSET only after a LIMIT.
    fence = " OFFSET 0" if connection.vendor == "postgresql" else ""
    return (
        f"{in_evaluation} AND s.grade IS NULL "
        "AND (s.grader_id IS NULL OR s.assigned_at < %(cutoff)s) "
        f"AND NOT EXISTS (SELECT 1 FROM {SLOTS} o WHERE o.snapshot_id = s.snapshot_id "
        f"AND o.grader_id = %(user)s{fence}) "
        f"AND NOT EXISTS (SELECT 1 FROM {SKIPS} k WHERE k.snapshot_id = s.snapshot_id "
        f"AND k.user_id = %(user)s{fence})"
    )


# The claim's statements, by purpose or vendor and number of evaluations: built once.
STATEMENTS: dict[tuple[str, int], str] = {}


# --- The grade writer's statements (judgements.py) ---------------------------------------


def snapshot_of_slot(*, lock: bool) -> str:
    """The grade writer's read: every slot of the given slot's snapshot with its
    evaluation's team, status and scale; with `lock`, locked in id order (on SQLite the
    transaction holds the database's write lock instead).

    The ORM's version (select_related, a subquery, select_for_update(of=...)) took
    1.7 to 2.0 ms of the web process's CPU per grade, mostly to build the statement:
    about what a whole grade request of four statements took. This one takes 0.16 ms
    (about 11x less; measured per call inside grade requests on PostgreSQL).
    """
    locking = lock and connection.features.has_select_for_update_of
    return (
        "SELECT s.id, s.keyword_id, s.snapshot_id, s.grader_id, s.grade, s.source, "
        "s.snapshot_started, e.team_id, e.status, e.scale, e.scale_levels "
        f"FROM {SLOTS} s JOIN {EVALUATIONS} e ON e.id = s.evaluation_id "
        f"WHERE s.snapshot_id = (SELECT o.snapshot_id FROM {SLOTS} o WHERE o.id = %s) "
        f"ORDER BY s.id{' FOR UPDATE OF s' if locking else ''}"
    )


def update_slot(columns: tuple[str, ...], *, held: bool) -> str:
    """The grade writer's write of one slot's columns (parameters: their values, the
    slot's id, and with `held` the grader who must still hold it). The ORM's update()
    builds the same statement anew on every grade: 220 to 270 us of CPU per call against
    86 to 106 us for this one (2.5x, PostgreSQL, 2,000 calls, three rounds)."""
    statement = _UPDATES.get((columns, held))
    if statement is None:
        assignments = ", ".join(f"{column} = %s" for column in columns)
        holder = " AND grader_id = %s" if held else ""
        statement = f"UPDATE {SLOTS} SET {assignments} WHERE id = %s{holder}"
        _UPDATES[(columns, held)] = statement
    return statement


_UPDATES: dict[tuple[tuple[str, ...], bool], str] = {}


def grade_held_started_slot() -> str:
    """A grader's grade of a result already started, written first and its scale checked
    after (parameters: grade, reason, graded_at, the slot's id, the grader's id, the
    open status, the team's id). It writes only a slot the grader still holds on a
    started snapshot of an open evaluation of the team, and answers the slot's keyword
    and its evaluation's scale, which the writer checks before the commit (a grade off
    the scale rolls the write back). Most grades take this path: one statement where
    reading first and writing after took two (the HTTP bench's figures are in
    bench/README.md). The scale comes from subqueries: SQLite's RETURNING may not name
    a joined table.
    """
    scale_of_slot = f"(SELECT e.%s FROM {EVALUATIONS} e WHERE e.id = evaluation_id)"
    return (
        f"UPDATE {SLOTS} SET grade = %s, reason = %s, graded_at = %s, "
        # the grader's own grade now, on this content, even of a slot an import or reuse
        # graded: a person's (an AI judge writes through slots_judge_held)
        "reused = FALSE, imported = FALSE, stale = FALSE, content_fingerprint = '', "
        "source = 'person', source_detail_id = NULL, reused_from_id = NULL "
        "WHERE id = %s AND grader_id = %s AND snapshot_started AND EXISTS ("
        f"SELECT 1 FROM {EVALUATIONS} e WHERE e.id = evaluation_id AND e.status = %s "
        "AND e.team_id = %s) "
        f"RETURNING keyword_id, {scale_of_slot % 'scale'}, {scale_of_slot % 'scale_levels'}"
    )


def set_snapshot_started() -> str:
    """Start a snapshot's slots, or make them fresh again (parameters: started, the
    snapshot's id): the queue offers a started result's other slots before fresh ones.
    The ORM's update() took 0.74 ms of the web process per call, mostly to build the
    statement, on the first grade of every result (a third of all grades at strategy 3).
    """
    return f"UPDATE {SLOTS} SET snapshot_started = %s WHERE snapshot_id = %s"
