"""Benchmark importing evaluation documents on PostgreSQL.

Run: .venv/bin/python bench/import_bench.py [--keywords N] [--api-keywords N]

It drops and recreates its own database (relevo_bench_import), migrates it, makes a team
with two members, and writes two documents (relevo.evaluation/1) to temporary files:
keywords x 20 snapshots, strategy 3, graded, three grades per snapshot (two from team
members, one from an external grader, with reasons), attributes on every snapshot.

1. The CLI: `manage.py import_evaluation FILE --team T` as a subprocess on 50,000
   keywords (1,000,000 snapshots, 3,000,000 slots): wall time and the child's peak
   resident memory (its VmHWM, sampled until it ends). Targets: <= 120 s, < 500 MB.
   The bench connects as the server's superuser, so the import skips the foreign key
   triggers for its rows (apps/interchange/pgcopy.py); then the same import again as a
   role that is not a superuser, where the checks run (--no-ordinary-role leaves it out).
2. The API path: import_document in this process on 5,000 keywords (100,000 snapshots),
   the function call timed. Target: <= 30 s.
3. The same import_document once more with the writer's other path (the ORM's
   bulk_create, as on SQLite) in place of COPY: the figure beside the writer's
   PostgreSQL branch (apps/interchange/writer.py).

Both include scoring every keyword (recompute_evaluation) before the commit. Afterwards
it checks the counts, progress and that every evaluation metric has a value.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit import ROOT, SERVER_URL, high_water_mark, progress_note, setup_django, verdict

# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database("relevo_bench_import")

SNAPSHOTS = 20
STRATEGY = 3
METRICS = [("ndcg", 10), ("precision", 10), ("ap", 10), ("err", 10), ("dcg", 10)]
MEMBERS = ["ann@bench.test", "bob@bench.test"]

CLI_TIME_TARGET_S = 120.0
CLI_MEMORY_TARGET_MB = 500.0
API_TIME_TARGET_S = 30.0


def write_document(path: Path, keywords: int, seed: int) -> None:
    """A document of `keywords` x SNAPSHOTS snapshots, written keyword by keyword."""
    rng = random.Random(seed)
    head = {
        "format": "relevo.evaluation/1",
        "name": f"bench {keywords} keywords",
        "scale": "graded",
        "strategy": STRATEGY,
        "profile": "searchtweak",
        "metrics": [{"metric": metric, "k": k} for metric, k in METRICS],
    }
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(head)[:-1] + ', "keywords": [\n')
        for number in range(keywords):
            snapshots = [
                {
                    "position": position,
                    "doc_id": f"sku-{number}-{position}",
                    "name": f"Result {position} for query {number}",
                    "image": f"https://img.example/{number}/{position}.jpg",
                    "attributes": {"brand": "Acme", "price": round(rng.uniform(5, 500), 2)},
                    "grades": [
                        {"grader": MEMBERS[0], "grade": rng.randint(0, 3), "reason": ""},
                        {"grader": MEMBERS[1], "grade": rng.randint(0, 3), "reason": "ok"},
                        {"grader": f"crowd-{rng.randint(1, 50)}", "grade": rng.randint(0, 3)},
                    ],
                }
                for position in range(1, SNAPSHOTS + 1)
            ]
            document = {"keyword": f"query number {number}", "snapshots": snapshots}
            out.write(("," if number else "") + json.dumps(document) + "\n")
        out.write("]}\n")


def make_team():
    from apps.accounts.services import member_add, team_create

    team = team_create(name="Import bench", owner_email="owner@bench.test")
    for email in MEMBERS:
        member_add(team=team, email=email, role="evaluator")
    return team


def run_cli(path: Path, team_id: int, database_url: str) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB of the child, and the evaluation id it printed."""
    env = dict(os.environ, DATABASE_URL=database_url)
    command = [sys.executable, str(ROOT / "manage.py"), "import_evaluation", str(path)]
    command += ["--team", str(team_id)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        peak = 0
        while child.poll() is None:
            peak = max(peak, high_water_mark(child.pid))
            time.sleep(0.1)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"import_evaluation failed:\n{err.read()}")
        printed = out.read()
    return seconds, peak / 2**20, int(printed.strip().splitlines()[-1])


ORDINARY_ROLE = "relevo_bench_importer"


def ordinary_role_url() -> str:
    """A role that is not a superuser, with the rights the app needs on the bench tables:
    it may not set session_replication_role, so the import runs the foreign key checks."""
    import psycopg

    with psycopg.connect(f"{SERVER_URL}/{benchkit.BENCH_DATABASE}", autocommit=True) as db:
        exists = db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [ORDINARY_ROLE]).fetchone()
        if not exists:
            db.execute(f"CREATE ROLE {ORDINARY_ROLE} LOGIN NOSUPERUSER")
        db.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {ORDINARY_ROLE}")
        db.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {ORDINARY_ROLE}")
    return f"postgres://{ORDINARY_ROLE}@127.0.0.1:5432/{benchkit.BENCH_DATABASE}"


def drop_ordinary_role() -> None:
    import psycopg

    with psycopg.connect(f"{SERVER_URL}/{benchkit.BENCH_DATABASE}", autocommit=True) as db:
        db.execute(f"DROP OWNED BY {ORDINARY_ROLE}")
        db.execute(f"DROP ROLE {ORDINARY_ROLE}")


def check(evaluation_id: int, keywords: int) -> str:
    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword

    evaluation = Evaluation.objects.get(id=evaluation_id)
    slots = keywords * SNAPSHOTS * STRATEGY
    problems = []
    if Keyword.objects.filter(evaluation=evaluation).count() != keywords:
        problems.append("keyword count")
    if (evaluation.total_slots, evaluation.graded_slots) != (slots, slots):
        problems.append(f"slots {evaluation.total_slots}/{evaluation.graded_slots}")
    if evaluation.progress != 1.0 or evaluation.status != "pending":
        problems.append(f"progress {evaluation.progress}, status {evaluation.status}")
    if evaluation.metrics.filter(value__isnull=True).exists():
        problems.append("a metric without value")
    members = FeedbackSlot.objects.filter(evaluation=evaluation, grader__isnull=False).count()
    if members != keywords * SNAPSHOTS * 2:
        problems.append(f"{members} slots with a member as grader")
    if Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists():
        problems.append("keywords left marked")
    return "OK" if not problems else "FAILED: " + ", ".join(problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keywords", type=int, default=50_000)
    parser.add_argument("--api-keywords", type=int, default=5_000)
    parser.add_argument(
        "--no-ordinary-role",
        action="store_true",
        help="skip the second CLI import as a role that is not a superuser",
    )
    arguments = parser.parse_args()

    setup_django()
    team = make_team()
    with tempfile.TemporaryDirectory(prefix="relevo-import-bench-") as folder:
        big = Path(folder) / "big.json"
        small = Path(folder) / "small.json"
        progress_note(f"writing {arguments.keywords} keywords to {big}")
        write_document(big, arguments.keywords, seed=1)
        write_document(small, arguments.api_keywords, seed=2)
        size_mb = big.stat().st_size / 1e6

        progress_note("importing through the management command")
        cli_s, peak_mb, cli_id = run_cli(big, team.id, os.environ["DATABASE_URL"])
        cli_check = check(cli_id, arguments.keywords)
        ordinary = None
        if not arguments.no_ordinary_role:
            progress_note("importing through the management command as an ordinary role")
            try:
                ordinary_s, ordinary_mb, ordinary_id = run_cli(big, team.id, ordinary_role_url())
                ordinary = (ordinary_s, ordinary_mb, check(ordinary_id, arguments.keywords))
            finally:
                drop_ordinary_role()

        progress_note("importing through import_document")
        from apps.interchange.document import import_document

        with small.open("rb") as source:
            start = time.perf_counter()
            evaluation = import_document(team=team, source=source)
            api_s = time.perf_counter() - start
        api_check = check(evaluation.id, arguments.api_keywords)

        progress_note("importing through import_document with bulk_create in place of COPY")
        with small.open("rb") as source, written_as_elsewhere():
            start = time.perf_counter()
            portable = import_document(team=team, source=source, name="Without COPY")
            portable_s = time.perf_counter() - start
        portable_check = check(portable.id, arguments.api_keywords)

    snapshots = arguments.keywords * SNAPSHOTS
    print(
        f"document: {arguments.keywords} keywords x {SNAPSHOTS} snapshots = {snapshots} "
        f"snapshots, {snapshots * STRATEGY} slots (strategy {STRATEGY}, all graded), "
        f"{size_mb:.0f} MB"
    )
    print(
        f"CLI import_evaluation: {cli_s:.1f} s   target <= {CLI_TIME_TARGET_S:.0f} s   "
        f"{verdict(cli_s <= CLI_TIME_TARGET_S)}"
    )
    print(
        f"CLI peak memory (RSS): {peak_mb:.0f} MB   target < {CLI_MEMORY_TARGET_MB:.0f} MB   "
        f"{verdict(peak_mb < CLI_MEMORY_TARGET_MB)}"
    )
    print(f"CLI result check: {cli_check}")
    if ordinary is not None:
        ordinary_s, ordinary_mb, ordinary_check = ordinary
        print(
            f"CLI as a role that is not a superuser (foreign key checks run): {ordinary_s:.1f} s"
            f"   target <= {CLI_TIME_TARGET_S:.0f} s   {verdict(ordinary_s <= CLI_TIME_TARGET_S)}"
            f"; peak {ordinary_mb:.0f} MB   {verdict(ordinary_mb < CLI_MEMORY_TARGET_MB)}"
            f"; check: {ordinary_check}"
        )
    api_snapshots = arguments.api_keywords * SNAPSHOTS
    print(
        f"import_document, {api_snapshots} snapshots: {api_s:.1f} s   "
        f"target <= {API_TIME_TARGET_S:.0f} s   {verdict(api_s <= API_TIME_TARGET_S)}"
    )
    print(f"import_document result check: {api_check}")
    print(
        f"import_document with bulk_create in place of COPY: {portable_s:.1f} s "
        f"({portable_s / api_s:.1f}x COPY's); check: {portable_check}"
    )


class _SeenAs:
    """The database connection, reporting another vendor: the writer then takes the
    path it takes on SQLite, on this same PostgreSQL database."""

    def __init__(self, connection, vendor: str) -> None:
        self._connection = connection
        self.vendor = vendor

    def __getattr__(self, name: str):
        return getattr(self._connection, name)


def written_as_elsewhere():
    from unittest import mock

    from django.db import connection

    from apps.interchange import writer

    return mock.patch.object(writer, "connection", _SeenAs(connection, "elsewhere"))


if __name__ == "__main__":
    main()
