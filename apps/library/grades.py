"""The library grade of many (query text, document) pairs at once: what a try scores a
ranking with. The rule is entries.py's (a lead's decision, else people's, else AI
judges'; fresh before stale; the most common grade, a tie to the newest); only the
grade, its tier, whether it rests on stale judgements alone, and how many judgements
and distinct grades the pair has come back, not the judgements themselves.

On PostgreSQL one statement does it all, reading only what the asked texts hold: their
keywords in the team's evaluations (by text), those keywords' results and graded slots
(by keyword: in the bench, 200 texts are 1,000 keywords and 20,000 results of its
1,000,000), the team's decisions on the scale and the lists' judgements of the texts.
Hash joins pair them with the asked pairs (one JSON array), and each result's content is
compared with the newest content of its text and document (staleness).
bench/library_bench.py: 200 queries x 20 documents among 1 M judgements, this statement
against entries.lookup, which builds every judgement in Python (see bench/README.md).
Elsewhere (SQLite) the grades come from entries.lookup; apps/library/tests/test_grades.py
holds the two to the same answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection, transaction

from apps.evaluations.models import Evaluation, FeedbackSlot, JudgementSource, Keyword, Snapshot
from apps.judging.models import SnapshotDecision

from .entries import CLICKS, DECISION, JUDGES, PEOPLE, lookup, scale_key
from .models import JudgementList, ListedJudgement

TIERS = (DECISION, PEOPLE, JUDGES, CLICKS)  # their numbers in the statement: 0 to 3


@dataclass(frozen=True)
class LibraryGrade:
    grade: int
    basis: str  # DECISION, PEOPLE, JUDGES or CLICKS
    stale: bool  # the grade rests on stale judgements alone
    judgements: int  # decisions aside
    distinct_grades: int  # decisions aside; more than one: the judgements disagree


def library_grades(
    *, team_id: int, pairs: Iterable[tuple[str, str]], scale: str
) -> dict[tuple[str, str], LibraryGrade]:
    """(query, doc id) -> its library grade on `scale`, for the pairs that have one."""
    asked = list(dict.fromkeys(pairs))
    if not asked:
        return {}
    if connection.vendor == "postgresql":
        return _grades_in_one_statement(team_id, asked, scale)
    return grades_from_entries(team_id=team_id, pairs=asked, scale=scale)


def grades_from_entries(
    *, team_id: int, pairs: Iterable[tuple[str, str]], scale: str
) -> dict[tuple[str, str], LibraryGrade]:
    """The same answer, from every judgement built in Python (entries.lookup)."""
    return {
        pair: LibraryGrade(
            grade=entry.grade,
            basis=entry.basis_tier,
            stale=entry.stale,
            judgements=sum(1 for j in entry.judgements if j.tier != DECISION),
            distinct_grades=len({j.grade for j in entry.judgements if j.tier != DECISION}),
        )
        for pair, entry in lookup(team_id=team_id, pairs=pairs, scale=scale).items()
        if entry.grade is not None
    }


@dataclass(frozen=True)
class _Holders:
    """The ids of the team's evaluations (every one: the newest content of a result may
    be in any) and of those and the team's lists on the asked scale."""

    team_evaluations: list[int]
    evaluations: list[int]
    lists: list[int]


def _holders(team_id: int, scale: str) -> _Holders:
    evaluations = list(
        Evaluation.objects.filter(team_id=team_id).values_list("id", "scale", "scale_levels")
    )
    lists = JudgementList.objects.filter(team_id=team_id).values_list("id", "scale", "scale_levels")
    return _Holders(
        team_evaluations=[id_ for id_, _name, _levels in evaluations],
        evaluations=[id_ for id_, name, levels in evaluations if scale_key(name, levels) == scale],
        lists=[id_ for id_, name, levels in lists if scale_key(name, levels) == scale],
    )


GRADES_SQL = f"""
WITH asked AS MATERIALIZED (
    SELECT pair_json->>0 AS query, pair_json->>1 AS doc_id, pair
    FROM json_array_elements(%(asked)s::json) WITH ORDINALITY AS asked(pair_json, pair)
),
team_keywords AS MATERIALIZED (
    -- The asked texts' keywords in the team's evaluations.
    SELECT id, text, evaluation_id, evaluation_id = ANY(%(evaluations)s) AS on_scale
    FROM {Keyword._meta.db_table}
    WHERE text = ANY(%(texts)s::varchar[]) AND evaluation_id = ANY(%(team_evaluations)s)
),
asked_results AS MATERIALIZED (
    -- The asked pairs' results: the results of their texts' keywords (an index scan per
    -- keyword id: ANY of the ids, no nested loop) kept for the asked documents. A
    -- judgement given on other content than the pair's newest result (the team's latest
    -- search) is stale.
    SELECT a.pair, k.evaluation_id, s.id AS snapshot_id,
           (s.name, s.image, s.attributes) IS DISTINCT FROM (
               first_value(s.name) OVER newest_first,
               first_value(s.image) OVER newest_first,
               first_value(s.attributes) OVER newest_first
           ) AS changed_since
    FROM {Snapshot._meta.db_table} s
    JOIN team_keywords k ON k.id = s.keyword_id
    JOIN asked a ON a.query = k.text AND a.doc_id = s.doc_id
    WHERE s.keyword_id = ANY(ARRAY(SELECT id FROM team_keywords))
    WINDOW newest_first AS (PARTITION BY a.pair ORDER BY k.evaluation_id DESC)
),
team_slots AS (
    SELECT f.snapshot_id, f.grade,
           CASE f.source WHEN 'judge' THEN 2 WHEN 'clicks' THEN 3 ELSE 1 END AS tier,
           f.graded_at
    FROM {FeedbackSlot._meta.db_table} f
    WHERE f.keyword_id = ANY(ARRAY(SELECT id FROM team_keywords WHERE on_scale))
      AND f.grade IS NOT NULL
      -- A copy by reuse is its original again, unless neither the evaluation nor the
      -- list it was copied from is kept.
      AND (NOT f.reused OR (f.reused_from_id IS NULL AND f.reused_from_list_id IS NULL))
),
team_decisions AS (
    SELECT snapshot_id, grade, decided_at FROM {SnapshotDecision._meta.db_table}
    WHERE evaluation_id = ANY(%(evaluations)s)
),
marked AS (
    SELECT r.pair, f.grade, f.tier, f.graded_at AS at, r.changed_since AS stale
    FROM asked_results r JOIN team_slots f ON f.snapshot_id = r.snapshot_id
  UNION ALL
    SELECT r.pair, d.grade, 0, d.decided_at, r.changed_since
    FROM asked_results r JOIN team_decisions d ON d.snapshot_id = r.snapshot_id
  UNION ALL
    -- A listed judgement records no content: never stale.
    SELECT a.pair, l.grade, CASE src.kind WHEN 'judge' THEN 2 WHEN 'clicks' THEN 3 ELSE 1 END,
           j.imported_at, false
    FROM {ListedJudgement._meta.db_table} l
    JOIN asked a ON a.query = l.query AND a.doc_id = l.doc_id
    JOIN {JudgementList._meta.db_table} j ON j.id = l.judgement_list_id
    JOIN {JudgementSource._meta.db_table} src ON src.id = j.source_id
    WHERE l.team_id = %(team)s AND l.query = ANY(%(texts)s::varchar[])
      AND l.judgement_list_id = ANY(%(lists)s)
),
votes AS (
    -- One row per grade a pair's tier gave, fresh or stale. A grade people or AI judges
    -- gave counts once among the pair's distinct grades.
    SELECT pair, grade, tier, stale, COUNT(*) AS votes, MAX(at) AS newest,
           row_number() OVER same_grade = 1 AND MAX(tier) OVER same_grade > 0
               AS counts_a_grade
    FROM marked GROUP BY pair, grade, tier, stale
    WINDOW same_grade AS (PARTITION BY pair, grade)
)
-- Per pair the winner first: the most trusted tier, fresh before stale, the most votes
-- (a lead's decision: the newest), a tie to the newest.
SELECT DISTINCT ON (pair) pair, grade, tier, stale,
       COALESCE(SUM(votes) FILTER (WHERE tier > 0) OVER winner_first, 0)::bigint AS judged,
       COUNT(*) FILTER (WHERE counts_a_grade) OVER winner_first AS grades
FROM votes
WINDOW winner_first AS (
    PARTITION BY pair
    ORDER BY tier, stale, CASE WHEN tier = 0 THEN 0 ELSE -votes END, newest DESC NULLS LAST
    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
)
ORDER BY pair, tier, stale, CASE WHEN tier = 0 THEN 0 ELSE -votes END, newest DESC NULLS LAST
"""


# How the statement is planned, for this transaction only: its joins in the order they
# are written, all of them hash joins, every table read once. PostgreSQL cannot count the
# rows of a join with the asked pairs (it guesses 1 where there are 15,000): left to
# itself it probed the slots one result at a time, or matched results to pairs by the
# document alone. A plan for these very values, too: the generic one read every keyword
# of the team's evaluations.
PLANNER = {
    "join_collapse_limit": "1",
    "enable_nestloop": "off",
    "enable_mergejoin": "off",
    "plan_cache_mode": "force_custom_plan",
}

READ_PLANNER = "SELECT " + ", ".join(f"current_setting('{name}')" for name in PLANNER)
SET_PLANNER = "SELECT " + ", ".join(f"set_config('{name}', %s, true)" for name in PLANNER)


def _grades_in_one_statement(
    team_id: int, asked: list[tuple[str, str]], scale: str
) -> dict[tuple[str, str], LibraryGrade]:
    holders = _holders(team_id, scale)
    if not holders.evaluations and not holders.lists:
        return {}
    # Inside a caller's transaction the settings would outlive this block: put the
    # caller's back.
    callers = None
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.savepoint_ids:
            cursor.execute(READ_PLANNER)
            callers = cursor.fetchone()
        cursor.execute(SET_PLANNER, list(PLANNER.values()))
        cursor.execute(
            GRADES_SQL,
            {
                "asked": json.dumps(asked, ensure_ascii=False),
                "texts": list({query for query, _doc in asked}),
                "team_evaluations": holders.team_evaluations,
                "team": team_id,
                "evaluations": holders.evaluations,
                "lists": holders.lists,
            },
        )
        rows = cursor.fetchall()
        if callers is not None:
            cursor.execute(SET_PLANNER, list(callers))
    # Pairs with the same grade share one (frozen) LibraryGrade: a few hundred to build.
    shared: dict[tuple, LibraryGrade] = {}
    found: dict[tuple[str, str], LibraryGrade] = {}
    for pair, *grade in rows:
        key = tuple(grade)
        if key not in shared:
            value, tier, stale, judged, grades = key
            shared[key] = LibraryGrade(value, TIERS[tier], stale, judged, grades)
        found[asked[pair - 1]] = shared[key]
    return found
