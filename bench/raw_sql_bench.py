"""Hand-written SQL against the ORM, statement by statement, in one run.

Run: .venv/bin/python bench/raw_sql_bench.py [--calls N] [--warmup N] [--claims N]
     [--claim-warmup N] [--database-suffix NAME] [--keep-database]

Rule: hand-written SQL stays only where the ORM version is at least 1.5x
slower on the hot path. Each hand-written read or write below is timed against an ORM
version written here that returns the same thing (checked on every call: same ids, same
values, same model field values), per call, warm (after the warm-up calls), the two
versions alternating call by call (which goes first alternates too) so both see the same
machine noise and the same caches:

 1  who is this request: apps.accounts.sessions (the session, the person and their
    memberships in one SELECT) + current_membership, against Django's database session
    store + ModelBackend.get_user + current_membership with an ORM memberships read
 2  the card's slot read: judging.selectors.slot_for_display (RowModels) against
    select_related(...).get(...)
 3  grades_today (GRADES_TODAY_SQL) and evaluation_ids_open_to (OPEN_EVALUATIONS_SQL)
 4  memberships_of
 5  the claim: services.slot_claim_next_for_card (judging/sql.py claim_sql, one statement,
    under the grader's advisory lock) against an ORM claim in a transaction. Each
    iteration gives both versions the same state: one claims (timed), the slot it took
    is given back exactly as it was, the other claims (timed, must take the same slot),
    then the grader grades it (judgements.slot_judge, untimed), as the grading page does
    after each claim. Graders take turns, so each claim takes a fresh slot.
 6  the keyword mark: scoring.pipeline.MARK_SQL (UPDATE ... RETURNING) against an ORM
    update + SELECT, each in its own transaction, rolled back
 7  (at d7c3974) the agreement page's read, insights.agreement.selectors.
    evaluation_ratings, in SQL against an ORM values_list read: 1.38 to 1.42x on a
    finished evaluation of 60,000 graded slots, a lead page, so it became that ORM read
    and the item was retired (bench/README.md)

Data, on PostgreSQL (its own database, relevo_bench_rawsql_<suffix>, dropped at the
end): a team of 32 graders (8 of them also in a second team; the active evaluation
carries a tag they all hold, the team has a second tag), an active evaluation of 3,000
keywords x 20 results x 3 slots (the first 150 keywords graded by the graders today, the
next 20 with one slot of each result graded: started snapshots for the claim to finish
first; a few skipped results), and a finished evaluation of 1,000 keywords x 20 x 3 all
graded yesterday (a tenth by imported graders).

The database connection is Django's, as the web process uses it (DEBUG off, psycopg
server-side binding, statements prepared after 5 runs). Timings are wall-clock per call,
round trips to PostgreSQL on loopback included. The machine has 2 cores and other work
may run: the figures are noisy; compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import benchkit
from benchkit import Shape, analyze, build_evaluation, percentile, progress_note

GRADERS = 32
SECOND_TEAM_GRADERS = 8
KEYWORDS, SNAPSHOTS, STRATEGY = 3_000, 20, 3
GRADED_KEYWORDS = 150  # fully graded today
STARTED_KEYWORDS = 20  # then: one slot of each result graded today
HISTORY_KEYWORDS = 1_000
IMPORTED_SHARE = 10  # 1 history keyword in 10 graded by imported graders
IMPORTED_NAMES = ["import-anna", "import-bob", "import-carla"]
RATIO_RULE = 1.5

# --- the data ---------------------------------------------------------------------------


@dataclass
class Data:
    team: Any
    other_team: Any
    active: Any
    history: Any
    memberships: list  # the graders' memberships of the team, with user and team
    slot_ids: list[int]  # a sample of the active evaluation's slots
    spare_keyword_ids: list[int]  # keywords of the active evaluation the claims never reach


def build_data() -> Data:
    from django.contrib.auth.hashers import make_password
    from django.db import connection
    from django.utils import timezone

    from apps.accounts.models import Membership, User
    from apps.accounts.services import member_add, tag_save, team_create
    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Snapshot, SnapshotSkip

    team = team_create(name="Bench", owner_email="owner@bench.test")
    other_team = team_create(name="Bench B", owner_email="owner-b@bench.test")
    tag_save(team=team, name="de", colour="#336699")  # a tag nobody holds, on nothing
    emails = [f"grader{number:02d}@bench.test" for number in range(GRADERS)]
    for email in emails:
        member_add(team=team, email=email, role="evaluator", tag_names=["en"])
    for email in emails[:SECOND_TEAM_GRADERS]:
        member_add(team=other_team, email=email, role="evaluator")
    User.objects.filter(email__in=emails).update(password=make_password("bench-password-1"))
    grader_ids = list(
        User.objects.filter(email__in=emails).order_by("id").values_list("id", flat=True)
    )

    history = build_history(team, grader_ids)

    shape = Shape(KEYWORDS, SNAPSHOTS, STRATEGY, graded_share=0.0)
    full: list[list[int | None]] = [[2, 1, 3]] * SNAPSHOTS
    started: list[list[int | None]] = [[1, None, None]] * SNAPSHOTS
    empty: list[list[int | None]] = [[None] * STRATEGY] * SNAPSHOTS
    grades = (
        [full] * GRADED_KEYWORDS
        + [started] * STARTED_KEYWORDS
        + [empty] * (KEYWORDS - GRADED_KEYWORDS - STARTED_KEYWORDS)
    )
    active = build_evaluation(team, "Bench pool", shape, grades, [("ndcg", 10), ("precision", 10)])
    active.tags.add(team.tags.get(name="en"))
    Evaluation.objects.filter(id=active.id).update(
        scoring_guidelines="Grade **how well** the result answers the keyword (0 to 3)."
    )
    now = timezone.now()
    with connection.cursor() as cursor:
        # Today's grades are the graders' (one slot per grader per snapshot), not imported.
        cursor.execute(
            f"UPDATE {FeedbackSlot._meta.db_table} SET grader_id = (%s::bigint[])"
            "[1 + (snapshot_id * 3 + \"index\") %% %s], external_grader = '', "
            "assigned_at = %s, graded_at = %s WHERE evaluation_id = %s AND grade IS NOT NULL",
            [grader_ids, len(grader_ids), now - timedelta(seconds=20), now, active.id],
        )
        # Cards show a name, an image and attributes.
        cursor.execute(
            f"UPDATE {Snapshot._meta.db_table} p SET name = 'Product ' || p.id, "
            "image = 'https://img.example.test/' || p.doc_id || '.jpg', "
            "attributes = jsonb_build_object('brand', 'Brand ' || (p.id %% 17), "
            "'price', (p.id %% 100) || '.99', 'colour', 'blue') "
            f"FROM {Keyword._meta.db_table} k WHERE k.id = p.keyword_id AND k.evaluation_id = %s",
            [active.id],
        )
    # A few results some graders skipped, among the started ones the claim offers first.
    started_snapshots = list(
        Snapshot.objects.filter(keyword__evaluation=active, keyword__position__gt=GRADED_KEYWORDS)
        .order_by("keyword__position", "position")
        .values_list("id", flat=True)[:200]
    )
    rng = random.Random(16)
    SnapshotSkip.objects.bulk_create(
        [
            SnapshotSkip(snapshot_id=snapshot_id, user_id=user_id, reason="cannot tell")
            for user_id in grader_ids
            for snapshot_id in rng.sample(started_snapshots, 3)
        ],
        ignore_conflicts=True,
    )
    memberships = list(
        Membership.objects.filter(team=team, role="evaluator")
        .select_related("user", "team")
        .order_by("user__email")
    )
    slot_ids = list(
        FeedbackSlot.objects.filter(evaluation=active)
        .filter(keyword__position__lte=GRADED_KEYWORDS + STARTED_KEYWORDS + 50)
        .values_list("id", flat=True)
    )
    spare_keyword_ids = list(
        Keyword.objects.filter(evaluation=active, position__gt=KEYWORDS - 500).values_list(
            "id", flat=True
        )
    )
    # The first 200 of the graded keywords' ids too: a mark mostly hits keywords with grades.
    spare_keyword_ids += list(
        Keyword.objects.filter(evaluation=active, position__lte=200).values_list("id", flat=True)
    )
    return Data(team, other_team, active, history, memberships, slot_ids, spare_keyword_ids)


def build_history(team, grader_ids: list[int]):
    """A finished evaluation the graders graded yesterday; a tenth by imported graders."""
    from django.db import connection
    from django.db.models import F
    from django.utils import timezone

    from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword

    shape = Shape(HISTORY_KEYWORDS, SNAPSHOTS, STRATEGY, graded_share=1.0)
    rng = random.Random(7)
    grades: list[list[list[int | None]]] = [
        [[rng.choice((0, 1, 2, 2, 3)) for _ in range(STRATEGY)] for _ in range(SNAPSHOTS)]
        for _ in range(HISTORY_KEYWORDS)
    ]
    history = build_evaluation(team, "Bench history", shape, grades, [("ndcg", 10)])
    yesterday = timezone.now() - timedelta(days=1)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {FeedbackSlot._meta.db_table} SET grader_id = (%s::bigint[])"
            "[1 + (snapshot_id * 3 + \"index\") %% %s], external_grader = '', "
            "graded_at = %s, assigned_at = %s WHERE evaluation_id = %s "
            f"AND keyword_position %% {IMPORTED_SHARE} <> 0",
            [grader_ids, len(grader_ids), yesterday, yesterday, history.id],
        )
        cursor.execute(
            f"UPDATE {FeedbackSlot._meta.db_table} SET grader_id = NULL, "
            '  external_grader = (%s::text[])[1 + "index"], graded_at = %s, assigned_at = NULL '
            f"WHERE evaluation_id = %s AND keyword_position %% {IMPORTED_SHARE} = 0",
            [IMPORTED_NAMES, yesterday, history.id],
        )
    Keyword.objects.filter(evaluation=history).update(
        needs_scoring=False, scored_version=F("grade_version")
    )
    Evaluation.objects.filter(id=history.id).update(status="finished", graded_slots=shape.slots)
    history.refresh_from_db()
    return history


# --- the ORM versions (what would move into the apps) ----------------------------------
# Each returns what the hand-written version returns.


def memberships_of_orm(user):
    """accounts.selectors.memberships_of, by the ORM."""
    from apps.accounts.models import Membership

    return list(
        Membership.objects.filter(user_id=user.id)
        .select_related("team")
        .order_by("team__name", "id")
    )


def current_membership_orm(request):
    """accounts.selectors.current_membership without the session's preloaded memberships."""
    from apps.accounts.models import Membership
    from apps.accounts.selectors import SESSION_TEAM_KEY

    memberships = getattr(request, "_relevo_memberships", None)
    if memberships is None:
        memberships = memberships_of_orm(request.user)
        for membership in memberships:
            Membership.user.field.set_cached_value(membership, request.user)
    request._relevo_memberships = memberships
    chosen = request.session.get(SESSION_TEAM_KEY)
    for membership in memberships:
        if membership.team_id == chosen:
            return membership
    return memberships[0] if memberships else None


def slot_for_display_orm(slot_id: int):
    from apps.evaluations.models import FeedbackSlot

    return FeedbackSlot.objects.select_related("snapshot", "keyword", "evaluation").get(id=slot_id)


def grades_today_orm(*, user) -> int:
    from django.utils import timezone

    from apps.evaluations.models import FeedbackSlot

    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return FeedbackSlot.objects.filter(grader_id=user.id, graded_at__gte=start).count()


def evaluation_ids_open_to_orm(membership) -> list[int]:
    from apps.judging.selectors import evaluations_open_to

    return list(evaluations_open_to(membership).values_list("id", flat=True))


def claim_orm(membership):
    """services.slot_claim_next_for_card(membership=...) for a grader's own queue, by the
    ORM: in one transaction, the grader's claims serialised by a lock on their membership
    row, the held slot else the first free slot in queue order (skipping slots others are
    claiming), a conditional take, the read for the card, and today's count."""
    from django.db import transaction
    from django.db.models import Exists, OuterRef, Q
    from django.utils import timezone

    from apps.accounts.models import Membership
    from apps.evaluations.models import FeedbackSlot, SnapshotSkip
    from apps.judging.selectors import lock_cutoff
    from apps.judging.services import CLAIM_ATTEMPTS, NextSlot

    user = membership.user
    for _attempt in range(CLAIM_ATTEMPTS):
        now = timezone.now()
        cutoff = lock_cutoff(now)
        with transaction.atomic():
            # One claim of a grader at a time (a double click must not take two slots).
            list(
                Membership.objects.select_for_update(no_key=True)
                .filter(id=membership.id)
                .order_by()  # Meta.ordering would join (and lock) the user
                .values_list("id")
            )
            evaluation_ids = evaluation_ids_open_to_orm(membership)
            picked = (
                FeedbackSlot.objects.filter(
                    grader_id=user.id, grade__isnull=True, evaluation_id__in=evaluation_ids
                )
                .order_by("-assigned_at")
                .values_list("id", flat=True)
                .first()
            )
            if picked is None:
                free = (
                    FeedbackSlot.objects.filter(grade__isnull=True)
                    .filter(Q(grader__isnull=True) | Q(assigned_at__lt=cutoff))
                    .exclude(
                        Exists(
                            FeedbackSlot.objects.filter(
                                snapshot_id=OuterRef("snapshot_id"), grader_id=user.id
                            )
                        )
                    )
                    .exclude(
                        Exists(
                            SnapshotSkip.objects.filter(
                                snapshot_id=OuterRef("snapshot_id"), user_id=user.id
                            )
                        )
                    )
                    .order_by("-snapshot_started", "keyword_position", "snapshot_position", "index")
                    .select_for_update(skip_locked=True)
                )
                for evaluation_id in evaluation_ids:
                    picked = (
                        free.filter(evaluation_id=evaluation_id)
                        .values_list("id", flat=True)
                        .first()
                    )
                    if picked is not None:
                        break
            if picked is None:
                return NextSlot(None, grades_today_orm(user=user))
            taken = (
                FeedbackSlot.objects.filter(id=picked, grade__isnull=True)
                .filter(Q(grader_id=user.id) | Q(grader__isnull=True) | Q(assigned_at__lt=cutoff))
                .update(grader_id=user.id, assigned_at=now)
            )
            if taken:
                slot = FeedbackSlot.objects.select_related("snapshot", "keyword", "evaluation").get(
                    id=picked
                )
                return NextSlot(slot, grades_today_orm(user=user))
    return NextSlot(None)


def mark_orm(keyword_id: int) -> int | None:
    """The grade_version - scored_version after marking (None: no such keyword)."""
    from django.db.models import F

    from apps.evaluations.models import Keyword

    marked = Keyword.objects.filter(id=keyword_id)
    if not marked.update(needs_scoring=True, grade_version=F("grade_version") + 1):
        return None
    return marked.values_list(F("grade_version") - F("scored_version"), flat=True).get()


def fields_of(instance, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        f.attname: getattr(instance, f.attname)
        for f in type(instance)._meta.concrete_fields
        if f.attname not in skip
    }


def same_instance(a, b, *, skip: tuple[str, ...] = ()) -> None:
    assert type(a) is type(b), (type(a), type(b))
    assert fields_of(a, skip=skip) == fields_of(b, skip=skip), (fields_of(a), fields_of(b))
    assert a._state.adding is b._state.adding is False
    assert a._state.db == b._state.db


def same_slot(a, b, related: tuple[str, ...], *, skip: tuple[str, ...] = ()) -> None:
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    same_instance(a, b, skip=skip)
    for name in related:
        field = type(a)._meta.get_field(name)
        assert field.is_cached(a) and field.is_cached(b), name
        same_instance(getattr(a, name), getattr(b, name))


def same_memberships(a: list, b: list) -> None:
    assert [m.id for m in a] == [m.id for m in b]
    for x, y in zip(a, b, strict=True):
        same_instance(x, y)
        same_instance(x.team, y.team)


# --- timing ----------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    hot: bool
    sql: list[float] = field(default_factory=list)  # µs per call, wall clock
    orm: list[float] = field(default_factory=list)
    sql_cpu: list[float] = field(default_factory=list)  # µs per call, this process's CPU
    orm_cpu: list[float] = field(default_factory=list)
    sql_queries: int | None = None
    orm_queries: int | None = None
    baseline: str = "ORM"  # what the second column is
    note: str = ""


CAPTURE: dict[str, int] = {}
# The CPU time (this process's) of each clock() call, in order, for measure() to collect.
CPU_SPENT: list[float] = []


def clock(fn: Callable[[], Any], capture: str | None = None) -> tuple[float, Any]:
    """(µs, result) of one call; with `capture`, also count its queries (not timed)."""
    if capture is not None:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            result = fn()
        CAPTURE[capture] = len(queries)
        return 0.0, result
    cpu = time.process_time_ns()
    started = time.perf_counter_ns()
    result = fn()
    elapsed = time.perf_counter_ns() - started
    CPU_SPENT.append((time.process_time_ns() - cpu) / 1000.0)
    return elapsed / 1000.0, result


def measure(
    row: Row,
    step: Callable[[int, bool, str | None], tuple[float, float]],
    warmup: int,
    calls: int,
) -> Row:
    """step(i, sql_first, capture) -> (sql µs, orm µs), checking equal results itself."""
    step(0, True, row.label)  # counts the queries of each version, untimed
    row.sql_queries = CAPTURE.pop(row.label + " sql", None)
    row.orm_queries = CAPTURE.pop(row.label + " orm", None)
    for i in range(1, warmup):
        step(i, i % 2 == 0, None)
    for i in range(warmup, warmup + calls):
        CPU_SPENT.clear()
        sql_first = i % 2 == 0
        sql_us, orm_us = step(i, sql_first, None)
        row.sql.append(sql_us)
        row.orm.append(orm_us)
        # Each step clocks the two versions once each, in the order given.
        first_cpu, second_cpu = CPU_SPENT
        row.sql_cpu.append(first_cpu if sql_first else second_cpu)
        row.orm_cpu.append(second_cpu if sql_first else first_cpu)
    progress_note(
        f"{row.label}: sql {statistics.median(row.sql):.0f} µs, "
        f"{row.baseline} {statistics.median(row.orm):.0f} µs"
    )
    return row


def both(
    sql: Callable[[], Any], orm: Callable[[], Any], sql_first: bool, capture: str | None
) -> tuple[float, Any, float, Any]:
    first, second = (sql, orm) if sql_first else (orm, sql)
    names = ("sql", "orm") if sql_first else ("orm", "sql")
    t1, r1 = clock(first, capture and f"{capture} {names[0]}")
    t2, r2 = clock(second, capture and f"{capture} {names[1]}")
    if sql_first:
        return t1, r1, t2, r2
    return t2, r2, t1, r1


# --- the items -------------------------------------------------------------------------


def item_who(data: Data, warmup: int, calls: int) -> list[Row]:
    """1: the session, the person and the membership of a request."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user
    from django.contrib.sessions.backends.db import SessionStore as DjangoStore
    from django.test import RequestFactory

    from apps.accounts.selectors import SESSION_TEAM_KEY, current_membership
    from apps.accounts.sessions import SessionStore as RelevoStore

    model_backend = "django.contrib.auth.backends.ModelBackend"
    if model_backend not in settings.AUTHENTICATION_BACKENDS:
        # Django's check: the backend a session names must be configured.
        settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, model_backend]
    factory = RequestFactory()
    sessions = []
    for number, membership in enumerate(data.memberships):
        user = membership.user
        keys = []
        for store_class, backend in (
            (RelevoStore, "apps.accounts.sessions.UserBackend"),
            (DjangoStore, model_backend),
        ):
            store = store_class()
            store[SESSION_KEY] = str(user.pk)
            store[BACKEND_SESSION_KEY] = backend
            store[HASH_SESSION_KEY] = user.get_session_auth_hash()
            if number % 2:  # half chose a team in the switcher
                store[SESSION_TEAM_KEY] = (
                    data.other_team.id if number < SECOND_TEAM_GRADERS else data.team.id
                )
            store.create()
            keys.append(store.session_key)
        sessions.append(keys)

    def stepper(orm_membership: Callable) -> Callable[[int, bool, str | None], tuple[float, float]]:
        """A step reading the request's person and membership both ways: the app's
        session store and current_membership, against Django's store and
        `orm_membership` (the ORM's selector, or the app's own for the store alone)."""

        def step(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
            relevo_key, django_key = sessions[i % len(sessions)]
            sql_request, orm_request = factory.get("/feedback/"), factory.get("/feedback/")

            def sql():
                sql_request.session = RelevoStore(relevo_key)
                sql_request.user = get_user(sql_request)
                return sql_request.user, current_membership(sql_request)

            def orm():
                orm_request.session = DjangoStore(django_key)
                orm_request.user = get_user(orm_request)
                return orm_request.user, orm_membership(orm_request)

            t_sql, (user_a, membership_a), t_orm, (user_b, membership_b) = both(
                sql, orm, sql_first, capture
            )
            assert user_a.is_authenticated and user_a.pk is not None
            same_instance(user_a, user_b)
            same_instance(membership_a, membership_b)
            same_instance(membership_a.team, membership_b.team)
            same_memberships(
                getattr(sql_request, "_relevo_memberships"),  # noqa: B009 - set by the selector
                getattr(orm_request, "_relevo_memberships"),  # noqa: B009
            )
            return t_sql, t_orm

        return step

    return [
        measure(
            Row("1a who is this request (session+user+membership)", True),
            stepper(current_membership_orm),
            warmup,
            calls,
        ),
        # The session override alone: the app's current_membership both ways, which reads
        # the memberships with the raw memberships_of when the session did not.
        measure(
            Row("1b sessions.py alone (memberships raw both ways)", True),
            stepper(current_membership),
            warmup,
            calls,
        ),
    ]


def item_slot_reads(data: Data, warmup: int, calls: int) -> list[Row]:
    """2: the card's slot read. (At d7c3974 this also timed judging's slot_in_team, 4.1 to
    4.6x, which had no caller and was deleted, and RowModels building with Model.__new__
    against Model.from_db, 1.03 to 1.16x, which was therefore dropped: bench/README.md.)"""
    from apps.judging.selectors import slot_for_display

    rng = random.Random(2)
    ids = rng.sample(data.slot_ids, 2000)
    related = ("snapshot", "keyword", "evaluation")

    def display(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        slot_id = ids[i % len(ids)]
        t_sql, a, t_orm, b = both(
            lambda: slot_for_display(slot_id),
            lambda: slot_for_display_orm(slot_id),
            sql_first,
            capture,
        )
        same_slot(a, b, related)
        return t_sql, t_orm

    return [
        measure(Row("2a slot_for_display vs select_related().get()", True), display, warmup, calls),
    ]


def item_counts(data: Data, warmup: int, calls: int) -> list[Row]:
    """3: grades_today and evaluation_ids_open_to."""
    from apps.judging.selectors import evaluation_ids_open_to, grades_today

    members = data.memberships

    def today(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        user = members[i % len(members)].user
        t_sql, a, t_orm, b = both(
            lambda: grades_today(user=user), lambda: grades_today_orm(user=user), sql_first, capture
        )
        assert a == b and a > 0, (a, b)
        return t_sql, t_orm

    def open_to(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        membership = members[i % len(members)]
        t_sql, a, t_orm, b = both(
            lambda: evaluation_ids_open_to(membership),
            lambda: evaluation_ids_open_to_orm(membership),
            sql_first,
            capture,
        )
        assert a == b == [data.active.id], (a, b)
        return t_sql, t_orm

    return [
        measure(Row("3a grades_today", True), today, warmup, calls),
        measure(Row("3b evaluation_ids_open_to", True), open_to, warmup, calls),
    ]


def item_memberships(data: Data, warmup: int, calls: int) -> Row:
    """4: memberships_of."""
    from apps.accounts.selectors import memberships_of

    members = data.memberships

    def step(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        user = members[i % len(members)].user
        t_sql, a, t_orm, b = both(
            lambda: memberships_of(user), lambda: memberships_of_orm(user), sql_first, capture
        )
        assert len(a) == (2 if i % len(members) < SECOND_TEAM_GRADERS else 1)
        same_memberships(a, b)
        return t_sql, t_orm

    return measure(Row("4 memberships_of", True), step, warmup, calls)


def item_claim(data: Data, warmup: int, calls: int) -> Row:
    """5: the claim. Both versions claim from the same state (see the module's doc)."""
    from django.db import connection

    from apps.evaluations.models import FeedbackSlot
    from apps.judging.judgements import Giver, slot_judge
    from apps.judging.services import slot_claim_next_for_card

    assert connection.get_autocommit() and not connection.in_atomic_block
    members = data.memberships
    related = ("snapshot", "keyword", "evaluation")
    rng = random.Random(5)

    def give_back(slot) -> None:
        # The slot was free before the claim: no grader, never assigned.
        FeedbackSlot.objects.filter(id=slot.id).update(grader=None, assigned_at=None)

    def step(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        membership = members[i % len(members)]
        first = (
            (lambda: slot_claim_next_for_card(membership=membership))
            if sql_first
            else (lambda: claim_orm(membership))
        )
        second = (
            (lambda: claim_orm(membership))
            if sql_first
            else (lambda: slot_claim_next_for_card(membership=membership))
        )
        names = ("sql", "orm") if sql_first else ("orm", "sql")
        t1, r1 = clock(first, capture and f"{capture} {names[0]}")
        assert r1.slot is not None and r1.slot.grader_id == membership.user_id
        assert r1.slot.grade is None
        give_back(r1.slot)
        t2, r2 = clock(second, capture and f"{capture} {names[1]}")
        same_slot(r1.slot, r2.slot, related, skip=("assigned_at",))
        assert abs(r1.slot.assigned_at - r2.slot.assigned_at) < timedelta(seconds=5)
        assert r1.grades_today == r2.grades_today, (r1.grades_today, r2.grades_today)
        # The grader grades it, as the grading page does before the next claim.
        slot_judge(
            slot_id=r2.slot.id,
            giver=Giver.grader(membership.user),
            grade=rng.choice((0, 1, 2, 3)),
            team_id=data.team.id,
        )
        return (t1, t2) if sql_first else (t2, t1)

    return measure(
        Row("5 claim (pick + take + read + today's count)", True, note="autocommit; see doc"),
        step,
        warmup,
        calls,
    )


def check_pool(data: Data, claims: int) -> str:
    """After the claims: no slot held ungraded, one graded slot per claim iteration."""
    from django.db.models import Count

    from apps.evaluations.models import FeedbackSlot

    slots = FeedbackSlot.objects.filter(evaluation=data.active)
    held = slots.filter(grader__isnull=False, grade__isnull=True).count()
    twice = (
        slots.filter(grader__isnull=False)
        .values("snapshot_id", "grader_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    graded = slots.filter(grade__isnull=False).count()
    expected = GRADED_KEYWORDS * SNAPSHOTS * STRATEGY + STARTED_KEYWORDS * SNAPSHOTS + claims
    ok = held == 0 and twice == 0 and graded == expected
    return (
        f"pool after the claims: {held} slots held ungraded, {twice} snapshots with two slots of "
        f"one grader, {graded} graded slots (expected {expected}): {'OK' if ok else 'FAIL'}"
    )


def item_mark(data: Data, warmup: int, calls: int) -> Row:
    """6: the keyword mark, each version in its own transaction, rolled back."""
    from django.db import connection, transaction

    from apps.scoring.pipeline import MARK_SQL

    ids = data.spare_keyword_ids

    def sql_mark(keyword_id: int) -> int | None:
        with connection.cursor() as cursor:
            cursor.execute(MARK_SQL, [keyword_id])
            row = cursor.fetchone()
        return None if row is None else row[0]

    def in_rolled_back_transaction(fn: Callable[[], Any], capture: str | None) -> tuple[float, Any]:
        with transaction.atomic():
            with connection.cursor() as cursor:
                # A grade's transaction has run statements before the mark: BEGIN is sent
                # with the first one, not timed here.
                cursor.execute("SELECT 1")
            result = clock(fn, capture)
            transaction.set_rollback(True)
        return result

    def step(i: int, sql_first: bool, capture: str | None) -> tuple[float, float]:
        keyword_id = ids[i % len(ids)]
        order = [("sql", lambda: sql_mark(keyword_id)), ("orm", lambda: mark_orm(keyword_id))]
        if not sql_first:
            order.reverse()
        results = {
            name: in_rolled_back_transaction(fn, capture and f"{capture} {name}")
            for name, fn in order
        }
        (t_sql, a), (t_orm, b) = results["sql"], results["orm"]
        assert a == b and a is not None and a >= 1, (a, b)
        return t_sql, t_orm

    return measure(Row("6 keyword mark (UPDATE ... RETURNING)", True), step, warmup, calls)


def verdict_of(row: Row, ratio: float) -> str:
    if row.baseline != "ORM":
        return f"{row.baseline}/__new__ {ratio:.2f}: " + (
            "keep __new__" if ratio >= RATIO_RULE else "drop __new__ (use from_db)"
        )
    if not row.hot:
        return "lead page: rule keeps SQL on the hot path only -> ORM"
    return "keep SQL" if ratio >= RATIO_RULE else "replace with ORM"


def report(rows: list[Row]) -> None:
    header = (
        f"{'statement':<52} | {'SQL med':>8} | {'SQL p90':>8} | {'ORM med':>8} | "
        f"{'ORM p90':>8} | {'ORM/SQL':>7} | {'ORM-SQL':>8} | {'CPU S/O':>11} | "
        f"{'queries':>7} | verdict"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        sql_median, orm_median = statistics.median(row.sql), statistics.median(row.orm)
        ratio = orm_median / sql_median
        queries = f"{row.sql_queries}/{row.orm_queries}"
        cpu = f"{statistics.median(row.sql_cpu):.0f}/{statistics.median(row.orm_cpu):.0f}"
        print(
            f"{row.label:<52} | {sql_median:>8.0f} | {percentile(row.sql, 0.9):>8.0f} | "
            f"{orm_median:>8.0f} | {percentile(row.orm, 0.9):>8.0f} | {ratio:>7.2f} | "
            f"{orm_median - sql_median:>8.0f} | {cpu:>11} | {queries:>7} | "
            f"{verdict_of(row, ratio)}"
        )
    print(
        "(µs per call, wall clock, warm; ORM/SQL = ratio of the medians; 'CPU S/O' = median "
        "CPU of this process per call, SQL/ORM (the Python side, without PostgreSQL's); "
        "'queries' = statements Django ran, SQL/ORM (the ORM claim's 9 include its BEGIN and "
        "COMMIT); 1b's ORM columns are Django's "
        "session store + ModelBackend with the app's raw memberships_of)"
    )


def drop_database() -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{benchkit.SERVER_URL}/postgres", autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {benchkit.BENCH_DATABASE} WITH (FORCE)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=300, help="warm-up calls per read")
    parser.add_argument("--calls", type=int, default=2000, help="measured calls per read")
    parser.add_argument("--claim-warmup", type=int, default=200)
    parser.add_argument("--claims", type=int, default=800, help="measured claim iterations")
    parser.add_argument("--database-suffix", default="run")
    parser.add_argument("--keep-database", action="store_true")
    args = parser.parse_args()

    benchkit.use_database(f"relevo_bench_rawsql_{args.database_suffix}")
    started = time.monotonic()
    load_before = os.getloadavg()
    progress_note(f"creating {benchkit.BENCH_DATABASE}")
    benchkit.setup_django()
    from unittest import mock

    from django.db import connection

    try:
        progress_note("building the data")
        data = build_data()
        analyze()
        built = time.monotonic() - started
        rows: list[Row] = []
        # Grades would queue a recompute on Celery: nothing is published here.
        with mock.patch("apps.scoring.pipeline.start_recompute"):
            rows.extend(item_who(data, args.warmup, args.calls))
            rows.extend(item_slot_reads(data, args.warmup, args.calls))
            rows.extend(item_counts(data, args.warmup, args.calls))
            rows.append(item_memberships(data, args.warmup, args.calls))
            rows.append(item_claim(data, args.claim_warmup, args.claims))
            pool = check_pool(data, args.claim_warmup + args.claims)
            rows.append(item_mark(data, args.warmup, args.calls))
        load_after = os.getloadavg()
        server_version = connection.cursor().connection.info.server_version
        print(
            f"data: 1 team of {GRADERS} graders ({SECOND_TEAM_GRADERS} also in a second team); "
            f"active evaluation {KEYWORDS} keywords x {SNAPSHOTS} x {STRATEGY} = "
            f"{KEYWORDS * SNAPSHOTS * STRATEGY} slots ({GRADED_KEYWORDS} keywords graded, "
            f"{STARTED_KEYWORDS} started); finished evaluation of "
            f"{HISTORY_KEYWORDS * SNAPSHOTS * STRATEGY} graded slots; PostgreSQL "
            f"{server_version // 10000}; built in {built:.0f} s"
        )
        print(
            f"calls: reads {args.warmup} warm-up + {args.calls} measured per version; claims "
            f"{args.claim_warmup} + {args.claims}; marks {args.warmup} + {args.calls}; "
            "versions alternate call by call; every call's results compared (equal)"
        )
        print(pool)
        print()
        report(rows)
        print()
        print(benchkit.machine_speed())
        print(
            f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
            f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
            f"whole run {time.monotonic() - started:.0f} s"
        )
    finally:
        if not args.keep_database:
            drop_database()
    return 0


if __name__ == "__main__":
    sys.exit(main())
