"""People and stronger judges where they matter: a chain of links on one evaluation.

The first judge grades every result; the chain sends on the results it was unsure of
(a low reported confidence, or a panel's members or a sampled judge's samples split on
it), those a second opinion grades otherwise and an audit sample, to a stronger judge or
to people, within an escalation budget. The result's one slot holds the last link's grade;
the earlier links' stay in ChainStep. What a lead sees and why: docs/ai-judges.md,
"Chains". The later links spend through runs of their own (role "chain"; budgets.py),
and one worker at a time advances a chain (`busy_until`; tasks.py queues it again).
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from apps.accounts.models import User
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id
from apps.evaluations.models import Evaluation, FeedbackSlot, Status, people_q
from apps.judging.judgements import Action, Giver, slot_judge
from apps.judging.sources import JudgeMade, judge_source

from .asking import Asked, ask, most_spent
from .budgets import Reservation, has_budget, reserve, settlement
from .calibration_figures import JudgeFigures, Pair, judge_figures
from .call_log import log_call
from .images import result_shown
from .lifecycle_guard import work_ended
from .models import (
    ChainStep,
    EscalationReason,
    Judge,
    JudgeChain,
    JudgeGrade,
    JudgeRun,
    RunRole,
    RunStatus,
    StepStatus,
)
from .prompting import JudgeTask, Prompt, default_prompt
from .prompts import pinned_prompt, version_for_new_run

BATCH_RESULTS = 200  # results a step looks at, at most
CALL_RESULTS = 10  # results in one call to the second opinion or the next judge
LEASE = timedelta(minutes=5)
# What a grade's source calls the chain's stronger judge (sources.JudgeMade.chain_link).
NEXT_JUDGE_LINK = "next judge"


# --- Setting one up -------------------------------------------------------------------


@transaction.atomic
def chain_create(
    *,
    evaluation: Evaluation,
    first: Any,
    second_opinion: Any = None,
    escalate_to: Any = None,
    confidence_below: Any = None,
    agreement_below: Any = None,
    audit_percent: Any = 10,
    escalation_budget: Any = None,
    seed: Any = None,
    created_by: User | None = None,
) -> JudgeChain:
    """The evaluation's chain (judges given by id, of its team); every problem at once.
    The caller starts the first judge's run and the chain's task (controls.py)."""
    problems: list[str] = []
    team_id = evaluation.team_id
    first_judge = _judge(team_id, "first", first, problems, required=True)
    second = _judge(team_id, "second_opinion", second_opinion, problems)
    nxt = _judge(team_id, "escalate_to", escalate_to, problems)
    if evaluation.strategy != 1:
        problems.append(
            "evaluation: a chain keeps one grade per result, the last link's; this "
            f"evaluation asks for {evaluation.strategy} grades per result"
        )
    chosen = [j for j in (first_judge, second, nxt) if j is not None]
    if len({j.id for j in chosen}) != len(chosen):
        problems.append("escalate_to: each link of a chain is a different judge")
    threshold = _number("confidence_below", confidence_below, 0, 1, problems, whole=False)
    least_agreement = _number("agreement_below", agreement_below, 0, 1, problems, whole=False)
    if least_agreement is not None and first_judge is not None and _grades_once(first_judge):
        problems.append(
            f"agreement_below: {first_judge.name} gives one grade per result; agreement "
            "needs a panel or samples"
        )
    audit = _number("audit_percent", audit_percent, 0, 100, problems)
    budget = _number("escalation_budget", escalation_budget, 1, 10_000_000, problems)
    chosen_seed = _number("seed", seed, 0, 2**31 - 1, problems)
    if JudgeChain.objects.filter(evaluation=evaluation).exists():
        problems.append("evaluation: it already has a chain")
    for judge in (second, nxt):
        if judge and JudgeRun.objects.filter(judge=judge, evaluation=evaluation).exists():
            problems.append(
                f"escalate_to: {judge.name} already grades this evaluation; a chain's "
                "later links are asked only about what the chain sends them"
            )
    if problems or first_judge is None:
        raise InvalidInput(problems)
    chain = JudgeChain.objects.create(
        evaluation=evaluation,
        first=first_judge,
        second_opinion=second,
        escalate_to=nxt,
        confidence_below=threshold,
        agreement_below=least_agreement,
        audit_percent=int(audit if audit is not None else 10),
        escalation_budget=int(budget) if budget is not None else None,
        seed=random.SystemRandom().randrange(2**31) if chosen_seed is None else int(chosen_seed),
        created_by=created_by,
    )
    for judge in (second, nxt):
        if judge is not None:
            _chain_run(judge, evaluation, created_by)
    return chain


def _grades_once(judge: Judge) -> bool:
    """Whether the judge's grade is one model's one answer: it has no agreement to read."""
    return not judge.is_panel and judge.samples <= 1


def _chain_run(judge: Judge, evaluation: Evaluation, created_by: User | None) -> JudgeRun:
    """The run a later link spends through: never running, so no lane ever claims."""
    version = version_for_new_run(judge)
    label = version.version if version else default_prompt(evaluation.grading_scale).version
    run, _ = JudgeRun.objects.get_or_create(
        judge=judge,
        evaluation=evaluation,
        defaults={
            "role": RunRole.CHAIN,
            "status": RunStatus.FINISHED,
            "note": "asked by the evaluation's chain",
            "prompt": version,
            "prompt_version": label,
            "created_by": created_by,
        },
    )
    return run


# --- Advancing it ---------------------------------------------------------------------


def chain_advance(*, chain_id: int) -> str:
    """Look at what the first judge graded since last time; "more" (call again at
    once), "wait" (the first judge is still grading), "busy" (another worker has it)
    or "done"."""
    lease = _take(chain_id)
    if lease is None:
        return "busy"
    try:
        chain = JudgeChain.objects.select_related("evaluation", "first").get(id=chain_id)
        if chain.evaluation.status == Status.PENDING:
            return "wait"  # paused: people could not take what it sends them
        slots = _unseen(chain)
        if not slots:
            first_run = JudgeRun.objects.filter(judge=chain.first, evaluation=chain.evaluation)
            if first_run.filter(status=RunStatus.RUNNING).exists():
                return "wait"
            work_ended(evaluation_id=chain.evaluation_id)
            return "done"
        by_keyword: dict[int, list[FeedbackSlot]] = defaultdict(list)
        for slot in slots:
            by_keyword[slot.keyword_id].append(slot)
        try:
            for keyword_slots in by_keyword.values():
                for start in range(0, len(keyword_slots), CALL_RESULTS):
                    _settle(chain, keyword_slots[start : start + CALL_RESULTS])
        except _NoRoomYet:
            return "wait"  # the results left are looked at again
        return "more"
    finally:
        # Only its own lease: one that ran out may have been taken by another worker.
        JudgeChain.objects.filter(id=chain_id, busy_until=lease).update(busy_until=None)


def _take(chain_id: int) -> datetime | None:
    """The chain held until the returned moment, or None: another worker holds it."""
    now = timezone.now()
    lease = now + LEASE
    free = JudgeChain.objects.filter(id=chain_id).exclude(busy_until__gt=now)
    return lease if free.update(busy_until=lease) else None


def _unseen(chain: JudgeChain) -> list[FeedbackSlot]:
    seen = ChainStep.objects.filter(chain=chain).values("slot_id")
    return list(
        FeedbackSlot.objects.filter(
            evaluation_id=chain.evaluation_id, grader_id=chain.first.user_id, grade__isnull=False
        )
        .exclude(id__in=seen)
        .select_related("keyword", "snapshot")
        .order_by("keyword__position", "snapshot_position")[:BATCH_RESULTS]
    )


@dataclass
class _Looked:
    """One result as the chain sees it."""

    slot: FeedbackSlot
    first_grade: int
    first_reason: str
    confidence: float | None
    agreement: float | None = None  # of a panel's members or a sampled judge's samples
    second_grade: int | None = None
    second_reason: str = ""
    why: str = EscalationReason.NONE
    note: str = ""


def _settle(chain: JudgeChain, slots: list[FeedbackSlot]) -> None:
    """One keyword's results (a call's worth): the second opinion, the decision, the
    next link, and a ChainStep for each. The calls come first; what they decided is
    written in one transaction, so a step that dies leaves the results as they were."""
    made = {
        slot_id: (confidence, agreement)
        for slot_id, confidence, agreement in JudgeGrade.objects.filter(slot__in=slots).values_list(
            "slot_id", "confidence", "agreement"
        )
    }
    looked = [
        _Looked(slot, _graded(slot), slot.reason, *made.get(slot.id, (None, None)))
        for slot in slots
    ]
    if chain.second_opinion is not None:
        second = _ask_logged(chain, chain.second_opinion, looked)
        for entry in looked:
            judged = second.asked.judged.get(_result_id(entry)) if second.asked else None
            if judged is not None:
                entry.second_grade, entry.second_reason = judged.grade, judged.reason
        for entry in looked[len(second.about) :]:
            entry.note = f"the second opinion was not asked: {second.unpaid}"
    for entry in looked:
        entry.why = _why(chain, entry)
    sent = _within_budget(chain, [entry for entry in looked if entry.why])
    next_judge = chain.escalate_to
    unpaid: list[_Looked] = []
    answered = None
    over = ""
    if sent and next_judge:
        nxt = _ask_logged(chain, next_judge, sent)
        sent, unpaid = nxt.about, sent[len(nxt.about) :]
        answered = (nxt.asked, nxt.call) if nxt.asked else None
        over = f"kept the first grade: {next_judge.name}'s own budget: {nxt.unpaid}"
    with transaction.atomic():
        steps = [_step(chain, entry, StepStatus.KEPT) for entry in looked if not entry.why]
        steps += [
            _step(chain, entry, StepStatus.OVER_BUDGET, note="the escalation budget is spent")
            for entry in looked
            if entry.why and entry not in sent and entry not in unpaid
        ]
        steps += [_step(chain, entry, StepStatus.OVER_BUDGET, note=over) for entry in unpaid]
        if answered is not None:
            steps += _to_judge(chain, sent, *answered)
        elif sent and not _open_for_people(chain):
            note = "kept the first grade: the evaluation is no longer open for people"
            steps += [_step(chain, entry, StepStatus.KEPT, note=note) for entry in sent]
        else:
            steps += [_to_people(chain, entry) for entry in sent]
        ChainStep.objects.bulk_create(steps)


def _graded(slot: FeedbackSlot) -> int:
    assert slot.grade is not None  # _unseen reads graded slots only
    return slot.grade


def _why(chain: JudgeChain, entry: _Looked) -> str:
    if entry.second_grade is not None and entry.second_grade != entry.first_grade:
        return EscalationReason.DISAGREEMENT
    threshold = chain.confidence_below
    if threshold is not None and entry.confidence is not None and entry.confidence < threshold:
        return EscalationReason.LOW_CONFIDENCE
    least = chain.agreement_below
    if least is not None and entry.agreement is not None and entry.agreement < least:
        if chain.first.is_panel:
            return EscalationReason.PANEL_SPLIT
        return EscalationReason.SAMPLES_SPLIT
    if in_audit_sample(chain.seed, entry.slot.snapshot_id, chain.audit_percent):
        return EscalationReason.AUDIT
    return EscalationReason.NONE


def in_audit_sample(seed: int, snapshot_id: int, percent: int) -> bool:
    """Whether the result is in the chain's audit sample: a hash of the seed and the
    result, so the draw is fixed, independent of order, and `percent` in 100 on average."""
    digest = hashlib.sha256(f"{seed}:{snapshot_id}".encode()).hexdigest()
    return int(digest[:8], 16) % 10_000 < percent * 100


def _within_budget(chain: JudgeChain, wanted: list[_Looked]) -> list[_Looked]:
    if chain.escalation_budget is None:
        return wanted
    used = (
        ChainStep.objects.filter(chain=chain)
        .exclude(why=EscalationReason.NONE)
        .exclude(status=StepStatus.OVER_BUDGET)
        .count()
    )
    return wanted[: max(0, chain.escalation_budget - used)]


def _to_judge(chain: JudgeChain, sent: list[_Looked], asked: Asked, call: Any) -> list[ChainStep]:
    """The next judge's grades become the results' values (the grade writer); a result
    it could not grade keeps the first grade, marked so."""
    judge = chain.escalate_to
    assert judge is not None
    run = JudgeRun.objects.get(judge=judge, evaluation=chain.evaluation)
    made = JudgeMade(judge.id, judge.name, judge.model_name, run.prompt_version, NEXT_JUDGE_LINK)
    source_id = judge_source(team_id=judge.team_id, made=made)
    steps = []
    for entry in sent:
        judged = asked.judged.get(_result_id(entry))
        if judged is None:
            why = asked.failed.get(_result_id(entry)) or asked.outcome.error or "no grade"
            note = f"kept the first grade: {why}"
            steps.append(_step(chain, entry, StepStatus.FAILED, note=note))
            continue
        slot_judge(
            slot_id=entry.slot.id,
            giver=Giver.judge_recorded(judge.user, source_id),
            grade=judged.grade,
            reason=judged.reason,
            team_id=chain.evaluation.team_id,
        )
        JudgeGrade.objects.filter(slot=entry.slot).update(
            run=run,
            call=call,
            model_name=judge.model_name,
            prompt_version=run.prompt_version,
            cached=False,
            confidence=judged.confidence,
            # The next judge's own (none but a panel's or a sampled judge's), not the
            # first judge's left on the row.
            agreement=judged.agreement,
            votes=list(judged.votes) or None,
        )
        step = _step(chain, entry, StepStatus.ESCALATED)
        step.next_grade, step.next_reason = judged.grade, judged.reason
        steps.append(step)
    escalated = sum(1 for step in steps if step.status == StepStatus.ESCALATED)
    JudgeRun.objects.filter(id=run.id).update(graded=F("graded") + escalated)
    return steps


def _open_for_people(chain: JudgeChain) -> bool:
    """Whether the evaluation is open, under its row's lock (taken before the slots', as
    every transaction that locks both does), so it cannot finish while results go to
    people: a finish waits for this transaction, and completing for those results."""
    open_now = Evaluation.objects.select_for_update().filter(
        id=chain.evaluation_id, status=Status.ACTIVE, archived=False
    )
    return open_now.exists()


def _to_people(chain: JudgeChain, entry: _Looked) -> ChainStep:
    """Give the result back to the graders' queue: no grade, no grader (the first
    judge's grade is kept in the step); no judge's run takes it again (runs.py)."""
    slot_judge(
        slot_id=entry.slot.id,
        giver=Giver.lead(),
        action=Action.CLEAR,
        team_id=chain.evaluation.team_id,
    )
    JudgeGrade.objects.filter(slot=entry.slot).delete()
    return _step(chain, entry, StepStatus.AWAITING_PEOPLE)


class _NoRoomYet(Exception):
    """A later link's budget is held by a call in flight (a worker that died mid-call
    leaves its reservation until it lapses): the results are looked at again later."""


@dataclass(frozen=True)
class _Asking:
    """A later link asked about the first `about` of the results it was to be asked
    about (as many as its budget could pay: `unpaid` says why not the others); `asked`
    and its logged `call` are None when it could pay for none."""

    about: list[_Looked]
    asked: Asked | None = None
    call: Any = None
    unpaid: str = ""


def _ask_logged(chain: JudgeChain, judge: Judge, looked: list[_Looked]) -> _Asking:
    """One call to a later link about `looked` (cut to what its run's budget can pay,
    reserved before it is sent, as a run's calls are), logged and counted in its run."""
    evaluation = chain.evaluation
    run = JudgeRun.objects.select_related("judge").get(judge=judge, evaluation=evaluation)
    prompt = pinned_prompt(run.prompt, evaluation.grading_scale)
    about, reservation = _reserve_for(chain, run, prompt, looked)
    if not about:
        return _Asking([], unpaid=reservation.why)
    asked = ask(judge, prompt, _task(chain, judge, about))
    with transaction.atomic():
        call = log_call(asked, judge, run.prompt_version, run=run)
        JudgeRun.objects.filter(id=run.id).update(
            calls=F("calls") + asked.calls_sent,
            input_tokens=F("input_tokens") + asked.outcome.input_tokens,
            cached_input_tokens=F("cached_input_tokens") + asked.outcome.cached_input_tokens,
            output_tokens=F("output_tokens") + asked.outcome.output_tokens,
            cost=F("cost") + asked.cost,
            **settlement(reservation),
        )
    return _Asking(about, asked, call, reservation.why)


def _reserve_for(
    chain: JudgeChain, run: JudgeRun, prompt: Prompt, looked: list[_Looked]
) -> tuple[list[_Looked], Reservation]:
    """The most of `looked` (from the first) one call can be asked about within the
    run's budgets, reserved; why the others could not be. Raises _NoRoomYet while a
    call in flight holds the budget."""
    judge = run.judge
    if not has_budget(judge):
        return looked, Reservation(asks=1, calls=1)
    # Fewer results make a shorter prompt: under a token or cost budget, cut the call.
    sizes = range(len(looked), 0, -1) if judge.budget_tokens or judge.budget_cost else [len(looked)]
    refused = Reservation()
    for size in sizes:
        most = most_spent(judge, prompt, _task(chain, judge, looked[:size]))
        taken = reserve(run, [most])
        if taken.asks:
            why = refused.why if size < len(looked) else ""
            return looked[:size], replace(taken, why=why)
        if taken.wait is not None:
            raise _NoRoomYet
        refused = taken
    return [], refused


def _task(chain: JudgeChain, judge: Judge, looked: list[_Looked]) -> JudgeTask:
    evaluation = chain.evaluation
    return JudgeTask(
        keyword=looked[0].slot.keyword.text,
        results=[
            result_shown(
                _result_id(entry),
                entry.slot.snapshot.name,
                _fields(entry.slot),
                entry.slot.snapshot.image,
                sees_images=judge.shows_images(),
            )
            for entry in looked
        ],
        scale=evaluation.grading_scale,
        guidelines=evaluation.scoring_guidelines,
    )


def _result_id(entry: _Looked) -> str:
    return f"s{entry.slot.id}"


def _fields(slot: FeedbackSlot) -> dict[str, Any]:
    attributes = slot.snapshot.attributes
    return dict(attributes) if isinstance(attributes, dict) else {}


def _step(chain: JudgeChain, entry: _Looked, status: str, note: str = "") -> ChainStep:
    return ChainStep(
        chain=chain,
        slot=entry.slot,
        first_grade=entry.first_grade,
        first_reason=entry.first_reason,
        first_confidence=entry.confidence,
        first_agreement=entry.agreement,
        second_grade=entry.second_grade,
        second_reason=entry.second_reason,
        why=entry.why,
        status=status,
        note=note or entry.note,
    )


# --- What it did and saved ------------------------------------------------------------


@dataclass(frozen=True)
class ChainSummary:
    chain: JudgeChain
    results: int  # the evaluation's results
    looked_at: int
    by_status: dict[str, int]
    by_reason: dict[str, int]
    people_asked: int  # results sent to people
    people_graded: int  # of those, graded by a person since
    spent: Decimal  # every link's judge together
    next_judge_alone: Decimal | None  # the next judge on every result, estimated
    audit: JudgeFigures | None  # the first judge against the final grade, audited results

    @property
    def settled_without_people(self) -> int:
        return self.looked_at - self.people_asked

    @property
    def reasons_shown(self) -> list[tuple[str, int]]:
        """Why results went on, as people read it: ("Low confidence", 4), ..."""
        return [(EscalationReason(why).label, n) for why, n in sorted(self.by_reason.items())]


def chain_summary(chain: JudgeChain) -> ChainSummary:
    steps = ChainStep.objects.filter(chain=chain)
    by_status = dict(steps.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    by_reason = dict(
        steps.exclude(why=EscalationReason.NONE)
        .values_list("why")
        .annotate(n=Count("id"))
        .values_list("why", "n")
    )
    to_people = steps.filter(status=StepStatus.AWAITING_PEOPLE)
    people_graded = to_people.filter(people_q("slot__")).count()
    runs = JudgeRun.objects.filter(
        evaluation=chain.evaluation,
        judge_id__in=[
            j for j in (chain.first_id, chain.second_opinion_id, chain.escalate_to_id) if j
        ],
    )
    spent = runs.aggregate(total=Sum("cost"))["total"] or Decimal(0)
    return ChainSummary(
        chain=chain,
        results=FeedbackSlot.objects.filter(evaluation_id=chain.evaluation_id).count(),
        looked_at=steps.count(),
        by_status=by_status,
        by_reason=by_reason,
        people_asked=to_people.count(),
        people_graded=people_graded,
        spent=spent,
        next_judge_alone=_next_judge_alone(chain),
        audit=_audit_agreement(chain),
    )


def _next_judge_alone(chain: JudgeChain) -> Decimal | None:
    """What the next judge would have cost grading every result: its cost per result
    asked so far, times the results. None for people, or before it was asked."""
    if chain.escalate_to_id is None:
        return None
    run = JudgeRun.objects.filter(
        judge_id=chain.escalate_to_id, evaluation=chain.evaluation
    ).first()
    asked = ChainStep.objects.filter(
        chain=chain, status__in=[StepStatus.ESCALATED, StepStatus.FAILED]
    ).count()
    if run is None or not asked:
        return None
    results = FeedbackSlot.objects.filter(evaluation_id=chain.evaluation_id).count()
    return run.cost / asked * results


def _audit_agreement(chain: JudgeChain) -> JudgeFigures | None:
    """The first judge's grade against the final one (the next judge's, or a person's
    once given) on the audited results: an unbiased sample of how often it is right."""
    audited = ChainStep.objects.filter(chain=chain, why=EscalationReason.AUDIT).select_related(
        "slot"
    )
    pairs = []
    for step in audited:
        final = step.next_grade if step.status == StepStatus.ESCALATED else None
        if step.status == StepStatus.AWAITING_PEOPLE and step.slot.grade is not None:
            final = step.slot.grade
        if final is not None:
            pairs.append(Pair(step.slot.keyword_id, (final,), step.first_grade))
    if not pairs:
        return None
    return judge_figures(pairs, chain.evaluation.grading_scale, samples=500)


# --- Checking what was given ----------------------------------------------------------


def _judge(
    team_id: int, name: str, value: Any, problems: list[str], *, required: bool = False
) -> Judge | None:
    if value in (None, ""):
        if required:
            problems.append(f"{name}: required")
        return None
    text = str(value)
    judge_id = parse_id(value)
    judge = Judge.objects.filter(team_id=team_id, id=judge_id).first() if judge_id else None
    if judge is None:
        problems.append(f"{name}: the team has no judge {text[:40]!r}")
    return judge


def _number(
    name: str, value: Any, low: float, high: float, problems: list[str], *, whole: bool = True
) -> float | None:
    if value in (None, ""):
        return None
    try:
        number = float(str(value)) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not low <= number <= high or (whole and not number.is_integer()):
        kind = "a whole number" if whole else "a number"
        problems.append(f"{name}: {kind} from {low:g} to {high:,g}")
        return None
    return number
