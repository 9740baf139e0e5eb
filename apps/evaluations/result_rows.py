"""Writing many results at once: snapshots and their empty feedback slots.

A start stores tens of thousands of snapshots and slots. Building one Django model
instance per row costs more than the search calls themselves, so on PostgreSQL the
snapshots go in as arrays (INSERT ... SELECT FROM unnest) and their slots are made by
the server from the new snapshots (one INSERT ... SELECT with generate_series). Other
databases take the ORM's bulk_create.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection

from .models import FeedbackSlot, Keyword, Snapshot


@dataclass(frozen=True)
class ResultRow:
    keyword_id: int
    keyword_position: int
    position: int
    doc_id: str
    name: str
    image: str
    attributes: dict[str, Any]


def insert_results(*, evaluation_id: int, strategy: int, rows: list[ResultRow]) -> int:
    """Insert the snapshots and `strategy` empty slots for each; returns the slot count."""
    if not rows:
        return 0
    # start_bench.py, 1,000 keywords: open in 10.7 s this way, 17.8 s through bulk_create.
    if connection.vendor == "postgresql":
        _insert_on_postgres(evaluation_id, strategy, rows)
    else:
        _insert_portably(evaluation_id, strategy, rows)
    return len(rows) * strategy


def _insert_on_postgres(evaluation_id: int, strategy: int, rows: list[ResultRow]) -> None:
    snapshot = Snapshot._meta.db_table
    slot = FeedbackSlot._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{snapshot}" (keyword_id, position, doc_id, name, image, attributes) '
            "SELECT k, p, d, n, i, a::jsonb FROM unnest("
            "%s::bigint[], %s::integer[], %s::text[], %s::text[], %s::text[], %s::text[]"
            ") AS t(k, p, d, n, i, a) RETURNING id",
            [
                [row.keyword_id for row in rows],
                [row.position for row in rows],
                [row.doc_id for row in rows],
                [row.name for row in rows],
                [row.image for row in rows],
                [json.dumps(row.attributes) for row in rows],
            ],
        )
        snapshot_ids = [found[0] for found in cursor.fetchall()]
        cursor.execute(
            f'INSERT INTO "{slot}" (evaluation_id, keyword_id, snapshot_id, index, '
            "external_grader, reason, keyword_position, snapshot_position, "
            "snapshot_started, reused) "
            "SELECT %s, s.keyword_id, s.id, g.i, '', '', k.position, s.position, false, false "
            f'FROM "{snapshot}" s JOIN "{Keyword._meta.db_table}" k '
            "ON k.id = s.keyword_id CROSS JOIN generate_series(0, %s - 1) AS g(i) "
            "WHERE s.id = ANY(%s::bigint[]) ORDER BY s.id, g.i",
            [evaluation_id, strategy, snapshot_ids],
        )


def _insert_portably(evaluation_id: int, strategy: int, rows: list[ResultRow]) -> None:
    stored = Snapshot.objects.bulk_create(
        [
            Snapshot(
                keyword_id=row.keyword_id,
                position=row.position,
                doc_id=row.doc_id,
                name=row.name,
                image=row.image,
                attributes=row.attributes,
            )
            for row in rows
        ],
        batch_size=2000,
    )
    FeedbackSlot.objects.bulk_create(
        (
            FeedbackSlot(
                evaluation_id=evaluation_id,
                keyword_id=row.keyword_id,
                snapshot=snapshot,
                index=index,
                keyword_position=row.keyword_position,
                snapshot_position=row.position,
            )
            for row, snapshot in zip(rows, stored, strict=True)
            for index in range(strategy)
        ),
        batch_size=2000,
    )
