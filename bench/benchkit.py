"""Shared parts of the benchmarks: a fresh PostgreSQL database, bulk loading, reporting.

Import this module first and call `use_database(name)` before anything touches Django:
settings read the environment once, at django.setup().
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER_URL = "postgres://postgres@127.0.0.1:5432"
BENCH_DATABASE = "relevo_bench"

T = TypeVar("T")


def use_database(name: str) -> None:
    """Point Django at a fresh database of this name; call before django.setup()."""
    global BENCH_DATABASE
    BENCH_DATABASE = name
    os.environ["DATABASE_URL"] = f"{SERVER_URL}/{name}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    # With DEBUG on, Django logs every query in memory; production runs without it.
    os.environ["DEBUG"] = "0"
    # The benchmarks talk plain http (the test client, or gunicorn on loopback) and run no
    # collectstatic: no redirect to https, cookies sent over http, plain static names.
    for name in ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
        os.environ.setdefault(name, "0")
    os.environ.setdefault("STATIC_MANIFEST", "0")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ.setdefault("LOG_LEVEL", "WARNING")


@dataclass(frozen=True)
class Shape:
    keywords: int
    snapshots: int
    strategy: int
    graded_share: float

    @property
    def slots(self) -> int:
        return self.keywords * self.snapshots * self.strategy


def recreate_database() -> None:
    """A fresh database per run, so earlier runs never change the figures."""
    import psycopg

    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
        server.execute(f"CREATE DATABASE {BENCH_DATABASE}")


def setup_django() -> None:
    """Create the database afresh, set Django up on it and migrate."""
    import django

    recreate_database()
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def copy_rows(model, fields: list[str], rows: Iterator[tuple]) -> None:
    """COPY rows into a model's table: many times faster than INSERTs for 100,000s of rows.

    `rows` give the values of `fields`; every other column gets its field's default, as
    bulk_create would give it (Django's defaults are not database defaults).
    """
    from django.db import connection

    others = [
        field
        for field in model._meta.concrete_fields
        if field.name not in fields and not field.primary_key
    ]
    defaults = tuple(field.get_db_prep_save(field.get_default(), connection) for field in others)
    columns = [model._meta.get_field(name).column for name in fields]
    columns += [field.column for field in others]
    names = ", ".join(f'"{column}"' for column in columns)
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f'COPY "{model._meta.db_table}" ({names}) FROM STDIN') as copy,
    ):
        for row in rows:
            copy.write_row(row + defaults)


# --- building an evaluation -------------------------------------------------------------


def build_evaluation(
    team,
    name: str,
    shape: Shape,
    grades: Sequence[Sequence[Sequence[int | None]]],
    metrics: list[tuple[str, int]],
):
    """An active evaluation with rows shaped as the services make them, loaded in bulk.

    `grades` holds, per keyword, per snapshot, per slot, a grade or None.

    evaluation_create/evaluation_start make the evaluation and its EvaluationMetric rows;
    keywords, snapshots and slots (with their evaluation/keyword copies) are bulk loaded
    instead of going through snapshots_add one keyword at a time. Each keyword is left
    as grading would leave it: marked, with one grade_version step per grade given and
    nothing scored yet, so the full recompute is the first thing that scores it.
    """
    from django.db import transaction

    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Snapshot
    from apps.evaluations.services import evaluation_create
    from apps.lifecycle.steps import evaluation_start

    evaluation = evaluation_create(
        team=team, name=name, metrics=metrics, scale="graded", strategy=shape.strategy
    )
    evaluation = evaluation_start(evaluation=evaluation)
    now = datetime.now(UTC)
    with transaction.atomic():
        keywords = Keyword.objects.bulk_create(
            (
                Keyword(
                    evaluation=evaluation,
                    text=f"{name} keyword {number}",
                    position=number + 1,
                    needs_scoring=True,
                    grade_version=sum(g is not None for s in grades[number] for g in s),
                )
                for number in range(shape.keywords)
            ),
            batch_size=5000,
        )
        copy_rows(
            Snapshot,
            ["keyword", "position", "doc_id"],
            (
                (keyword.id, position, f"doc-{keyword.id}-{position}")
                for keyword in keywords
                for position in range(1, shape.snapshots + 1)
            ),
        )
        snapshot_ids = snapshot_ids_by_keyword(evaluation.id)
        fields, pick = slot_fields()
        copy_rows(
            FeedbackSlot,
            fields,
            (
                pick(
                    (
                        evaluation.id,
                        keyword.id,
                        snapshot_id,
                        index,
                        "" if grade is None else "bench",
                        grade,
                        None if grade is None else now,
                        keyword.position,
                        position,
                        any(g is not None for g in slot_grades),
                    )
                )
                for keyword, keyword_grades in zip(keywords, grades, strict=True)
                for position, (snapshot_id, slot_grades) in enumerate(
                    zip(snapshot_ids[keyword.id], keyword_grades, strict=True), start=1
                )
                for index, grade in enumerate(slot_grades)
            ),
        )
        # snapshots_add keeps total_slots; graded_slots is the pipeline's to move.
        Evaluation.objects.filter(id=evaluation.id).update(total_slots=shape.slots)
    evaluation.refresh_from_db()
    return evaluation


# Slot columns the bench fills, in this order. The last three are the queue's copies
# (keyword and snapshot position, "some slot of this snapshot is graded"); they are set
# as snapshots_add and grading set them, when the model has them.
SLOT_FIELDS = [
    "evaluation",
    "keyword",
    "snapshot",
    "index",
    "external_grader",
    "grade",
    "graded_at",
    "keyword_position",
    "snapshot_position",
    "snapshot_started",
]


def slot_fields() -> tuple[list[str], Callable[[tuple], tuple]]:
    """The SLOT_FIELDS the model has, and a function picking their values from a row."""
    from django.core.exceptions import FieldDoesNotExist

    from apps.evaluations.models import FeedbackSlot

    present = []
    for position, name in enumerate(SLOT_FIELDS):
        try:
            FeedbackSlot._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        present.append(position)
    if len(present) == len(SLOT_FIELDS):
        return SLOT_FIELDS, lambda row: row
    return [SLOT_FIELDS[i] for i in present], lambda row: tuple(row[i] for i in present)


def snapshot_ids_by_keyword(evaluation_id: int) -> dict[int, list[int]]:
    from apps.evaluations.models import Snapshot

    by_keyword: dict[int, list[int]] = {}
    for snapshot_id, keyword_id in (
        Snapshot.objects.filter(keyword__evaluation_id=evaluation_id)
        .order_by("keyword_id", "position")
        .values_list("id", "keyword_id")
        .iterator(chunk_size=20_000)
    ):
        by_keyword.setdefault(keyword_id, []).append(snapshot_id)
    return by_keyword


def analyze() -> None:
    """Planner statistics, as autovacuum would gather them soon after a bulk load."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def gunicorn_command(host: str, port: int, *options: str) -> list[str]:
    """gunicorn as production runs it (config/gunicorn.conf.py), on `host:port`, logging
    warnings only; `options` after (they override the file)."""
    return [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "--config",
        "config/gunicorn.conf.py",
        "--bind",
        f"{host}:{port}",
        "--log-level",
        "warning",
        *options,
    ]


def timed(function: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = function()
    return (time.perf_counter() - start) * 1000.0, result


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def high_water_mark(pid: int) -> int:
    """A process's peak resident memory so far, in bytes (the kernel's VmHWM; not
    getrusage's ru_maxrss, which keeps the forking parent's peak across exec)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except FileNotFoundError:  # it has just ended
        pass
    return 0


def progress_note(message: str) -> None:
    """Where the bench is, on stderr, so stdout holds only the report."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def machine_speed() -> str:
    """How fast this machine runs plain Python, to compare figures taken on different
    machines: the best of three runs of a 20-million-step loop (a CPU-bound bench's
    figures scale with it)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for step in range(20_000_000):
            total += step
        best = min(best, time.perf_counter() - started)
    return f"machine speed: a 20-million-step Python loop in {best:.2f} s (best of 3)"


# Incrementally kept means against exact (fsum) means of the stored values.
MEAN_TOLERANCE = 1e-9


def check_means(evaluation_id: int) -> list[str]:
    """Every incrementally kept mean must equal the exact mean of the stored values (and
    its count, and its latest history point); the problems found."""
    from apps.evaluations.models import EvaluationMetric
    from apps.scoring.models import KeywordMetric

    problems = []
    for metric in EvaluationMetric.objects.filter(evaluation_id=evaluation_id):
        values = [
            value
            for value in KeywordMetric.objects.filter(
                evaluation_id=evaluation_id, metric=metric.metric, k=metric.k
            ).values_list("value", flat=True)
            if value is not None
        ]
        exact = math.fsum(values) / len(values) if values else None
        if metric.value_count != len(values):
            problems.append(f"{metric}: count {metric.value_count} != {len(values)}")
        if (exact is None) != (metric.value is None) or (
            exact is not None
            and metric.value is not None
            and abs(metric.value - exact) > MEAN_TOLERANCE
        ):
            problems.append(f"{metric}: mean {metric.value!r} != exact {exact!r}")
        point = metric.history.order_by("-minute").first()
        if point is None or point.value != metric.value:
            problems.append(f"{metric}: latest history point {point and point.value!r}")
    return problems
