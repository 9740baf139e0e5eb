"""AI judges' hand-written SQL, with the figure that keeps it over the ORM (the rule of
apps/judging/sql.py: only where the ORM takes at least 1.5 times as long).

- A step's claim (claim_candidates): the open slots a judge may take, with what the
  prompt shows of each. Measured on 10,000 slots as the judge's graded slots grow from
  0 to 9,000, 40 slots a claim: the ORM's queryset (three excluding subqueries, two
  related models, a model instance a row) 10.2 to 13.0 ms of Python and 1.3 to 6.0 ms
  of PostgreSQL; this statement 1.5 to 1.7 ms and 2.0 to 2.7 ms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot, Source

from .models import ChainStep, Judge, JudgeChain, JudgeFailure, StepStatus

SLOTS = FeedbackSlot._meta.db_table


@dataclass
class Claimed:
    """A slot a step claimed, with what the prompt shows of its result."""

    id: int
    snapshot_id: int
    keyword_id: int
    snapshot_position: int
    index: int
    name: str
    fields: dict[str, Any]
    keyword: str
    image: str = ""


# The evaluation's ungraded slots nobody holds (or whose hold ran out), in the queue's
# order (the index slot_queue_order), leaving out a result the judge already has a slot
# of, one that failed for this run and was not retried, one a chain sent to people, and
# one whose other slots AI judges (any judge: graded by one, or held by one's grader while
# the hold lasts) already fill the run's share of (slots_per_result): a count over the
# result's few slots (slot_unique_index), the judges' users a small set.
# The first is NOT EXISTS ... LIMIT 1 OFFSET 0, a probe of slot_one_per_grader_per_snapshot
# a row: without the OFFSET the planner makes it an anti-join, and with the judge's
# graded slots underestimated (statistics lag a run) it read them all for every row,
# 68 ms a claim at 9,000 (SQLite wants the LIMIT before an OFFSET). The other two are
# NOT IN, small sets hashed once (as anti-joins they doubled the planning time). Only
# the slots' rows are locked (FOR UPDATE OF s), and rows another step holds are
# skipped. "index" is quoted: a keyword to SQLite.
CANDIDATES_SQL = (
    'SELECT s.id, s.snapshot_id, s.keyword_id, s.snapshot_position, s."index", '
    "p.name, p.attributes, k.text, p.image "
    f"FROM {SLOTS} s "
    f"JOIN {Snapshot._meta.db_table} p ON p.id = s.snapshot_id "
    f"JOIN {Keyword._meta.db_table} k ON k.id = s.keyword_id "
    "WHERE s.evaluation_id = %(evaluation)s AND s.grade IS NULL "
    "AND (s.grader_id IS NULL OR s.assigned_at < %(cutoff)s) "
    f"AND NOT EXISTS (SELECT 1 FROM {SLOTS} m "
    "WHERE m.snapshot_id = s.snapshot_id AND m.grader_id = %(judge)s LIMIT 1 OFFSET 0) "
    f"AND s.snapshot_id NOT IN (SELECT fs.snapshot_id FROM {JudgeFailure._meta.db_table} f "
    f"JOIN {SLOTS} fs ON fs.id = f.slot_id WHERE f.run_id = %(run)s AND f.open) "
    f"AND s.snapshot_id NOT IN (SELECT ps.snapshot_id FROM {ChainStep._meta.db_table} cs "
    f"JOIN {JudgeChain._meta.db_table} c ON c.id = cs.chain_id "
    f"JOIN {SLOTS} ps ON ps.id = cs.slot_id "
    "WHERE c.evaluation_id = %(evaluation)s AND cs.status = %(for_people)s) "
)
# Only when the share can leave a slot out: not on one slot a result, nor for AI only.
SHARE_SQL = (
    f"AND (SELECT COUNT(*) FROM {SLOTS} a WHERE a.snapshot_id = s.snapshot_id "
    "AND a.id <> s.id AND (a.source = %(by_judge)s OR (a.grade IS NULL "
    "AND a.assigned_at >= %(cutoff)s "
    f"AND a.grader_id IN (SELECT j.user_id FROM {Judge._meta.db_table} j)))) < %(share)s "
)
ORDER_SQL = (
    'ORDER BY s.snapshot_started DESC, s.keyword_position, s.snapshot_position, s."index" '
    "LIMIT %(wanted)s"
)


def claim_candidates(
    *,
    evaluation_id: int,
    run_id: int,
    judge_user_id: int,
    cutoff: datetime,
    wanted: int,
    share: int | None = None,
) -> list[Claimed]:
    """Up to `wanted` slots the judge may take, locked for the caller's transaction; with
    a `share`, of results on which AI judges fill fewer than `share` other slots."""
    sql = CANDIDATES_SQL + (SHARE_SQL if share is not None else "") + ORDER_SQL
    if connection.features.has_select_for_update_skip_locked:
        sql += " FOR UPDATE OF s SKIP LOCKED"
    params = {
        "evaluation": evaluation_id,
        "run": run_id,
        "judge": judge_user_id,
        "cutoff": connection.ops.adapt_datetimefield_value(cutoff),
        "for_people": StepStatus.AWAITING_PEOPLE.value,
        "wanted": wanted,
        "by_judge": Source.JUDGE.value,
        "share": share,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        Claimed(slot_id, snapshot_id, keyword_id, position, index, name, _fields(raw), text, image)
        for slot_id, snapshot_id, keyword_id, position, index, name, raw, text, image in rows
    ]


# The first key of the advisory lock that keeps two judges' claims on one evaluation
# from reading the same share at once ("JC").
CLAIMS_LOCK = 0x4A43


def claims_one_at_a_time(evaluation_id: int) -> None:
    """Hold, until the caller's transaction ends, the evaluation's lock for judges'
    claims (PostgreSQL; SQLite writes one transaction at a time anyway). Two judges'
    steps that counted a result's AI slots at the same moment could otherwise each take
    one and pass the share; the row locks do not see it, as they take different slots."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [CLAIMS_LOCK, evaluation_id])


def _fields(raw: Any) -> dict[str, Any]:
    """A result's fields as stored (JSON: text from some drivers), a dict or nothing."""
    value = json.loads(raw) if isinstance(raw, str | bytes) else raw
    return dict(value) if isinstance(value, dict) else {}
