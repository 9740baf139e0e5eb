"""Benchmark the judgement library's lookup on PostgreSQL holding 1,000,000 judgements.

Run: .venv/bin/python bench/library_bench.py [--judgements N] [--runs N] [--explain]
                                             [--profile]

It drops and recreates its own database (relevo_bench_library), migrates it and loads one
team's judgements with COPY: 50 finished graded evaluations over a pool of query texts,
each holding pool/10 of them x 20 results with one graded slot each (1,000 queries of
10,000 at full size, so a query is in 5 evaluations on average; its 20 documents are
drawn from 30 of its own, so the same query and document recur across evaluations).
Grades come from people (70 %), AI judges with a JudgementSource row (25 %) and an
import (5 %); leads decided 0.3 % of the results, and one imported judgement list holds
a tenth as many judgements again (100,000 at full size). Then ANALYZE.

It times, on the same pairs, `apps.library.grades.library_grades(team_id, pairs,
scale="graded")` (the library grade of each pair: what a try scores with; one statement
on PostgreSQL) and `apps.library.entries.lookup` (every judgement of each pair, what the
library page reads), for 200 query texts x 20 documents: the texts drawn at random from
those in some evaluation, each with one of its evaluations' 20 documents. One warm-up,
then `runs` rounds, each with its own random texts. Target: the library grades' median
at most 100 ms, and the same grades as lookup builds in Python. It also prints the SQL
of one lookup and each statement's time (with --explain, EXPLAIN ANALYZE of the
slowest, and of the library grades' statement as grades.py plans it); --profile adds a
cProfile of one lookup.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import benchkit
from benchkit import analyze, copy_rows, percentile, progress_note, setup_django, verdict

# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database("relevo_bench_library")

TARGET_MS = 100.0
EVALUATIONS = 50
RESULTS = 20
QUERIES_ASKED = 200
# Each evaluation holds 1/POOL_SHARE of the pool's query texts (so a text is in
# EVALUATIONS/POOL_SHARE of them on average) and ranks RESULTS of a text's CANDIDATES.
POOL_SHARE = 10
CANDIDATES = 30
DOCUMENTS = 500_000  # document ids are drawn from this many, shared by all queries
GRADERS = 20
JUDGES = 3
PERSON_SHARE, JUDGE_SHARE = 0.70, 0.25  # the rest: an import
DECISION_SHARE = 0.003
LISTED_SHARE = 0.1  # the imported list's size, a share of the evaluations' judgements
CHANGED_SHARE = 0.05  # results whose document content changed since earlier evaluations


@dataclass
class Library:
    """What the bench loaded and needs to pick its lookups: per query number, its
    evaluations' result lists."""

    team_id: int
    texts: list[str]
    lists: dict[int, list[list[str]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def query_text(number: int) -> str:
    return f"query {number:06d} blue shoes"


def doc_name(number: int) -> str:
    return f"D{number:07d}"


def load_library(judgements: int, rng: random.Random) -> Library:
    """One team's evaluations, decisions and imported list, loaded with COPY."""
    from apps.accounts.models import Membership
    from apps.accounts.services import member_add, team_create
    from apps.evaluations.models import Evaluation, Keyword
    from apps.evaluations.services import evaluation_create
    from apps.judging.sources import JudgeMade, import_source, judge_source

    keywords_each = max(1, judgements // (EVALUATIONS * RESULTS))
    pool = keywords_each * POOL_SHARE
    team = team_create(name="Bench team", owner_email="lead@bench.test")
    for number in range(GRADERS):
        member_add(team=team, email=f"grader{number}@bench.test", role="evaluator")
    people = list(
        Membership.objects.filter(team=team, role="evaluator").values_list("user_id", flat=True)
    )
    lead = Membership.objects.get(team=team, role="owner").user_id
    judges = [
        judge_source(
            team_id=team.id,
            made=JudgeMade(judge_id=number + 1, name=f"Judge {number + 1}", model_name="m-large"),
        )
        for number in range(JUDGES)
    ]
    vendor = import_source(team_id=team.id, label="Vendor assessors")
    library = Library(team_id=team.id, texts=[query_text(n) for n in range(pool)])
    candidates = [rng.sample(range(DOCUMENTS), CANDIDATES) for _ in range(pool)]

    progress_note(f"{EVALUATIONS} evaluations of {keywords_each} keywords x {RESULTS} results")
    start = datetime(2026, 1, 5, 9, tzinfo=UTC)
    evaluation_days: dict[int, datetime] = {}
    keyword_rows: list[Keyword] = []
    keyword_documents: list[list[str]] = []
    for number in range(EVALUATIONS):
        evaluation = evaluation_create(
            team=team, name=f"Ranking {number + 1}", metrics=[("ndcg", 10)], scale="graded"
        )
        day = start + timedelta(days=5 * number)
        evaluation_days[evaluation.id] = day
        Evaluation.objects.filter(id=evaluation.id).update(
            status="finished",
            started_at=day,
            finished_at=day + timedelta(days=2),
            total_slots=keywords_each * RESULTS,
            graded_slots=keywords_each * RESULTS,
            progress=1.0,
        )
        for position, query in enumerate(sorted(rng.sample(range(pool), keywords_each)), 1):
            documents = [doc_name(d) for d in rng.sample(candidates[query], RESULTS)]
            library.lists.setdefault(query, []).append(documents)
            keyword_documents.append(documents)
            keyword_rows.append(
                Keyword(
                    evaluation=evaluation,
                    text=library.texts[query],
                    position=position,
                    graded_slots=RESULTS,
                    executed_at=day,
                )
            )
    keywords = Keyword.objects.bulk_create(keyword_rows, batch_size=5000)
    load_results(keywords, keyword_documents, evaluation_days, rng, people, judges, vendor, lead)
    load_list(team, library, candidates, judgements, rng, lead)
    library.counts = table_counts()
    return library


def load_results(keywords, lists, evaluation_days, rng, people, judges, vendor, lead) -> None:
    """Snapshots, one graded slot each, and leads' decisions on some of them."""
    from apps.evaluations.models import FeedbackSlot, Snapshot, Source
    from apps.judging.models import SnapshotDecision

    progress_note(f"COPY {len(keywords) * RESULTS} snapshots")
    copy_rows(
        Snapshot,
        ["keyword", "position", "doc_id", "name"],
        (
            (
                keyword.id,
                position,
                doc_id,
                # A later evaluation sometimes shows a document's new title.
                f"Title of {doc_id}" + (" (new)" if rng.random() < CHANGED_SHARE else ""),
            )
            for keyword, documents in zip(keywords, lists, strict=True)
            for position, doc_id in enumerate(documents, start=1)
        ),
    )
    by_id = {keyword.id: keyword for keyword in keywords}
    snapshots = list(
        Snapshot.objects.order_by("id")
        .values_list("id", "keyword_id", "position")
        .iterator(chunk_size=50_000)
    )
    progress_note(f"COPY {len(snapshots)} graded slots")

    def slot(snapshot_id: int, keyword_id: int, position: int) -> tuple:
        keyword = by_id[keyword_id]
        graded_at = evaluation_days[keyword.evaluation_id] + timedelta(
            seconds=rng.randrange(2 * 86_400)
        )
        draw = rng.random()
        grader, external, imported, detail = None, "", False, None
        if draw < PERSON_SHARE:
            kind, grader = Source.PERSON, rng.choice(people)
        elif draw < PERSON_SHARE + JUDGE_SHARE:
            kind, detail = Source.JUDGE, rng.choice(judges)
        else:
            kind, external, imported, detail = Source.IMPORT, "assessor 7", True, vendor
        return (
            keyword.evaluation_id,
            keyword_id,
            snapshot_id,
            0,
            grader,
            external,
            rng.choice((0, 1, 1, 2, 2, 3)),
            graded_at,
            keyword.position,
            position,
            True,
            imported,
            kind,
            detail,
        )

    copy_rows(
        FeedbackSlot,
        [
            "evaluation",
            "keyword",
            "snapshot",
            "index",
            "grader",
            "external_grader",
            "grade",
            "graded_at",
            "keyword_position",
            "snapshot_position",
            "snapshot_started",
            "imported",
            "source",
            "source_detail",
        ],
        (slot(*row) for row in snapshots),
    )
    decided = rng.sample(snapshots, round(len(snapshots) * DECISION_SHARE))
    progress_note(f"COPY {len(decided)} leads' decisions")
    copy_rows(
        SnapshotDecision,
        ["snapshot", "evaluation", "grade", "decided_by", "decided_at"],
        (
            (
                snapshot_id,
                by_id[keyword_id].evaluation_id,
                rng.randrange(4),
                lead,
                evaluation_days[by_id[keyword_id].evaluation_id] + timedelta(days=3),
            )
            for snapshot_id, keyword_id, _position in decided
        ),
    )


def load_list(team, library: Library, candidates, judgements: int, rng, lead) -> None:
    """One imported judgement list: some of each query's candidate documents."""
    from apps.judging.sources import import_source
    from apps.library.models import JudgementList, ListedJudgement

    per_query = max(1, round(judgements * LISTED_SHARE / len(library.texts)))
    count = per_query * len(library.texts)
    progress_note(f"COPY an imported judgement list of {count} judgements")
    judgement_list = JudgementList.objects.create(
        team=team,
        name="Vendor qrels 2025",
        file_format="qrels",
        scale="graded",
        source_id=import_source(team_id=team.id, label="Vendor qrels 2025"),
        imported_by_id=lead,
        imported_at=datetime(2026, 6, 1, tzinfo=UTC),
        judgement_count=count,
    )
    copy_rows(
        ListedJudgement,
        ["judgement_list", "team", "query", "doc_id", "grade"],
        (
            (judgement_list.id, team.id, text, doc_name(doc), rng.randrange(4))
            for text, documents in zip(library.texts, candidates, strict=True)
            for doc in rng.sample(documents, per_query)
        ),
    )


def table_counts() -> dict[str, int]:
    from apps.evaluations.models import FeedbackSlot, Keyword, Snapshot
    from apps.judging.models import SnapshotDecision
    from apps.library.models import ListedJudgement

    return {
        "keywords": Keyword.objects.count(),
        "snapshots": Snapshot.objects.count(),
        "graded slots": FeedbackSlot.objects.filter(grade__isnull=False).count(),
        "leads' decisions": SnapshotDecision.objects.count(),
        "listed judgements": ListedJudgement.objects.count(),
    }


def pairs_of_a_try(library: Library, rng: random.Random) -> list[tuple[str, str]]:
    """200 query texts that some evaluation holds, each with one evaluation's results."""
    queries = rng.sample(sorted(library.lists), min(QUERIES_ASKED, len(library.lists)))
    return [
        (library.texts[query], doc_id)
        for query in queries
        for doc_id in rng.choice(library.lists[query])
    ]


@dataclass
class Lookup:
    ms: float
    entries: int
    judgements: int


def timed_lookup(library: Library, pairs: list[tuple[str, str]]) -> Lookup:
    from apps.library.entries import lookup

    started = time.perf_counter()
    found = lookup(team_id=library.team_id, pairs=pairs, scale="graded")
    ms = (time.perf_counter() - started) * 1000.0
    return Lookup(ms, len(found), sum(len(entry.judgements) for entry in found.values()))


def timed_grades(library: Library, pairs: list[tuple[str, str]]) -> Lookup:
    """The library grades alone (what a try scores with): one statement on PostgreSQL."""
    from apps.library.grades import library_grades

    started = time.perf_counter()
    found = library_grades(team_id=library.team_id, pairs=pairs, scale="graded")
    ms = (time.perf_counter() - started) * 1000.0
    return Lookup(ms, len(found), sum(grade.judgements for grade in found.values()))


def grades_agree(library: Library, pairs: list[tuple[str, str]]) -> bool:
    """Whether the one statement gives the grades entries.lookup builds in Python."""
    from apps.library.grades import grades_from_entries, library_grades

    fast = library_grades(team_id=library.team_id, pairs=pairs, scale="graded")
    built = grades_from_entries(team_id=library.team_id, pairs=pairs, scale="graded")
    return fast == built


def judgements_read(library: Library, pairs: list[tuple[str, str]]) -> int:
    """Every judgement of the asked texts, whatever the document: what lookup reads
    before it keeps the asked pairs."""
    from apps.library.entries import team_entries

    entries = team_entries(team_id=library.team_id, queries={query for query, _doc in pairs})
    return sum(len(entry.judgements) for entry in entries.values())


def queries_of_one_lookup(library: Library, pairs: list[tuple[str, str]]):
    """The SQL of one lookup with each query's time, and the lookup's whole time."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        whole = timed_lookup(library, pairs).ms
    return [(float(query["time"]) * 1000.0, query["sql"]) for query in captured], whole


def table_of(sql: str) -> str:
    found = re.search(r'FROM "([^"]+)"', sql)
    return found.group(1) if found else sql[:60]


def shortened(text: str) -> str:
    """SQL or a plan line with its list of 200 query texts cut to a count."""
    text = re.sub(
        r"IN \(('[^']*'(, )?)+\)", lambda m: f"IN (... {m.group(0).count(', ') + 1} texts)", text
    )
    return re.sub(
        r"'\{[^}]*\}'::text\[\]",
        lambda m: f"'{{... {m.group(0).count(',') + 1} texts}}'::text[]",
        text,
    )


def explain(sql: str) -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        return [shortened(row[0]) for row in cursor.fetchall()]


def grades_statement(library: Library, pairs: list[tuple[str, str]]) -> str:
    """The library grades' statement with these pairs' values written in."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.library.grades import library_grades

    with CaptureQueriesContext(connection) as captured:
        library_grades(team_id=library.team_id, pairs=pairs, scale="graded")
    return next(query["sql"] for query in captured if "json_array_elements" in query["sql"])


def explain_grades(sql: str) -> list[str]:
    """Its plan under the planner settings grades.py gives it."""
    from django.db import connection, transaction

    from apps.library.grades import PLANNER, SET_PLANNER

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(SET_PLANNER, list(PLANNER.values()))
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        return [shortened(row[0]) for row in cursor.fetchall()]


def profile(library: Library, pairs: list[tuple[str, str]], lines: int = 15) -> str:
    """Where one lookup's Python time goes, by function, its own time first."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(timed_lookup, library, pairs)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(lines)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--explain",
        action="store_true",
        help="print the plans of the library grades' statement and of the lookup's slowest query",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print where one lookup's Python time goes"
    )
    args = parser.parse_args()

    speed = benchkit.machine_speed()  # before anything else runs
    progress_note("creating the database")
    setup_django()
    rng = random.Random(12)
    started = time.perf_counter()
    library = load_library(args.judgements, rng)
    progress_note("ANALYZE")
    analyze()
    build_s = time.perf_counter() - started

    asking = random.Random(21)
    progress_note("warm-up lookup")
    timed_lookup(library, pairs_of_a_try(library, asking))
    timed_grades(library, pairs_of_a_try(library, asking))
    load_before = os.getloadavg()
    runs = []
    grade_runs = []
    tried = []
    for run in range(args.runs):
        pairs = pairs_of_a_try(library, asking)
        grade_runs.append(timed_grades(library, pairs))
        runs.append(timed_lookup(library, pairs))
        tried.append(pairs)
        progress_note(
            f"run {run + 1}: grades {grade_runs[-1].ms:.1f} ms, lookup {runs[-1].ms:.1f} ms"
        )
    load_after = os.getloadavg()
    agree = all(grades_agree(library, pairs) for pairs in tried[:3])
    read = [judgements_read(library, pairs) for pairs in tried[:3]]
    queries, whole_ms = queries_of_one_lookup(library, pairs_of_a_try(library, asking))

    times = [one.ms for one in runs]
    median = statistics.median(times)
    grade_times = [one.ms for one in grade_runs]
    grade_median = statistics.median(grade_times)
    ok = grade_median <= TARGET_MS and agree
    print(speed)
    print(
        "data: one team, "
        + ", ".join(f"{count:,} {name}" for name, count in library.counts.items())
        + f" ({EVALUATIONS} finished graded evaluations over {len(library.texts):,} query "
        f"texts); built (COPY, ANALYZE) in {build_s:.1f} s (not a target)"
    )
    print(
        f"library grades of {QUERIES_ASKED} query texts x {RESULTS} documents (grades.py, "
        f"what a try scores with), scale graded, {len(runs)} runs after one warm-up, each "
        "with its own texts:"
    )
    print(
        f"  median {grade_median:.1f} ms, p90 {percentile(grade_times, 0.9):.1f} ms, "
        f"max {max(grade_times):.1f} ms, min {min(grade_times):.1f} ms   target median <= "
        f"{TARGET_MS:.0f} ms   {verdict(ok)}"
    )
    print(f"  the same grades as entries.lookup builds in Python, on 3 runs' pairs: {agree}")
    print("every judgement of the same pairs (entries.lookup, what the library page reads):")
    print(
        f"  median {median:.1f} ms, p90 {percentile(times, 0.9):.1f} ms, "
        f"max {max(times):.1f} ms, min {min(times):.1f} ms (no target)"
    )
    print(
        f"  entries found: median {statistics.median(one.entries for one in runs):,.0f} "
        f"of {QUERIES_ASKED * RESULTS:,} pairs asked, holding "
        f"{statistics.median(one.judgements for one in runs):,.0f} judgements; judgements "
        f"of the asked texts read in all (every document and scale): "
        f"{statistics.median(read):,.0f}"
    )
    loads = " / ".join(f"{value:.2f}" for value in load_before + load_after)
    print(f"  load average (1, 5, 15 min) before / after the runs: {loads}")
    print(f"SQL of one lookup ({len(queries)} queries; that lookup {whole_ms:.1f} ms in all):")
    for ms, sql in queries:
        print(f"  {ms:7.1f} ms  {table_of(sql)}")
    sql_ms = sum(ms for ms, _sql in queries)
    print(
        f"  {sql_ms:7.1f} ms  in all in the database and on the wire; "
        f"{whole_ms - sql_ms:.1f} ms in Python (rows to judgements and entries)"
    )
    if args.explain:
        print("EXPLAIN ANALYZE of the library grades' statement (one try's pairs):")
        for line in explain_grades(grades_statement(library, pairs_of_a_try(library, asking))):
            print(f"  {line}")
    if queries and args.explain:
        slowest_ms, slowest = max(queries, key=lambda query: query[0])
        print(f"EXPLAIN ANALYZE of the slowest query ({table_of(slowest)}, {slowest_ms:.1f} ms):")
        print(f"  {shortened(slowest)}")
        for line in explain(slowest):
            print(f"  {line}")
    if args.profile:
        print("cProfile of one lookup (its times include the profiler's own cost):")
        print(profile(library, pairs_of_a_try(library, asking)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
