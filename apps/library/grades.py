"""The library grade of many (query text, document) pairs at once: what a try scores a
ranking with. The rule is entries.py's (a lead's decision, else people's, else AI
judges'; fresh before stale; the most common grade, a tie to the newest); only the
grade, its tier, whether it rests on stale judgements alone, and how many judgements
and distinct grades the pair has come back, not the judgements themselves.

On PostgreSQL one statement does it all: it joins the asked pairs (unnest) to the slots,
decisions and listed judgements, and compares each judged result's content with the
document's newest (staleness) in the database. bench/library_bench.py: 200 queries x 20
documents among 1 M judgements, this statement against entries.lookup, which builds
every judgement in Python (see bench/README.md). Elsewhere (SQLite) the grades come from
entries.lookup; apps/library/tests/test_grades.py holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection, transaction

from apps.evaluations.models import Evaluation, FeedbackSlot, JudgementSource, Keyword, Snapshot
from apps.judging.models import SnapshotDecision

from .entries import DECISION, JUDGES, PEOPLE, lookup, scale_key
from .models import JudgementList, ListedJudgement

TIERS = (DECISION, PEOPLE, JUDGES)  # their numbers in the statement: 0, 1, 2


@dataclass(frozen=True)
class LibraryGrade:
    grade: int
    basis: str  # DECISION, PEOPLE or JUDGES
    stale: bool  # the grade rests on stale judgements alone
    judgements: int  # decisions aside
    distinct_grades: int  # decisions aside; more than one: the judgements disagree


def library_grades(
    *, team_id: int, pairs: Iterable[tuple[str, str]], scale: str
) -> dict[tuple[str, str], LibraryGrade]:
    """(query, doc id) -> its library grade on `scale`, for the pairs that have one."""
    asked = sorted(set(pairs))
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


def _on_scale(team_id: int, scale: str) -> tuple[list[int], list[int]]:
    """The ids of the team's evaluations and lists on `scale`."""
    evaluations = [
        id_
        for id_, name, levels in Evaluation.objects.filter(team_id=team_id).values_list(
            "id", "scale", "scale_levels"
        )
        if scale_key(name, levels) == scale
    ]
    lists = [
        id_
        for id_, name, levels in JudgementList.objects.filter(team_id=team_id).values_list(
            "id", "scale", "scale_levels"
        )
        if scale_key(name, levels) == scale
    ]
    return evaluations, lists


GRADES_SQL = f"""
WITH asked(query, doc_id) AS (
    SELECT * FROM unnest(%(queries)s::varchar[], %(docs)s::varchar[])
),
asked_results AS (
    -- Each result of an asked pair, beside the content of the pair's newest result (the
    -- team's latest search): a judgement given on other content is stale.
    SELECT a.query, a.doc_id, k.evaluation_id, s.id AS snapshot_id,
           (s.name, s.image, s.attributes) IS DISTINCT FROM (
               first_value(s.name) OVER newest_first,
               first_value(s.image) OVER newest_first,
               first_value(s.attributes) OVER newest_first
           ) AS changed_since
    FROM asked a
    JOIN {Keyword._meta.db_table} k ON k.text = a.query
    JOIN {Evaluation._meta.db_table} e ON e.id = k.evaluation_id AND e.team_id = %(team)s
    JOIN {Snapshot._meta.db_table} s ON s.keyword_id = k.id AND s.doc_id = a.doc_id
    WINDOW newest_first AS (PARTITION BY a.query, a.doc_id ORDER BY k.evaluation_id DESC)
),
marked AS (
    SELECT r.query, r.doc_id, f.grade, CASE WHEN f.source = 'judge' THEN 2 ELSE 1 END AS tier,
           f.graded_at AS at, r.changed_since AS stale
    FROM asked_results r
    JOIN {FeedbackSlot._meta.db_table} f ON f.snapshot_id = r.snapshot_id
    WHERE r.evaluation_id = ANY(%(evaluations)s) AND f.grade IS NOT NULL
      AND (NOT f.reused OR f.reused_from_id IS NULL)
  UNION ALL
    SELECT r.query, r.doc_id, d.grade, 0, d.decided_at, r.changed_since
    FROM asked_results r
    JOIN {SnapshotDecision._meta.db_table} d ON d.snapshot_id = r.snapshot_id
    WHERE r.evaluation_id = ANY(%(evaluations)s)
  UNION ALL
    -- A listed judgement records no content: never stale.
    SELECT a.query, a.doc_id, l.grade, CASE WHEN src.kind = 'judge' THEN 2 ELSE 1 END,
           j.imported_at, false
    FROM asked a
    JOIN {ListedJudgement._meta.db_table} l
      ON l.team_id = %(team)s AND l.query = a.query AND l.doc_id = a.doc_id
     AND l.judgement_list_id = ANY(%(lists)s)
    JOIN {JudgementList._meta.db_table} j ON j.id = l.judgement_list_id
    JOIN {JudgementSource._meta.db_table} src ON src.id = j.source_id
),
per_pair AS (
    SELECT query, doc_id, MIN(tier) AS best,
           COUNT(*) FILTER (WHERE tier > 0) AS judged,
           COUNT(DISTINCT grade) FILTER (WHERE tier > 0) AS grades
    FROM marked GROUP BY query, doc_id
),
best_tier AS (
    SELECT m.query, m.doc_id, m.grade, m.at, m.stale, m.tier,
           bool_or(NOT m.stale) OVER (PARTITION BY m.query, m.doc_id) AS has_fresh
    FROM marked m JOIN per_pair p ON p.query = m.query AND p.doc_id = m.doc_id
    WHERE m.tier = p.best
),
votes AS (
    SELECT query, doc_id, grade, tier, COUNT(*) AS votes, MAX(at) AS newest,
           bool_and(stale) AS stale
    FROM best_tier WHERE NOT stale OR NOT has_fresh
    GROUP BY query, doc_id, grade, tier
)
SELECT DISTINCT ON (v.query, v.doc_id) v.query, v.doc_id, v.grade, v.tier, v.stale,
       p.judged, p.grades
FROM votes v JOIN per_pair p ON p.query = v.query AND p.doc_id = v.doc_id
ORDER BY v.query, v.doc_id, CASE WHEN v.tier = 0 THEN 0 ELSE -v.votes END,
         v.newest DESC NULLS LAST
"""


def _grades_in_one_statement(
    team_id: int, asked: list[tuple[str, str]], scale: str
) -> dict[tuple[str, str], LibraryGrade]:
    evaluations, lists = _on_scale(team_id, scale)
    if not evaluations and not lists:
        return {}
    # A plan for these very arrays: once psycopg prepares the statement (its fifth run in
    # a connection), PostgreSQL's generic plan for it took 5 s where this takes 1.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        cursor.execute(
            GRADES_SQL,
            {
                "queries": [query for query, _doc in asked],
                "docs": [doc for _query, doc in asked],
                "team": team_id,
                "evaluations": evaluations,
                "lists": lists,
            },
        )
        rows = cursor.fetchall()
    return {
        (query, doc_id): LibraryGrade(
            grade=grade,
            basis=TIERS[tier],
            stale=stale,
            judgements=judged,
            distinct_grades=grades,
        )
        for query, doc_id, grade, tier, stale, judged, grades in rows
    }
