"""A not-urgent run (JudgeRun.urgent False): its calls go through the provider's batch
interface (batch_calls.py), answered within 24 hours at half the price, instead of
lanes of synchronous calls (runs.py). docs/ai-judges.md, "Not urgent: batch pricing".

batch_advance, called when the run starts or resumes and every minute by the sweep
(tasks.py), does what is due:

1. keeps the results of the run's batches held for the judge (their holds renewed, so
   nobody takes them while the provider works) and polls each batch out at the provider,
   at most every POLL_EVERY; one that ended is applied, once (batch_apply);
2. while the run runs and fewer than BATCHES_OUT of its batches are out, sends the next:
   the calls of its last batches to ask again, then new claims (claims.py), up to
   MOST_REQUESTS calls; the cache's hits graded at once (runs.calls_from_cache); the rest
   reserved on the run's budget at their most at the batch price (budgets.py) and sent
   as one batch.

Applying: the batch's row moves from out to applied by a conditional UPDATE, the first
statement of the transaction that writes its results through a step's writes
(runs.answers_write: the call log, the grade writer, the cache, failures with why); a
second poll, or a worker taking over from one that died after fetching the results,
finds it applied and writes nothing. Each call costs what it spent at the judge's prices
times BATCH_PRICE_FACTOR, and the batch's reservation is replaced by that. A call that
failed in a way that may pass is asked again in the next batch, up to RETRIES tries,
then listed as failed with why; a call the provider never ran (the batch expired or was
cancelled, or could not be polled for RESERVED_FOR) gives its results back, to be claimed
again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from apps import engine
from apps.evaluations.models import FeedbackSlot, Status

from .asking import Asked, call_cost, most_spent, outcome_read
from .batch_calls import (
    BATCH_PRICE_FACTOR,
    BatchLine,
    BatchResults,
    batch_cancel,
    batch_poll,
    batch_results,
    batch_submit,
    request_line,
)
from .budgets import Most, Reservation, has_budget, reserve, settlement
from .calibration import RETRIES
from .claims import claim, give_back, wait_for_held_work
from .models import (
    BatchState,
    Judge,
    JudgeBatch,
    JudgeBatchRequest,
    JudgeRun,
    RunRole,
    RunStatus,
)
from .prompting import answer_schema, images_in, messages_for
from .providers import CallOutcome
from .runs import (
    MAX_BACKOFF_S,
    CallsToMake,
    announce_failed,
    answers_write,
    calls_from_cache,
    run_settle,
    spent_counters,
)
from .services import model_settings
from .sql import Claimed

MOST_REQUESTS = 500  # calls in one batch
BATCHES_OUT = 4  # a run's batches at the provider at once
# What one batch sends at most (OpenAI takes a file of up to 200 MB, Anthropic a batch
# of up to 256 MB): a judge shown images reaches it long before MOST_REQUESTS.
MOST_BATCH_BYTES = 50_000_000
POLL_EVERY = timedelta(seconds=30)
# A batch still being sent after this was left by a worker that died sending it.
SENDING_AT_MOST = timedelta(minutes=10)
# How long a batch's budget reservation counts: the providers' 24 hours, and an hour.
RESERVED_FOR = timedelta(hours=25)
OPEN = (BatchState.SENDING, BatchState.OUT)
MORE = "more"
HOLDS_PER_UPDATE = 1_000


def batch_advance(*, run_id: int, poll_every: timedelta = POLL_EVERY) -> str:
    """Poll the run's batches and apply those that ended, then send what is left to
    send (the module's docstring); what it came to, in words."""
    run = _run(run_id)
    now = timezone.now()
    _keep_held(run, now)
    for batch in JudgeBatch.objects.filter(run=run, state=BatchState.OUT):
        if batch.polled_at is None or batch.polled_at <= now - poll_every:
            _poll(run, batch)
    for batch in JudgeBatch.objects.filter(
        run=run, state=BatchState.SENDING, created_at__lt=now - SENDING_AT_MOST
    ):
        _unsend(run, batch, "its worker stopped while sending it; its results are claimed again")
    said = MORE
    for _ in range(BATCHES_OUT + 1):
        said = _send_next(_run(run_id))
        if said != MORE:
            break
    return said


def runs_to_advance() -> list[int]:
    """The runs batch_advance has work for: not-urgent runs running, and every run with
    a batch out or calls to ask again."""
    open_batches = JudgeBatch.objects.filter(state__in=OPEN).values("run_id")
    asked_again = JudgeBatchRequest.objects.filter(again=True).values("batch__run_id")
    return list(
        JudgeRun.objects.filter(
            Q(status=RunStatus.RUNNING, urgent=False, role=RunRole.GRADES)
            | Q(id__in=open_batches)
            | Q(id__in=asked_again)
        ).values_list("id", flat=True)
    )


def batches_cancel(*, run: JudgeRun) -> None:
    """Ask the provider to cancel the run's batches out, and forget the calls it was to
    ask again (their results given back). What a cancelled batch ran is still applied
    when the provider ends it: its cost is recorded, its grades are not (the caller gave
    the results back)."""
    _release_again(run)
    settings = model_settings(run.judge)
    for batch in JudgeBatch.objects.filter(run=run, state=BatchState.OUT):
        failure = batch_cancel(settings, batch.provider_batch_id)
        note = "cancelled by a lead"
        if failure is not None:
            kind = failure.failure.value if failure.failure else ""
            note = f"the provider did not cancel it: {kind}: {failure.error}"
        JudgeBatch.objects.filter(id=batch.id).update(note=note[:2000])


# --- Polling and applying ----------------------------------------------------------------


def _poll(run: JudgeRun, batch: JudgeBatch) -> None:
    settings = model_settings(run.judge)
    polled = batch_poll(settings, batch.provider_batch_id)
    now = timezone.now()
    if polled.failure is not None:
        _note(batch, now, "the last poll failed", polled.failure)
        if batch.submitted_at and batch.submitted_at < now - RESERVED_FOR:
            # Past the provider's window and still not seen to end (a batch it no longer
            # knows, a key revoked): its results go back, to be claimed again.
            batch_apply(batch_id=batch.id, results=BatchResults({}))
        return
    JudgeBatch.objects.filter(id=batch.id).update(polled_at=now, provider_status=polled.status)
    if not polled.ended:
        return
    if polled.refused:
        # Nothing ran: every call's results go back, and the lead is told why.
        if batch_apply(batch_id=batch.id, results=BatchResults({})):
            why = f"paused: {polled.refused}"
            with transaction.atomic():
                if run_settle(run, RunStatus.PAUSED, why):
                    announce_failed(run, why)
        return
    results = batch_results(settings, batch.provider_batch_id, polled, batch.requests)
    if results.failure is not None and results.failure.retryable:
        _note(batch, now, "its results could not be read yet", results.failure)
        return
    batch_apply(batch_id=batch.id, results=results)


def _note(batch: JudgeBatch, now: datetime, what: str, failure: CallOutcome) -> None:
    kind = failure.failure.value if failure.failure else ""
    JudgeBatch.objects.filter(id=batch.id).update(
        polled_at=now, note=f"{what}: {kind}: {failure.error}"[:2000]
    )


def batch_apply(*, batch_id: int, results: BatchResults) -> bool:
    """Write an ended batch's results, once (the module's docstring); whether this call
    did. `results.failure` (answers that could not be read, for good) fails every call."""
    now = timezone.now()
    with transaction.atomic():
        # The first statement: a second applier waits here for this one's commit, then
        # finds the batch applied.
        taken = JudgeBatch.objects.filter(id=batch_id, state=BatchState.OUT).update(
            state=BatchState.APPLIED, applied_at=now
        )
        if not taken:
            return False
        batch = JudgeBatch.objects.select_related("run__judge__user", "run__evaluation").get(
            id=batch_id
        )
        run = batch.run
        waited = now - (batch.submitted_at or now)
        latency_ms = min(round(waited.total_seconds() * 1000), 2**31 - 1)
        scale = run.evaluation.grading_scale
        held: list[dict[str, Claimed]] = []
        asked: list[Asked] = []
        keys: dict[int, str] = {}
        again: set[int] = set()
        ask_again: list[int] = []
        back: list[Claimed] = []
        for request in batch.calls.all():
            slots = {rid: Claimed(**shown) for rid, shown in request.slots.items()}
            keys.update({int(slot_id): key for slot_id, key in request.keys.items()})
            outcome = results.outcomes.get(request.custom_id, results.failure)
            if outcome is None:  # the provider did not run it
                back += slots.values()
                continue
            outcome = replace(outcome, latency_ms=latency_ms)
            if outcome.retryable:
                if run.status == RunStatus.RUNNING and request.tries < RETRIES:
                    again.add(len(asked))
                    ask_again.append(request.id)
                elif run.status != RunStatus.RUNNING:
                    again.add(len(asked))
                    back += slots.values()
            held.append(slots)
            asked.append(
                _read(run.judge, batch.system_prompt, request.user_prompt, slots, scale, outcome)
            )
        written = answers_write(run, held, asked, keys, again=again)
        JudgeBatchRequest.objects.filter(id__in=ask_again).update(again=True)
        give_back(run, back)
        JudgeRun.objects.filter(id=run.id).update(
            **spent_counters(asked, written.graded, written.failed),
            **settlement(_reservation_of(batch)),
        )
    return True


def _read(
    judge: Judge,
    system: str,
    user: str,
    slots: dict[str, Claimed],
    scale: engine.Scale,
    outcome: CallOutcome,
) -> Asked:
    """A call's outcome read as a synchronous call's is (asking.ask), at the batch price."""
    cost = call_cost(judge, outcome) * BATCH_PRICE_FACTOR
    return outcome_read(judge, system, user, list(slots), scale, outcome, cost)


def _reservation_of(batch: JudgeBatch) -> Reservation:
    return Reservation(
        calls=batch.reserved_calls,
        tokens=batch.reserved_tokens,
        cost=batch.reserved_cost,
        on_row=batch.reserved_on_row,
    )


# --- Sending ------------------------------------------------------------------------------


def _send_next(run: JudgeRun) -> str:
    """Send the run's next batch when one is due; MORE when another may follow."""
    if run.status != RunStatus.RUNNING or run.urgent:
        # A run made urgent again grades through its lanes; its batches out still end.
        _release_again(run)
        return f"the run is {'urgent' if run.urgent else run.get_status_display().lower()}"
    evaluation = run.evaluation
    if evaluation.status == Status.FINISHED or evaluation.archived:
        run_settle(run, RunStatus.FINISHED, "the evaluation is finished")
        return "finished: the evaluation is finished"
    if evaluation.status != Status.ACTIVE:
        return "waiting: the evaluation is not open for grading"
    if run.wait_until and run.wait_until > timezone.now():
        return f"waiting: {run.note}"
    out = JudgeBatch.objects.filter(run=run, state__in=OPEN).count()
    if out >= BATCHES_OUT:
        return "waiting: its batches are out"
    carried = _take_again(run)
    room = MOST_REQUESTS - len(carried)
    claimed = claim(run, run.judge.results_per_call, room) if room > 0 else []
    if not carried and not claimed:
        if out:
            return "waiting: its batches are out"
        if wait_for_held_work(run) is not None:
            return "waiting: the results left are held; they may come free"
        run_settle(run, RunStatus.FINISHED, "nothing left for the judge")
        return "finished: nothing left for the judge"
    tries = {slot.id: count for slots, count in carried for slot in slots}
    to_make = calls_from_cache(run, [slots for slots, _ in carried] + claimed)
    if not to_make.to_ask:
        return MORE
    lines = _within_size(run, to_make)
    to_make = replace(to_make, to_ask=to_make.to_ask[: len(lines)])
    reservation = _within_budget(run, to_make)
    if not reservation.asks:
        if reservation.wait is not None or out:
            return "waiting: batches out may leave room in the budget"
        run_settle(run, RunStatus.BUDGET_REACHED, reservation.why)
        return f"stopped: {reservation.why}"
    to_make = replace(to_make, to_ask=to_make.to_ask[: reservation.asks])
    batch = _store(run, to_make, lines[: reservation.asks], tries, reservation)
    return _send(run, batch, lines[: reservation.asks])


def _take_again(run: JudgeRun) -> list[tuple[list[Claimed], int]]:
    """The calls of the run's batches to ask again, taken (each by one sender), with how
    many times each was tried."""
    with transaction.atomic():
        # A write first: the run's row (PostgreSQL) or the database (SQLite) is held until
        # commit, so two senders never take the same calls.
        JudgeRun.objects.filter(id=run.id).update(updated_at=timezone.now())
        rows = list(
            JudgeBatchRequest.objects.filter(batch__run=run, again=True).values_list(
                "id", "slots", "tries"
            )
        )
        JudgeBatchRequest.objects.filter(id__in=[row[0] for row in rows]).update(again=False)
    return [([Claimed(**shown) for shown in slots.values()], tries) for _, slots, tries in rows]


def _release_again(run: JudgeRun) -> None:
    """Forget the calls the run was to ask again, their results given back."""
    for slots, _ in _take_again(run):
        give_back(run, slots)


def _within_size(run: JudgeRun, to_make: CallsToMake) -> list[dict[str, Any]]:
    """The first calls' batch lines, as many as MOST_BATCH_BYTES takes (one at least);
    the results of the calls left out are given back."""
    settings = model_settings(run.judge)
    lines: list[dict[str, Any]] = []
    size = 0
    for number, call in enumerate(to_make.to_ask, start=1):
        system, user = messages_for(call.task, to_make.prompt)
        schema = answer_schema(call.task)
        line = BatchLine(f"call-{number}", system, user, schema, images_in(call.task))
        request = request_line(settings, line)
        size += len(json.dumps(request))
        if lines and size > MOST_BATCH_BYTES:
            break
        lines.append(request)
    left_out = to_make.to_ask[len(lines) :]
    give_back(run, [slot for call in left_out for slot in call.slots.values()])
    return lines


def _within_budget(run: JudgeRun, to_make: CallsToMake) -> Reservation:
    """Reserve the first calls the run's budgets can pay at their most, at the batch
    price (budgets.py), for as long as a batch may be out; the results of the others are
    given back."""
    judge = run.judge
    if not has_budget(judge):
        return Reservation(asks=len(to_make.to_ask), calls=len(to_make.to_ask))
    mosts = []
    for call in to_make.to_ask:
        most = most_spent(judge, to_make.prompt, call.task)
        mosts.append(Most(most.tokens, most.cost * BATCH_PRICE_FACTOR))
    reservation = reserve(run, mosts)
    if reservation.on_row:
        now = timezone.now()
        JudgeRun.objects.filter(id=run.id).update(
            reserved_until=Greatest(
                Coalesce(F("reserved_until"), Value(now)), Value(now + RESERVED_FOR)
            )
        )
    cut = to_make.to_ask[reservation.asks :]
    give_back(run, [slot for call in cut for slot in call.slots.values()])
    return reservation


def _store(
    run: JudgeRun,
    to_make: CallsToMake,
    lines: list[dict[str, Any]],
    tries: dict[int, int],
    reservation: Reservation,
) -> JudgeBatch:
    """The batch as it is sent: what each custom_id stands for, and its reservation."""
    system, _ = messages_for(to_make.to_ask[0].task, to_make.prompt)
    with transaction.atomic():
        batch = JudgeBatch.objects.create(
            run=run,
            prompt_version=run.prompt_version,
            system_prompt=system,
            requests=len(lines),
            reserved_calls=reservation.calls,
            reserved_tokens=reservation.tokens,
            reserved_cost=reservation.cost,
            reserved_on_row=reservation.on_row,
        )
        requests = []
        for call, line in zip(to_make.to_ask, lines, strict=True):
            _, user = messages_for(call.task, to_make.prompt)
            slots = call.slots.values()
            requests.append(
                JudgeBatchRequest(
                    batch=batch,
                    custom_id=line["custom_id"],
                    slots={rid: asdict(slot) for rid, slot in call.slots.items()},
                    keys={str(slot.id): to_make.keys[slot.id] for slot in slots},
                    user_prompt=user,
                    tries=max(tries.get(slot.id, 0) for slot in slots) + 1,
                )
            )
        JudgeBatchRequest.objects.bulk_create(requests)
    return batch


def _send(run: JudgeRun, batch: JudgeBatch, lines: list[dict[str, Any]]) -> str:
    """Send the stored batch; MORE once the provider took it. A failure that may pass
    makes the run wait (doubling up to MAX_BACKOFF_S, or Retry-After); another pauses it
    with the provider's message. Either way the batch's results are given back."""
    settings = model_settings(run.judge)
    sent = batch_submit(settings, lines)
    now = timezone.now()
    if sent.failure is None:
        taken = JudgeBatch.objects.filter(id=batch.id, state=BatchState.SENDING).update(
            state=BatchState.OUT,
            provider_batch_id=sent.batch_id,
            input_file_id=sent.input_file_id,
            provider_status=sent.status,
            submitted_at=now,
            polled_at=now,
        )
        JudgeRun.objects.filter(id=run.id).update(failures_in_a_row=0)
        stopped = not JudgeRun.objects.filter(id=run.id, status=RunStatus.RUNNING).exists()
        if not taken or stopped:
            # Given up meanwhile (SENDING_AT_MOST), or the run was cancelled or paused
            # while it was sent: the provider need not run it.
            batch_cancel(settings, sent.batch_id)
            JudgeBatch.objects.filter(id=batch.id).update(note="cancelled as it was sent")
        return MORE if taken and not stopped else "waiting: the run stopped"
    failure = sent.failure
    kind = failure.failure.value if failure.failure else ""
    why = f"{kind}: {failure.error}"
    _unsend(run, batch, f"not sent: {why}")
    if failure.retryable:
        tries = run.failures_in_a_row + 1
        told = failure.retry_after_s
        wait = told if told is not None else min(2.0 ** (tries - 1), MAX_BACKOFF_S)
        JudgeRun.objects.filter(id=run.id).update(
            failures_in_a_row=tries, wait_until=now + timedelta(seconds=wait), note=why[:500]
        )
        return f"waiting {wait:.0f} s: {why}"
    paused = f"paused: {why}"
    with transaction.atomic():
        if run_settle(run, RunStatus.PAUSED, paused):
            announce_failed(run, paused)
    return f"stopped: {paused}"


def _unsend(run: JudgeRun, batch: JudgeBatch, why: str) -> bool:
    """A batch that is not at the provider: its results given back, its reservation
    released; whether this call did it."""
    with transaction.atomic():
        moved = JudgeBatch.objects.filter(id=batch.id, state=BatchState.SENDING).update(
            state=BatchState.NOT_SENT, note=why[:2000]
        )
        if not moved:
            return False
        slots = [
            Claimed(**shown) for request in batch.calls.all() for shown in request.slots.values()
        ]
        give_back(run, slots)
        JudgeRun.objects.filter(id=run.id).update(**settlement(_reservation_of(batch)))
    return True


def _keep_held(run: JudgeRun, now: datetime) -> None:
    """Renew the judge's holds of its batches' results (and of the calls to ask again)
    that nobody else took meanwhile."""
    keys = JudgeBatchRequest.objects.filter(
        Q(batch__state__in=OPEN) | Q(again=True), batch__run=run
    ).values_list("keys", flat=True)
    slot_ids = [int(slot_id) for each in keys for slot_id in each]
    for start in range(0, len(slot_ids), HOLDS_PER_UPDATE):
        FeedbackSlot.objects.filter(
            id__in=slot_ids[start : start + HOLDS_PER_UPDATE],
            grader_id=run.judge.user_id,
            grade__isnull=True,
        ).update(assigned_at=now)


def _run(run_id: int) -> JudgeRun:
    return JudgeRun.objects.select_related("judge__user", "evaluation", "prompt").get(id=run_id)
