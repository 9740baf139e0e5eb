"""Running an evaluation's keywords against its search model, on a Celery worker.

Starting an evaluation that has a search model sets `fetching` and queues
`fetch_evaluation`. The task:

1. takes the evaluation's fetch lease (a conditional UPDATE; one runner at a time, and a
   runner that dies lets the lease expire so the periodic sweep starts another);
2. takes the endpoint's runner lock, so however many evaluations start at once, one
   endpoint never has more than SEARCH_CONCURRENCY_PER_ENDPOINT requests in flight;
3. runs every keyword not yet run on that many threads (the threads only make HTTP
   calls; this thread does every database write), trying again with doubling back-off
   after a transport error or a 5xx answer;
4. stores results in batches, each keyword at most once (its `executed_at` is set by a
   conditional UPDATE in the same transaction as its snapshots);
5. when no keyword is left, applies the reuse strategy and opens the evaluation.

A lead's pause clears `fetching`; the runner sees it within a second, lets the calls in
flight finish, stores them, and stops. Starting again runs only keywords not yet run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.bulk import bulk_set
from apps.core.errors import InvalidState
from apps.core.image_sources import image_source
from apps.endpoints.model_calls import model_call
from apps.evaluations.models import Evaluation, Keyword, Snapshot, Status
from apps.evaluations.result_rows import ResultRow, insert_results
from apps.evaluations.services import add_to_total_slots
from apps.evaluations.states import Event, move
from apps.search import Document, KeywordRun

from .opening import evaluation_open

logger = logging.getLogger(__name__)

FETCH_LEASE_SECONDS = 60
# How often the runner renews its lease and looks for a pause.
CHECK_EVERY_SECONDS = 1.0
# Results are written in batches: fewer transactions, still visible progress.
STORE_EVERY_KEYWORDS = 50
STORE_EVERY_SECONDS = 0.5
# Keywords queued per thread: enough that calls go on while a batch is stored.
LOOKAHEAD_ROUNDS = 4
# The first key of the endpoint's advisory lock on PostgreSQL (the second is its id).
ENDPOINT_LOCK_SPACE = 7_310_002

DOC_ID_LIMIT = Snapshot._meta.get_field("doc_id").max_length or 500
NAME_LIMIT = Snapshot._meta.get_field("name").max_length or 1000
IMAGE_LIMIT = Snapshot._meta.get_field("image").max_length or 2000


@dataclass(frozen=True)
class KeywordOutcome:
    keyword_id: int
    run: KeywordRun
    attempts: int


# --- the lease and the endpoint lock --------------------------------------------------


def _take_lease(evaluation_id: int) -> bool:
    now = timezone.now()
    return bool(
        Evaluation.objects.filter(id=evaluation_id, fetching=True, status=Status.PENDING)
        .filter(Q(fetch_lease_until__isnull=True) | Q(fetch_lease_until__lt=now))
        .update(fetch_lease_until=now + timedelta(seconds=FETCH_LEASE_SECONDS))
    )


def _renew_lease(evaluation_id: int) -> bool:
    """Renew the lease; False when a lead paused (or deleted) the evaluation meanwhile."""
    return bool(
        Evaluation.objects.filter(id=evaluation_id, fetching=True, status=Status.PENDING).update(
            fetch_lease_until=timezone.now() + timedelta(seconds=FETCH_LEASE_SECONDS)
        )
    )


def _free_lease(evaluation_id: int) -> None:
    Evaluation.objects.filter(id=evaluation_id).update(fetch_lease_until=None)


_local_endpoint_locks: dict[int, threading.Lock] = {}
_local_endpoint_locks_guard = threading.Lock()


@contextlib.contextmanager
def endpoint_runner_lock(endpoint_id: int) -> Iterator[bool]:
    """Yield whether this process now runs the endpoint's calls.

    On PostgreSQL a session advisory lock, which the server frees if the worker dies;
    elsewhere (SQLite, one process) a lock per endpoint in this process.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_try_advisory_lock(%s::integer, %s::integer)",
                [ENDPOINT_LOCK_SPACE, endpoint_id],
            )
            got = bool(cursor.fetchone()[0])
        try:
            yield got
        finally:
            if got:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(%s::integer, %s::integer)",
                        [ENDPOINT_LOCK_SPACE, endpoint_id],
                    )
        return
    with _local_endpoint_locks_guard:
        lock = _local_endpoint_locks.setdefault(endpoint_id, threading.Lock())
    got = lock.acquire(blocking=False)
    try:
        yield got
    finally:
        if got:
            lock.release()


# --- calling ---------------------------------------------------------------------------


def run_with_retries(
    call_one: Callable[[str], KeywordRun], text: str, *, attempts: int, backoff_s: float
) -> tuple[KeywordRun, int]:
    """Run one keyword, again after a retryable failure; returns the last run and tries."""
    run = call_one(text)
    tries = 1
    while run.failed and run.retryable and tries < attempts:
        time.sleep(backoff_s * 2 ** (tries - 1))
        run = call_one(text)
        tries += 1
    return run, tries


# --- storing ---------------------------------------------------------------------------


def snapshot_fields(document: Document) -> tuple[str, str, str] | str:
    """(doc id, name, image) fitted to the columns, or why the document cannot be stored."""
    if len(document.doc_id) > DOC_ID_LIMIT:
        return f"a result's id is longer than {DOC_ID_LIMIT} characters"
    # An image the page could not show safely or that does not fit is left out, as the
    # result itself is still worth judging.
    image = document.image if len(document.image) <= IMAGE_LIMIT else ""
    image = image_source(image)
    return document.doc_id, document.name[:NAME_LIMIT], image


def _status_of(outcome: KeywordOutcome) -> tuple[list[tuple[str, str, str, dict]], str, bool]:
    """The snapshots to store, the execution message and whether the keyword failed."""
    run = outcome.run
    if run.failed:
        return [], run.message or "failed", True
    rows = []
    for document in run.documents:
        fields = snapshot_fields(document)
        if isinstance(fields, str):
            return [], fields, True
        rows.append((*fields, dict(document.attributes)))
    return rows, ("" if rows else "no results"), False


def store_outcomes(*, evaluation: Evaluation, outcomes: list[KeywordOutcome]) -> int:
    """Store a batch of keyword runs; returns the number of keywords stored.

    A keyword already run (by a runner whose lease expired under it) is left alone.
    """

    now = timezone.now()
    with transaction.atomic():
        fresh = set(
            Keyword.objects.filter(
                id__in=[outcome.keyword_id for outcome in outcomes], executed_at__isnull=True
            )
            .select_for_update()
            .values_list("id", flat=True)
        )
        outcomes = [outcome for outcome in outcomes if outcome.keyword_id in fresh]
        if not outcomes:
            return 0
        positions = dict(Keyword.objects.filter(id__in=fresh).values_list("id", "position"))
        results: list[ResultRow] = []
        columns: dict[str, list[object]] = {
            "http_status": [],
            "execution_message": [],
            "failed": [],
            "executed_at": [],
            "execution_ms": [],
            "attempts": [],
        }
        for outcome in outcomes:
            rows, message, failed = _status_of(outcome)
            results += [
                ResultRow(
                    outcome.keyword_id,
                    positions[outcome.keyword_id],
                    rank,
                    doc_id,
                    name,
                    image,
                    attributes,
                )
                for rank, (doc_id, name, image, attributes) in enumerate(rows, start=1)
            ]
            columns["http_status"].append(outcome.run.result.status)
            columns["execution_message"].append(message)
            columns["failed"].append(failed)
            columns["executed_at"].append(now)
            columns["execution_ms"].append(outcome.run.result.elapsed_ms)
            columns["attempts"].append(outcome.attempts)
        bulk_set(Keyword, [outcome.keyword_id for outcome in outcomes], columns)
        added = insert_results(
            evaluation_id=evaluation.id, strategy=evaluation.strategy, rows=results
        )
        add_to_total_slots(evaluation_id=evaluation.id, added=added)
    return len(outcomes)


# --- the runner ------------------------------------------------------------------------


class _Runner:
    """Runs the keywords on a thread pool and stores results from this thread."""

    def __init__(self, evaluation: Evaluation, keywords: list[tuple[int, str]]) -> None:

        assert evaluation.search_model is not None
        self.evaluation = evaluation
        self.call = model_call(evaluation.search_model)
        self.pending = deque(keywords)
        self.concurrency = settings.SEARCH_CONCURRENCY_PER_ENDPOINT
        self.lookahead = self.concurrency * LOOKAHEAD_ROUNDS
        self.paused = False

    def _one(self, keyword_id: int, text: str) -> KeywordOutcome:
        run, tries = run_with_retries(
            self.call.run,
            text,
            attempts=settings.SEARCH_ATTEMPTS,
            backoff_s=settings.SEARCH_RETRY_BACKOFF_SECONDS,
        )
        return KeywordOutcome(keyword_id, run, tries)

    def run(self) -> bool:
        """Run until every keyword is stored (True) or the evaluation is paused (False)."""
        in_flight: set[Future[KeywordOutcome]] = set()
        ready: list[KeywordOutcome] = []
        last_store = last_check = time.monotonic()
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="search") as pool:
            while in_flight or (self.pending and not self.paused):
                # Queue a few rounds ahead so the threads keep calling while this thread
                # stores a batch, but not the whole list: on a pause the calls not yet
                # started are cancelled and only those under way are waited for.
                while self.pending and not self.paused and len(in_flight) < self.lookahead:
                    keyword_id, text = self.pending.popleft()
                    in_flight.add(pool.submit(self._one, keyword_id, text))
                done, in_flight = wait(in_flight, timeout=0.25, return_when=FIRST_COMPLETED)
                ready += [future.result() for future in done if not future.cancelled()]
                now = time.monotonic()
                if ready and (
                    len(ready) >= STORE_EVERY_KEYWORDS
                    or now - last_store >= STORE_EVERY_SECONDS
                    or not in_flight
                ):
                    store_outcomes(evaluation=self.evaluation, outcomes=ready)
                    ready, last_store = [], now
                if now - last_check >= CHECK_EVERY_SECONDS:
                    last_check = now
                    if not self.paused and not _renew_lease(self.evaluation.id):
                        self.paused = True
                        for future in in_flight:
                            future.cancel()  # only those not yet started
        if ready:
            store_outcomes(evaluation=self.evaluation, outcomes=ready)
        return not self.paused and not self.pending


def keywords_to_run(evaluation_id: int) -> list[tuple[int, str]]:
    return list(
        Keyword.objects.filter(evaluation_id=evaluation_id, executed_at__isnull=True)
        .order_by("position")
        .values_list("id", "text")
    )


def evaluation_fetch(*, evaluation_id: int) -> str:
    """The task's work. Returns what happened: opened, paused, busy (another runner has
    the evaluation), endpoint busy (another evaluation is calling the endpoint) or gone."""

    if not _take_lease(evaluation_id):
        return "busy"
    try:
        evaluation = (
            Evaluation.objects.select_related("search_model__endpoint")
            .filter(id=evaluation_id)
            .first()
        )
        if evaluation is None or evaluation.search_model is None:
            # Nothing to run (its search model was removed): it waits, pending, for a lead.
            with contextlib.suppress(InvalidState):
                move(evaluation_id=evaluation_id, event=Event.PAUSE)
            return "gone"
        with endpoint_runner_lock(evaluation.search_model.endpoint_id) as runs_endpoint:
            if not runs_endpoint:
                # Another evaluation is calling this endpoint: try again later.
                return "endpoint busy"
            finished = _Runner(evaluation, keywords_to_run(evaluation_id)).run()
        if not finished:
            return "paused"
        try:
            evaluation_open(evaluation=evaluation, after_fetch=True)
        except InvalidState:
            return "paused"  # a lead paused it (or removed it) while its keywords ran
        return "opened"
    finally:
        _free_lease(evaluation_id)


def stalled_fetches() -> list[int]:
    """Evaluations fetching with no live runner: never picked up, or the runner died."""
    now = timezone.now()
    return list(
        Evaluation.objects.filter(fetching=True, status=Status.PENDING)
        .filter(Q(fetch_lease_until__isnull=True) | Q(fetch_lease_until__lt=now))
        .values_list("id", flat=True)
    )


def fetched_count(evaluation: Evaluation) -> tuple[int, int]:
    """(keywords run, keywords) for the start's progress line."""
    keywords = Keyword.objects.filter(evaluation=evaluation)
    return keywords.filter(executed_at__isnull=False).count(), keywords.count()
