"""One step of a judge's run on an evaluation (the lead's controls are controls.py, the
lanes that make the steps tasks.py).

One step is one call to the model, the whole of it:

1. claim up to `results_per_call` results for the judge: ungraded slots of the
   evaluation nobody holds (or whose hold ran out), one per snapshot, never a snapshot
   the judge already has a slot of, nor one that failed for it and was not retried;
2. build the prompt (prompting.py) and call the model (providers.py);
3. write each grade through the grade writer as the judge's user (Giver.grader, so the
   hold, the team, the open evaluation and the scale are checked like a person's), with
   the model and prompt version beside it (JudgeGrade); list each result it could not
   grade with why (JudgeFailure) and give its slot back;
4. log the call (JudgeCall) and add its tokens and cost to the run.

What the caller does next comes back as a Step: go on, wait (a rate limit, an outage:
the slots are given back and the backoff doubles up to MAX_BACKOFF_S), or stop. A
worker that dies mid-step leaves its slots held until their lock runs out
(SLOT_LOCK_SECONDS); the next claim takes them again, and a grade is written only while
the judge holds its slot, so none is written twice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.errors import InvalidInput
from apps.evaluations.models import FeedbackSlot, Status
from apps.judging.judgements import Giver, HeldJudgement, slots_judge_held
from apps.judging.selectors import lock_cutoff

from .asking import Asked, ask, budget_reached, judgement_key
from .call_log import log_call
from .models import (
    CachedJudgement,
    ChainStep,
    JudgeCall,
    JudgeFailure,
    JudgeGrade,
    JudgeRun,
    RunStatus,
    StepStatus,
)
from .prompting import JudgeTask, Prompt, Result
from .prompts import pinned_prompt
from .providers import CallOutcome, Failure

MAX_BACKOFF_S = 300.0
IDLE_WAIT_S = 30.0  # nothing to claim now, but people hold results that may come free
CLAIM_ATTEMPTS = 3
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


def run_step(*, run_id: int) -> Step:
    """One call's worth of judging for the run (see the module's docstring)."""
    # The judge's user comes along: every call's grades are written as it (Giver.grader).
    run = JudgeRun.objects.select_related("judge__user", "evaluation", "prompt").get(id=run_id)
    if run.status != RunStatus.RUNNING:
        return Step("stop", why=f"the run is {run.get_status_display().lower()}")
    evaluation, judge = run.evaluation, run.judge
    if evaluation.status == Status.FINISHED or evaluation.archived:
        _settle(run, RunStatus.FINISHED, "the evaluation is finished")
        return Step("stop", why="the evaluation is finished")
    if evaluation.status != Status.ACTIVE:
        return Step("wait", IDLE_WAIT_S, "the evaluation is not open for grading")
    if run.wait_until and run.wait_until > timezone.now():
        return Step("wait", (run.wait_until - timezone.now()).total_seconds(), run.note)
    spent = _budget_spent(run)
    if spent:
        _settle(run, RunStatus.BUDGET_REACHED, spent)
        return Step("stop", why=spent)
    slots = _claim(run, judge.results_per_call)
    if not slots:
        wait = _wait_for_held_work(run)
        if wait is not None:
            return Step("wait", wait, "the results left are held; they may come free")
        _settle(run, RunStatus.FINISHED, "nothing left for the judge")
        return Step("stop", why="nothing left for the judge")
    return _judge_batch(run, slots)


def _judge_batch(run: JudgeRun, slots: list[FeedbackSlot]) -> Step:
    judge, evaluation = run.judge, run.evaluation
    scale = evaluation.grading_scale
    prompt = pinned_prompt(run.prompt, scale)
    context = JudgeTask(
        keyword=slots[0].keyword.text,
        results=[],
        scale=scale,
        guidelines=evaluation.scoring_guidelines,
    )
    slots, keys = _reuse_cached(run, prompt, context, slots)
    if not slots:
        return GO
    ids = {f"r{number}": slot for number, slot in enumerate(slots, start=1)}
    task = replace(
        context,
        results=[
            Result(result_id, slot.snapshot.name, _fields(slot)) for result_id, slot in ids.items()
        ],
    )
    asked = ask(judge, prompt, task)
    call, spent = _log(run, asked)
    if asked.outcome.failure is not None:
        return _call_failed(run, call, asked.outcome, slots, spent)
    failed = asked.failed
    paid_for: list[CachedJudgement] = []
    answered: list[_Grade] = []
    for result_id, judged in asked.judged.items():
        slot = ids[result_id]
        paid_for.append(
            CachedJudgement(
                team_id=judge.team_id,
                key=keys[slot.id],
                grade=judged.grade,
                reason=judged.reason,
                confidence=judged.confidence,
                call=call,
            )
        )
        answered.append(_Grade(slot, judged.grade, judged.reason, call, judged.confidence))
    graded = _write_grades(run, answered)
    CachedJudgement.objects.bulk_create(paid_for, ignore_conflicts=True)
    for result_id, why in failed.items():
        _fail(run, call, ids[result_id], why)
    JudgeRun.objects.filter(id=run.id).update(
        **spent,
        graded=F("graded") + graded,
        failed=F("failed") + len(failed),
        failures_in_a_row=0,
        wait_until=None,
    )
    return GO


def _reuse_cached(
    run: JudgeRun, prompt: Prompt, context: JudgeTask, slots: list[FeedbackSlot]
) -> tuple[list[FeedbackSlot], dict[int, str]]:
    """Grade the slots whose judgement the team's judges already paid for (the same
    model, prompt version, keyword and document content) from the cache; the slots left
    to ask the model about, and every slot's cache key."""
    judge = run.judge
    keys = {
        slot.id: judgement_key(
            judge, prompt, context, Result("", slot.snapshot.name, _fields(slot))
        )
        for slot in slots
    }
    cached = {
        entry.key: entry
        for entry in CachedJudgement.objects.filter(team_id=judge.team_id, key__in=keys.values())
    }
    to_ask: list[FeedbackSlot] = []
    hits: list[_Grade] = []
    for slot in slots:
        hit = cached.get(keys[slot.id])
        if hit is None:
            to_ask.append(slot)
        else:
            hits.append(_Grade(slot, hit.grade, hit.reason, hit.call, hit.confidence, cached=True))
    reused = _write_grades(run, hits)
    if reused:
        JudgeRun.objects.filter(id=run.id).update(
            graded=F("graded") + reused, from_cache=F("from_cache") + reused
        )
    return to_ask, keys


def _call_failed(
    run: JudgeRun,
    call: JudgeCall,
    outcome: CallOutcome,
    slots: list[FeedbackSlot],
    spent: dict[str, Any],
) -> Step:
    failure = outcome.failure
    assert failure is not None
    if outcome.retryable:
        _give_back(run, slots)
        tries = run.failures_in_a_row + 1
        backoff = min(2.0 ** (tries - 1), MAX_BACKOFF_S)
        wait = outcome.retry_after_s if outcome.retry_after_s is not None else backoff
        note = f"{failure.value}: {outcome.error}"
        JudgeRun.objects.filter(id=run.id).update(
            **spent,
            failures_in_a_row=tries,
            wait_until=timezone.now() + timedelta(seconds=wait),
            note=note[:500],
        )
        return Step("wait", wait, note)
    if failure in PAUSING_FAILURES:
        _give_back(run, slots)
        JudgeRun.objects.filter(id=run.id).update(**spent)
        why = f"paused: {failure.value}: {outcome.error}"
        _settle(run, RunStatus.PAUSED, why)
        return Step("stop", why=why)
    for slot in slots:
        _fail(run, call, slot, f"{failure.value}: {outcome.error}")
    JudgeRun.objects.filter(id=run.id).update(**spent, failed=F("failed") + len(slots))
    return GO


# --- Claims and writes ---------------------------------------------------------------


def _claim(run: JudgeRun, size: int) -> list[FeedbackSlot]:
    """Up to `size` slots for the judge, one per snapshot, held from now."""
    for _ in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                return _claim_once(run, size)
        except IntegrityError:
            # Another step of this run took a slot of the same snapshot at the same
            # moment (the one-slot-per-grader constraint): look again.
            continue
    return []


def _claim_once(run: JudgeRun, size: int) -> list[FeedbackSlot]:
    judge_user = run.judge.user_id
    now = timezone.now()
    cutoff = lock_cutoff(now)
    mine = FeedbackSlot.objects.filter(evaluation_id=run.evaluation_id, grader_id=judge_user)
    # The judge's own holds that ran out (a step that died): free again, to itself too.
    mine.filter(grade__isnull=True, assigned_at__lt=cutoff).update(grader=None, assigned_at=None)
    taken = mine.values("snapshot_id")
    failed = JudgeFailure.objects.filter(run=run, open=True).values("slot__snapshot_id")
    # A result a chain sent to people is theirs (chains.py), whoever else may grade.
    for_people = ChainStep.objects.filter(
        chain__evaluation_id=run.evaluation_id, status=StepStatus.AWAITING_PEOPLE
    ).values("slot__snapshot_id")
    # Read whole, with what the prompt shows, so the picked need no second SELECT; only
    # the slots' rows are locked (of=self), not their results' and keywords'.
    candidates = list(
        FeedbackSlot.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("snapshot", "keyword")
        .filter(evaluation_id=run.evaluation_id, grade__isnull=True)
        .filter(Q(grader__isnull=True) | Q(assigned_at__lt=cutoff))
        .exclude(snapshot_id__in=taken)
        .exclude(snapshot_id__in=failed)
        .exclude(snapshot_id__in=for_people)
        .order_by("-snapshot_started", "keyword_position", "snapshot_position", "index")[: size * 3]
    )
    picked: list[FeedbackSlot] = []
    seen: set[int] = set()
    keyword = candidates[0].keyword_id if candidates else None
    for slot in candidates:
        # One keyword per call: the prompt shows one keyword and its results.
        if slot.snapshot_id in seen or slot.keyword_id != keyword:
            continue
        seen.add(slot.snapshot_id)
        picked.append(slot)
        if len(picked) == size:
            break
    FeedbackSlot.objects.filter(id__in=[slot.id for slot in picked]).update(
        grader_id=judge_user, assigned_at=now
    )
    for slot in picked:
        slot.grader_id, slot.assigned_at = judge_user, now
    return sorted(picked, key=lambda slot: (slot.snapshot_position, slot.index))


def _wait_for_held_work(run: JudgeRun) -> float | None:
    """Seconds to wait when nothing can be claimed now but some results may come free:
    the judge's own holds of a step that died (until the first runs out), or others'
    holds of results the judge has none of. None: nothing is left for the judge."""
    cutoff = lock_cutoff()
    mine = FeedbackSlot.objects.filter(evaluation_id=run.evaluation_id, grader_id=run.judge.user_id)
    oldest_hold = (
        mine.filter(grade__isnull=True, assigned_at__gte=cutoff)
        .order_by("assigned_at")
        .values_list("assigned_at", flat=True)
        .first()
    )
    if oldest_hold is not None:
        # It runs out when the cutoff passes it: in (oldest_hold - cutoff), and a second.
        return min((oldest_hold - cutoff).total_seconds() + 1.0, IDLE_WAIT_S)
    others_hold = (
        FeedbackSlot.objects.filter(
            evaluation_id=run.evaluation_id, grade__isnull=True, grader__isnull=False
        )
        .exclude(snapshot_id__in=mine.values("snapshot_id"))
        .exists()
    )
    return IDLE_WAIT_S if others_hold else None


@dataclass(frozen=True)
class _Grade:
    """A grade for one claimed slot, from a call (or the cache, `cached`)."""

    slot: FeedbackSlot
    grade: int
    reason: str
    call: JudgeCall | None
    confidence: float | None = None
    cached: bool = False


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
            _fail(run, g.call, g.slot, f"the grade was not recorded: {error.message}")
        return 0
    _give_back(run, [g.slot for g in grades if g.slot.id not in written])
    return len(written)


def _write_held(run: JudgeRun, grades: list[_Grade]) -> set[int]:
    judge = run.judge
    with transaction.atomic():
        written = slots_judge_held(
            giver=Giver.grader(judge.user),
            judgements=[HeldJudgement(g.slot.id, g.grade, g.reason) for g in grades],
            team_id=judge.team_id,
        )
        JudgeGrade.objects.bulk_create(
            [
                JudgeGrade(
                    slot=g.slot,
                    run=run,
                    call=g.call,
                    model_name=judge.model_name,
                    prompt_version=run.prompt_version,
                    cached=g.cached,
                    confidence=g.confidence,
                )
                for g in grades
                if g.slot.id in written
            ],
            update_conflicts=True,
            unique_fields=["slot"],
            update_fields=[
                "run",
                "call",
                "model_name",
                "prompt_version",
                "cached",
                "confidence",
                "graded_at",
            ],
        )
    return written


def _fail(run: JudgeRun, call: JudgeCall | None, slot: FeedbackSlot, why: str) -> None:
    """List the result as failed for the run (once while open) and give its slot back."""
    with transaction.atomic():
        JudgeFailure.objects.get_or_create(
            run=run, slot=slot, open=True, defaults={"reason": why[:2000], "call": call}
        )
        _give_back(run, [slot])


def _give_back(run: JudgeRun, slots: list[FeedbackSlot]) -> None:
    FeedbackSlot.objects.filter(
        id__in=[slot.id for slot in slots], grader_id=run.judge.user_id, grade__isnull=True
    ).update(grader=None, assigned_at=None)


def give_back_held(run: JudgeRun) -> None:
    FeedbackSlot.objects.filter(
        evaluation_id=run.evaluation_id, grader_id=run.judge.user_id, grade__isnull=True
    ).update(grader=None, assigned_at=None)


# --- Spending and the log ------------------------------------------------------------


def _log(run: JudgeRun, asked: Asked) -> tuple[JudgeCall, dict[str, Any]]:
    """Log the call; with it, what the call adds to the run's counters, for the step's
    last UPDATE of the run to add: every lane of the run writes that one row, so a call
    writes it once, not twice."""
    call = log_call(asked, run.judge, run.prompt_version, run=run)
    outcome = asked.outcome
    spent = {
        "calls": F("calls") + 1,
        "input_tokens": F("input_tokens") + outcome.input_tokens,
        "output_tokens": F("output_tokens") + outcome.output_tokens,
        "cost": F("cost") + asked.cost,
    }
    return call, spent


def _budget_spent(run: JudgeRun) -> str:
    """Which of the judge's budgets the run has reached ("" for none)."""
    tokens = run.input_tokens + run.output_tokens
    return budget_reached(run.judge, calls=run.calls, tokens=tokens, cost=run.cost)


def _settle(run: JudgeRun, status: str, note: str) -> None:
    JudgeRun.objects.filter(id=run.id, status=RunStatus.RUNNING).update(status=status, note=note)


def _fields(slot: FeedbackSlot) -> dict[str, Any]:
    attributes = slot.snapshot.attributes
    return dict(attributes) if isinstance(attributes, dict) else {}
