"""One step of a judge's run on an evaluation: claim results (claims.py), grade from the
team's cache or ask the model (prompting.py, providers.py), write the grades through the
grade writer as the judge's user, log the calls and settle their cost. The lead's
controls are controls.py, the lanes that make the steps tasks.py; docs/ai-judges.md,
"How a run works", tells the whole of it.

A step comes back as a Step: go on, wait (a rate limit, an outage: the slots are given
back and the backoff doubles up to MAX_BACKOFF_S) or stop (a wrong key or model pauses
the run). A grade is written only while the judge holds its slot, so none twice.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from apps.core import live
from apps.core.bulk import bulk_upsert
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation, Status
from apps.judging.judgements import Giver, HeldJudgement, slots_judge_held
from apps.judging.sources import JudgeMade, judge_source
from apps.notifications.events import announce
from apps.notifications.models import Event

from .answers import Judged
from .asking import Asked, ask, judgement_key, most_spent
from .budgets import Reservation, has_budget, reserve, settlement
from .call_log import log_calls
from .claims import IDLE_WAIT_S, claim, give_back, give_back_held, wait_for_held_work
from .images import result_shown
from .lifecycle_guard import work_ended
from .models import (
    CachedJudgement,
    Judge,
    JudgeCall,
    JudgeFailure,
    JudgeGrade,
    JudgeRun,
    RunStatus,
)
from .prompting import JudgeTask, Prompt
from .prompts import pinned_prompt
from .providers import CallOutcome, Failure, endpoint
from .sql import Claimed

MAX_BACKOFF_S = 300.0
# A judge misconfigured (a wrong key or model, a refused address) would fail every call
# alike: its run pauses with the reason instead of listing every result as failed.
PAUSING_FAILURES = frozenset({Failure.REJECTED, Failure.REFUSED})


@dataclass(frozen=True)
class Step:
    """What to do after a step: "go" on, "wait" `seconds`, or "stop" (`why`)."""

    action: str
    seconds: float = 0.0
    why: str = ""


GO = Step("go")


# --- One step ------------------------------------------------------------------------


def run_step(*, run_id: int, calls: int = 1) -> Step:
    """Up to `calls` calls' worth of judging for the run, the calls made at once (see
    the module's docstring)."""
    begun = _begin(run_id, calls, in_threads=calls > 1)
    return begun if isinstance(begun, Step) else begun.store()


def run_steps(*, run_id: int, calls: int, go_on: Callable[[], bool]) -> Step:
    """Steps one after another while go_on() says so, each step's calls in flight while
    the step before is stored (a lane's CPU and the database's commits then overlap the
    model's latency instead of adding to it); the step that ended them (GO when go_on
    said stop). At most `calls` calls are in flight: a step's calls are answered before
    it is stored. Steps begun before one said wait or stop are stored, never dropped."""
    in_flight: _Begun | None = None
    outcome = GO
    first = True
    while True:
        begun: _Begun | None = None
        if outcome == GO and go_on():
            started = _begin(run_id, calls, in_threads=True, free_expired=first)
            first = False
            if isinstance(started, Step) and started != GO and in_flight is not None:
                # What held it up may be the step in flight (nothing left to claim but
                # its own results): store that one first, then look again.
                outcome, in_flight = in_flight.store(), None
                continue
            if isinstance(started, Step):
                outcome = started  # GO: all came from the cache
            else:
                begun = started
        if in_flight is not None:
            stored = in_flight.store()
            if outcome == GO:
                outcome = stored
        in_flight = begun
        if in_flight is None and (outcome != GO or not go_on()):
            return outcome


def _begin(
    run_id: int, calls: int, *, in_threads: bool, free_expired: bool = True
) -> Step | _Begun:
    """A step up to its calls: the run's checks, the claim, the cache; then the calls,
    made from threads (or one made here, `in_threads` False). What stops or delays it
    comes back as a Step. `free_expired`: free the judge's own holds that ran out first
    (they are freed anyway when nothing else is left to claim)."""
    # The judge's user comes along: every call's grades are written as it (Giver.grader).
    run = JudgeRun.objects.select_related("judge__user", "evaluation", "prompt").get(id=run_id)
    if run.status != RunStatus.RUNNING:
        return Step("stop", why=f"the run is {run.get_status_display().lower()}")
    evaluation, judge = run.evaluation, run.judge
    if evaluation.status == Status.FINISHED or evaluation.archived:
        run_settle(run, RunStatus.FINISHED, "the evaluation is finished")
        return Step("stop", why="the evaluation is finished")
    if evaluation.status != Status.ACTIVE:
        return Step("wait", IDLE_WAIT_S, "the evaluation is not open for grading")
    if run.wait_until and run.wait_until > timezone.now():
        return Step("wait", (run.wait_until - timezone.now()).total_seconds(), run.note)
    batches = claim(run, judge.results_per_call, max(1, calls), free_expired)
    if not batches and not free_expired:
        batches = claim(run, judge.results_per_call, max(1, calls), True)
    if not batches:
        wait = wait_for_held_work(run)
        if wait is not None:
            return Step("wait", wait, "the results left are held; they may come free")
        run_settle(run, RunStatus.FINISHED, "nothing left for the judge")
        return Step("stop", why="nothing left for the judge")
    to_make = calls_from_cache(run, batches)
    if not to_make.to_ask:
        return GO
    to_make, reservation = _within_budget(run, to_make)
    if not to_make.to_ask:
        if reservation.wait is not None:
            return Step("wait", reservation.wait, "calls in flight may leave room in the budget")
        run_settle(run, RunStatus.BUDGET_REACHED, reservation.why)
        return Step("stop", why=reservation.why)
    if not in_threads and len(to_make.to_ask) == 1:
        made: Future[Asked] = Future()
        made.set_result(ask(judge, to_make.prompt, to_make.to_ask[0].task))
        return _Begun(run, to_make, [made], reservation)
    pool = _threads()
    answers = [pool.submit(ask, judge, to_make.prompt, call.task) for call in to_make.to_ask]
    return _Begun(run, to_make, answers, reservation)


def _within_budget(run: JudgeRun, calls: CallsToMake) -> tuple[CallsToMake, Reservation]:
    """The step cut to the calls its run's budgets can pay, reserved (budgets.py); the
    results of the calls cut are given back."""
    if not has_budget(run.judge):
        return calls, Reservation(asks=len(calls.to_ask))
    mosts = [most_spent(run.judge, calls.prompt, call.task) for call in calls.to_ask]
    reservation = reserve(run, mosts)
    cut = calls.to_ask[reservation.asks :]
    give_back(run, [slot for call in cut for slot in call.slots.values()])
    return replace(calls, to_ask=calls.to_ask[: reservation.asks]), reservation


@dataclass(frozen=True)
class CallToMake:
    """One call's results: the slots by the ids the prompt gives them, and the task."""

    slots: dict[str, Claimed]
    task: JudgeTask


@dataclass(frozen=True)
class _Begun:
    """A step whose calls are in flight."""

    run: JudgeRun
    calls: CallsToMake
    answers: list[Future[Asked]]
    reservation: Reservation

    def store(self) -> Step:
        """Wait for the calls' answers and store them (_store)."""
        asked = [answer.result() for answer in self.answers]
        return _store(self.run, self.calls, asked, self.reservation)


def _store(run: JudgeRun, calls: CallsToMake, asked: list[Asked], reservation: Reservation) -> Step:
    """Store a step's answers in one transaction (one commit to wait for, however many
    calls): answers_write, then give back the slots of calls to be made again (a failure
    that may pass, or one that pauses the run) and count (_count_and_decide)."""
    again = {
        index
        for index, each in enumerate(asked)
        if each.outcome.retryable or each.outcome.failure in PAUSING_FAILURES
    }
    with transaction.atomic():
        slots = [call.slots for call in calls.to_ask]
        written = answers_write(run, slots, asked, calls.keys, again=again)
        give_back(run, [slot for i in sorted(again) for slot in calls.to_ask[i].slots.values()])
        retryable = [asked[i].outcome for i in sorted(again) if asked[i].outcome.retryable]
        pausing = [asked[i].outcome for i in sorted(again) if not asked[i].outcome.retryable]
        return _count_and_decide(
            run, asked, written.graded, written.failed, retryable, pausing, reservation
        )


@dataclass(frozen=True)
class Written:
    """What answers_write wrote: grades recorded, results listed as failed, the calls' log."""

    graded: int
    failed: int
    logged: list[JudgeCall]


def answers_write(
    run: JudgeRun,
    slots: list[dict[str, Claimed]],
    asked: list[Asked],
    keys: dict[int, str],
    *,
    again: set[int],
) -> Written:
    """What a run's calls brought, in the caller's transaction (a step's, or a batch's
    when it is applied): the calls' log, the grades through the grade writer, the cache's
    new entries, and the results that failed with why. `slots`: each call's, by the ids
    its prompt gave them. A call whose index is in `again` failed in a way the caller
    asks again about: its slots are left to the caller."""
    judge = run.judge
    logged = log_calls(asked, judge, run.prompt_version, run=run)
    answered: list[_Grade] = []
    failed: list[tuple[JudgeCall, Claimed, str]] = []
    for index, (held, each, log) in enumerate(zip(slots, asked, logged, strict=True)):
        outcome = each.outcome
        if outcome.failure is not None:
            if index not in again:
                whole_call = f"{outcome.failure.value}: {outcome.error}"
                failed += [(log, slot, whole_call) for slot in held.values()]
            continue
        for result_id, judged in each.judged.items():
            answered.append(_Grade.of(held[result_id], judged, log.id))
        failed += [(log, held[rid], why) for rid, why in each.failed.items()]
    graded = _write_grades(run, answered)
    _pay_into_cache(judge.team_id, answered, keys)
    for log, slot, why in failed:
        _fail(run, log.id, slot, why)
    return Written(graded, len(failed), logged)


# The threads a process makes its calls from (nothing in ask touches the database), made
# once (a step's calls would otherwise start threads of their own every step): as many
# as a judge may make at once.
CALL_THREADS = 32
_call_threads: tuple[int, ThreadPoolExecutor] | None = None
_call_threads_lock = threading.Lock()


def _threads() -> ThreadPoolExecutor:
    """This process's call threads (a forked worker process makes its own)."""
    global _call_threads
    with _call_threads_lock:
        if _call_threads is None or _call_threads[0] != os.getpid():
            pool = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="judge-call")
            _call_threads = (os.getpid(), pool)
        return _call_threads[1]


def _count_and_decide(
    run: JudgeRun,
    asked: list[Asked],
    graded: int,
    failed: int,
    retryable: list[CallOutcome],
    pausing: list[CallOutcome],
    reservation: Reservation,
) -> Step:
    """Add the step's calls, tokens, cost and counts to the run and settle its budget's
    reservation in one UPDATE (every lane of the run writes that row), and say what
    comes next: a call that may succeed later makes the run wait (Retry-After, or a
    backoff doubling up to MAX_BACKOFF_S) unless every call failed so for
    AI_JUDGE_FAIL_AFTER_SECONDS, which fails the run; a judge misconfigured pauses it."""
    now = timezone.now()
    counters = {**spent_counters(asked, graded, failed), **settlement(reservation)}
    # The model was reached when a call got any answer but one to try again later.
    reached = len(retryable) < len(asked)
    counters["failing_since"] = None if reached else Coalesce(F("failing_since"), Value(now))
    step = GO
    if retryable:
        tries = run.failures_in_a_row + 1
        backoff = min(2.0 ** (tries - 1), MAX_BACKOFF_S)
        told = [o.retry_after_s for o in retryable if o.retry_after_s is not None]
        wait = max(told) if told else backoff
        if not reached:  # try again by the moment the run would fail, not after it
            wait = min(wait, _seconds_until_failing(run, now) + 1.0)
        first = retryable[0]
        note = f"{first.failure.value if first.failure else ''}: {first.error}"
        counters.update(
            failures_in_a_row=tries,
            wait_until=now + timedelta(seconds=wait),
            note=note[:500],
        )
        step = Step("wait", wait, note)
    elif not pausing:
        counters.update(failures_in_a_row=0, wait_until=None)
    JudgeRun.objects.filter(id=run.id).update(**counters)
    if pausing:
        first = pausing[0]
        why = f"paused: {first.failure.value if first.failure else ''}: {first.error}"
        with transaction.atomic():
            if run_settle(run, RunStatus.PAUSED, why):
                announce_failed(run, why)
        return Step("stop", why=why)
    if not reached and _fail_if_unreachable(run, now, step.why):
        return Step("stop", why=f"failed: {step.why}")
    return step


def spent_counters(asked: list[Asked], graded: int, failed: int) -> dict[str, Any]:
    """The run's columns to update for these calls: calls, tokens, cost and counts added."""
    return {
        "calls": F("calls") + sum(a.calls_sent for a in asked),
        "input_tokens": F("input_tokens") + sum(a.outcome.input_tokens for a in asked),
        "cached_input_tokens": F("cached_input_tokens")
        + sum(a.outcome.cached_input_tokens for a in asked),
        "output_tokens": F("output_tokens") + sum(a.outcome.output_tokens for a in asked),
        "cost": F("cost") + sum((a.cost for a in asked), Decimal(0)),
        "graded": F("graded") + graded,
        "failed": F("failed") + failed,
    }


def _seconds_until_failing(run: JudgeRun, now: datetime) -> float:
    since = run.failing_since or now
    deadline = since + timedelta(seconds=settings.AI_JUDGE_FAIL_AFTER_SECONDS)
    return max((deadline - now).total_seconds(), 0.0)


def _addresses(judge: Judge) -> str:
    """Where the judge's calls go: its model's address, or its members' for a panel."""
    judges = judge.members() or [judge]
    return ", ".join(endpoint(j.protocol, j.base_url) for j in judges)


def _fail_if_unreachable(run: JudgeRun, now: datetime, last_error: str) -> bool:
    """Fail the run when every call failed since AI_JUDGE_FAIL_AFTER_SECONDS or longer
    (one conditional UPDATE: of the lanes that see it, one fails it and tells the team);
    whether it did. Resuming it tries again."""
    fail_after = settings.AI_JUDGE_FAIL_AFTER_SECONDS
    why = (f"no answer from {_addresses(run.judge)} for {fail_after:g} s: {last_error}")[:2000]
    with transaction.atomic():
        failed = JudgeRun.objects.filter(
            id=run.id,
            status=RunStatus.RUNNING,
            failing_since__lte=now - timedelta(seconds=fail_after),
        ).update(status=RunStatus.FAILED, note=why, wait_until=None)
        if failed:
            give_back_held(run)
            live.changed(evaluation_id=run.evaluation_id, team_id=run.judge.team_id)
            announce_failed(run, why)
    return bool(failed)


@dataclass(frozen=True)
class CallsToMake:
    """A step's calls to make, with what they are made with, and every claimed slot's
    cache key."""

    prompt: Prompt
    to_ask: list[CallToMake]
    keys: dict[int, str]


def calls_from_cache(run: JudgeRun, batches: list[list[Claimed]]) -> CallsToMake:
    """Grade the slots whose judgement the team's judges already paid for (the same
    model, prompt version, keyword and document content) from the cache; the calls left
    to make for the others."""
    judge, evaluation = run.judge, run.evaluation
    scale, guidelines = evaluation.grading_scale, evaluation.scoring_guidelines
    prompt = pinned_prompt(run.prompt, scale)
    context = JudgeTask(keyword="", results=[], scale=scale, guidelines=guidelines)
    shown = {
        slot.id: result_shown(
            "", slot.name, slot.fields, slot.image, sees_images=judge.shows_images()
        )
        for batch in batches
        for slot in batch
    }
    keys = {
        slot.id: judgement_key(
            judge, prompt, replace(context, keyword=slot.keyword), shown[slot.id]
        )
        for batch in batches
        for slot in batch
    }
    cached = {
        entry.key: entry
        for entry in CachedJudgement.objects.filter(team_id=judge.team_id, key__in=keys.values())
    }
    hits: list[_Grade] = []
    calls: list[CallToMake] = []
    for batch in batches:
        to_ask: list[Claimed] = []
        for slot in batch:
            hit = cached.get(keys[slot.id])
            if hit is None:
                to_ask.append(slot)
            else:
                hits.append(
                    _Grade(
                        slot,
                        hit.grade,
                        hit.reason,
                        hit.call_id,
                        hit.confidence,
                        hit.agreement,
                        hit.votes,
                        cached=True,
                    )
                )
        if to_ask:
            ids = {f"r{number}": slot for number, slot in enumerate(to_ask, start=1)}
            results = [replace(shown[slot.id], id=rid) for rid, slot in ids.items()]
            task = replace(context, keyword=to_ask[0].keyword, results=results)
            calls.append(CallToMake(ids, task))
    reused = _write_grades(run, hits)
    if reused:
        JudgeRun.objects.filter(id=run.id).update(
            graded=F("graded") + reused, from_cache=F("from_cache") + reused
        )
    return CallsToMake(prompt, calls, keys)


# --- Writes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grade:
    """A grade for one claimed slot, from a call (or the cache, `cached`)."""

    slot: Claimed
    grade: int
    reason: str
    call_id: int | None  # the call that made it (for the cache's, the one that paid)
    confidence: float | None = None
    agreement: float | None = None  # of a panel's or a sampled judge's (combining.py)
    votes: Any = None
    cached: bool = False

    @classmethod
    def of(cls, slot: Claimed, judged: Judged, call_id: int | None) -> _Grade:
        votes = list(judged.votes) or None
        return cls(
            slot, judged.grade, judged.reason, call_id, judged.confidence, judged.agreement, votes
        )


def _write_grades(run: JudgeRun, grades: list[_Grade]) -> int:
    """The judge's grades through the grade writer, all of one call in one transaction,
    with the model and prompt version beside each (JudgeGrade); how many were recorded.
    A slot the judge no longer holds (its hold ran out during a long call, the run was
    cancelled) or in an evaluation closed meanwhile is not the judge's failure: it goes
    back to the pool, to be claimed again."""
    if not grades:
        return 0
    try:
        written = _write_held(run, grades)
    except InvalidInput as error:  # a grade off the scale (the reader lets none through)
        for g in grades:
            _fail(run, g.call_id, g.slot, f"the grade was not recorded: {error.message}")
        return 0
    give_back(run, [g.slot for g in grades if g.slot.id not in written])
    return len(written)


def _write_held(run: JudgeRun, grades: list[_Grade]) -> set[int]:
    judge = run.judge
    with transaction.atomic():
        made = JudgeMade(judge.id, judge.name, judge.model_name, run.prompt_version)
        source_id = judge_source(team_id=judge.team_id, made=made)
        written = slots_judge_held(
            giver=Giver.judge(judge.user, source_id),
            judgements=[HeldJudgement(g.slot.id, g.grade, g.reason) for g in grades],
            team_id=judge.team_id,
        )
        # Columns, not model instances (apps/core/bulk.py says why): a step writes many.
        kept = [g for g in grades if g.slot.id in written]
        bulk_upsert(
            JudgeGrade,
            {
                "slot": [g.slot.id for g in kept],
                "run": [run.id] * len(kept),
                "call": [g.call_id for g in kept],
                "model_name": [judge.model_name] * len(kept),
                "prompt_version": [run.prompt_version] * len(kept),
                "cached": [g.cached for g in kept],
                "confidence": [g.confidence for g in kept],
                "agreement": [g.agreement for g in kept],
                "votes": [g.votes for g in kept],
                "graded_at": [timezone.now()] * len(kept),
            },
            unique_fields=["slot"],
            update_fields=[
                "run",
                "call",
                "model_name",
                "prompt_version",
                "cached",
                "confidence",
                "agreement",
                "votes",
                "graded_at",
            ],
        )
    return written


def _fail(run: JudgeRun, call_id: int | None, slot: Claimed, why: str) -> None:
    """List the result as failed for the run (once while open) and give its slot back."""
    with transaction.atomic():
        JudgeFailure.objects.get_or_create(
            run=run, slot_id=slot.id, open=True, defaults={"reason": why[:2000], "call_id": call_id}
        )
        give_back(run, [slot])


def _pay_into_cache(team_id: int, paid_for: list[_Grade], keys: dict[int, str]) -> None:
    """Keep what the calls paid for, for the team's judges to reuse (the first entry of
    a key stays: two calls that paid for one key at once gave the same judgement)."""
    count = len(paid_for)
    bulk_upsert(
        CachedJudgement,
        {
            "team": [team_id] * count,
            "key": [keys[g.slot.id] for g in paid_for],
            "grade": [g.grade for g in paid_for],
            "reason": [g.reason for g in paid_for],
            "confidence": [g.confidence for g in paid_for],
            "agreement": [g.agreement for g in paid_for],
            "votes": [g.votes for g in paid_for],
            "call": [g.call_id for g in paid_for],
            "created_at": [timezone.now()] * count,
        },
        unique_fields=["team", "key"],
        update_fields=[],
    )


# --- Spending and the log ------------------------------------------------------------


def run_settle(run: JudgeRun, status: str, note: str) -> bool:
    """End the run's running with `status`; False when it was no longer running."""
    settled = JudgeRun.objects.filter(id=run.id, status=RunStatus.RUNNING).update(
        status=status, note=note
    )
    # Its grades reach the live pages with the metrics; its end has no grade to carry it.
    live.changed(evaluation_id=run.evaluation_id, team_id=run.judge.team_id)
    if settled:
        work_ended(evaluation_id=run.evaluation_id)
    return bool(settled)


def announce_failed(run: JudgeRun, why: str) -> None:
    """A run that stopped on a failure its judge's settings must mend (a refused key, an
    unknown model): the lead is told, for nothing moves until they act."""
    evaluation_name = Evaluation.objects.values_list("name", flat=True).get(id=run.evaluation_id)
    announce(
        team_id=run.judge.team_id,
        event=Event.JUDGE_RUN_FAILED,
        summary=f"The AI judge {run.judge.name} stopped grading {evaluation_name}: {why}",
        path=reverse("judges:run_detail", args=[run.id]),
        data={
            "run": run.id,
            "judge": run.judge.name,
            "evaluation": {"id": run.evaluation_id, "name": evaluation_name},
            "reason": why,
        },
    )
