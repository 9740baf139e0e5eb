"""Running a try's queries through its draft, on a Celery worker.

One runner at a time holds the try's lease (a conditional UPDATE); a runner that dies
lets it lapse and the sweep (tasks.resume_stalled_tries) starts another, which runs only
the queries not yet run. The calls run on SEARCH_CONCURRENCY_PER_ENDPOINT threads, again
after a transport error or a 5xx, as an evaluation's keywords do; this thread does every
database write, storing what came back every half second so the page shows progress.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.endpoints.model_calls import ModelCall, merged_headers
from apps.lifecycle.fetching import run_with_retries, snapshot_fields
from apps.search import InvalidMapper, KeywordRun, Mapper

from .drafting import ModelSettings, draft_template
from .models import Try, TryQuery, TryState

LEASE_SECONDS = 60
STORE_EVERY_SECONDS = 0.5


def model_settings(attempt: Try) -> ModelSettings:
    model, endpoint = attempt.search_model, attempt.search_model.endpoint
    return ModelSettings(
        method=endpoint.method,
        url=endpoint.url,
        params=[(name, value) for name, value in model.params],
        headers=merged_headers(endpoint.headers, model.headers),
        body=model.body,
        body_type=model.body_type,
    )


def try_call(attempt: Try) -> ModelCall:
    """The draft's call; raises InvalidMapper when the endpoint's mapper is broken."""
    endpoint = attempt.search_model.endpoint
    template = draft_template(model_settings(attempt), attempt.draft())
    return ModelCall(template, Mapper.compile(endpoint.mapper), endpoint.timeout_seconds)


def try_run(*, try_id: int) -> str:
    """Run the try's queries not yet run; what happened, in a word or two."""
    if not _take_lease(try_id):
        return "not runnable"
    attempt = Try.objects.select_related("search_model__endpoint").get(id=try_id)
    try:
        call = try_call(attempt)
    except InvalidMapper as error:
        _finish(try_id, TryState.FAILED, f"the endpoint's response mapper is broken: {error}")
        return "failed"
    pending = list(
        TryQuery.objects.filter(attempt_id=try_id, ran_at__isnull=True)
        .order_by("position")
        .values_list("id", "text")
    )
    if not _run_queries(attempt, call, pending):
        return "lease lost"
    _finish(try_id, TryState.DONE, "")
    return "done"


def _run_queries(attempt: Try, call: ModelCall, pending: list[tuple[int, str]]) -> bool:
    def one(query_id: int, text: str) -> tuple[int, KeywordRun]:
        run, _tries = run_with_retries(
            call.run,
            text,
            attempts=settings.SEARCH_ATTEMPTS,
            backoff_s=settings.SEARCH_RETRY_BACKOFF_SECONDS,
        )
        return query_id, run

    ready: list[tuple[int, KeywordRun]] = []
    last_store = time.monotonic()
    with ThreadPoolExecutor(settings.SEARCH_CONCURRENCY_PER_ENDPOINT, "try") as pool:
        in_flight: set[Future[tuple[int, KeywordRun]]] = {
            pool.submit(one, query_id, text) for query_id, text in pending
        }
        while in_flight:
            done, in_flight = wait(in_flight, timeout=0.25, return_when=FIRST_COMPLETED)
            ready += [future.result() for future in done]
            if ready and (not in_flight or time.monotonic() - last_store >= STORE_EVERY_SECONDS):
                if not _store(attempt, ready):
                    for future in in_flight:
                        future.cancel()
                    return False
                ready, last_store = [], time.monotonic()
    return True


def _documents(run: KeywordRun, depth: int) -> tuple[list[dict[str, object]], str]:
    """The first `depth` distinct documents, fitted as an evaluation stores them, so one
    sent to people carries the same content (and fingerprint) as the search gave."""
    if run.failed:
        return [], run.message or "failed"
    documents: list[dict[str, object]] = []
    seen: set[str] = set()
    for document in run.documents:
        fields = snapshot_fields(document)
        if isinstance(fields, str):
            return [], fields
        doc_id, name, image = fields
        if doc_id not in seen:  # a repeat keeps its first (best) place
            seen.add(doc_id)
            documents.append(
                {
                    "doc_id": doc_id,
                    "name": name,
                    "image": image,
                    "attributes": dict(document.attributes),
                }
            )
        if len(documents) == depth:
            break
    return documents, ""


def _store(attempt: Try, outcomes: list[tuple[int, KeywordRun]]) -> bool:
    """Store the outcomes and renew the lease, in one transaction; False when another
    runner holds the try now (its outcomes are dropped: the other runner has them)."""
    now = timezone.now()
    rows = []
    for query_id, run in outcomes:
        documents, error = _documents(run, attempt.depth)
        rows.append(TryQuery(id=query_id, documents=documents, error=error, ran_at=now))
    with transaction.atomic():
        if not _renew_lease(attempt.id):
            return False
        TryQuery.objects.bulk_update(rows, ["documents", "error", "ran_at"])
        Try.objects.filter(id=attempt.id).update(queries_done=F("queries_done") + len(rows))
    return True


def _take_lease(try_id: int) -> bool:
    now = timezone.now()
    return bool(
        Try.objects.filter(id=try_id, state__in=[TryState.QUEUED, TryState.RUNNING])
        .filter(Q(run_lease_until__isnull=True) | Q(run_lease_until__lt=now))
        .update(state=TryState.RUNNING, run_lease_until=now + timedelta(seconds=LEASE_SECONDS))
    )


def _renew_lease(try_id: int) -> bool:
    now = timezone.now()
    return bool(
        Try.objects.filter(id=try_id, state=TryState.RUNNING, run_lease_until__gte=now).update(
            run_lease_until=now + timedelta(seconds=LEASE_SECONDS)
        )
    )


def _finish(try_id: int, state: str, error: str) -> None:
    Try.objects.filter(id=try_id).update(
        state=state, error=error, finished_at=timezone.now(), run_lease_until=None
    )


def stalled_tries() -> list[int]:
    """Tries left queued or running with no runner: a lost task, a worker that died."""
    now = timezone.now()
    return list(
        Try.objects.filter(state__in=[TryState.QUEUED, TryState.RUNNING])
        .filter(Q(run_lease_until__isnull=True) | Q(run_lease_until__lt=now))
        .filter(created_at__lt=now - timedelta(seconds=10))
        .values_list("id", flat=True)[:100]
    )
