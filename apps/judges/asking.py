"""Asking a judge's model about one keyword's results, and reading its answer: what a
live run (runs.py) and a calibration (calibration.py) share.

Nothing here touches the database, so a calibration can ask several calls at once from
threads: the caller logs the call and stores what came back. A call first takes room
under the account's learned rate limits (rate_limits.py) and gives it back with what its
answer said of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial

from apps import engine

from .answers import Judged, read_answer
from .budgets import Most, call_most, input_tokens_bound
from .combining import FITTED, SAMPLES, combine
from .images import IMAGE_TOKENS_BOUND
from .models import Judge
from .money import in_dollars
from .prompting import (
    JudgeTask,
    Prompt,
    Result,
    answer_schema,
    cache_key,
    images_in,
    messages_for,
)
from .providers import CallOutcome, Failure, call_model
from .rate_limits import Room, account_of, room_given_back, room_taken
from .services import model_settings


@dataclass(frozen=True)
class Asked:
    """One call as it went: the messages, the provider's outcome, its estimated cost,
    and per result id of the task either a judgement or why there is none. A call that
    failed as a whole (`outcome.failure`) has neither.

    A panel's or a sampled judge's ask is several calls (`parts`, each logged as its
    own): its outcome adds their tokens, and fails as a whole when one of them did."""

    system: str
    user: str
    outcome: CallOutcome
    cost: Decimal
    judged: dict[str, Judged] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    model_name: str = ""  # the model that answered (a panel's member's)
    parts: tuple[Asked, ...] = ()

    @property
    def calls(self) -> tuple[Asked, ...]:
        """The calls this ask made, as they are logged: itself, or its parts."""
        return self.parts or (self,)

    @property
    def calls_sent(self) -> int:
        return sum(1 for call in self.calls if call.outcome.sent)


def ask(judge: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
    """The judge's grades of the task's results: one call, a sampled judge's calls, or
    its members' (panels.py)."""
    if judge.is_panel:
        return _ask_panel(judge, prompt, task)
    if judge.samples > 1:
        return _ask_sampled(judge, prompt, task)
    return ask_once(judge, prompt, task)


def ask_once(judge: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
    system, user = messages_for(task, prompt)
    images = images_in(task)
    settings = model_settings(judge)
    account = account_of(settings.protocol, settings.base_url, settings.api_key)
    most = max(1, judge.calls_at_once)
    room = _room(account, most, settings.timeout_s)
    if room.wait_s > 0:
        outcome = CallOutcome(
            failure=Failure.RATE_LIMITED,
            error=f"the provider's limits learned from its answers leave no room for "
            f"{room.wait_s:.0f} s more; not sent",
            retry_after_s=room.wait_s,
            sent=False,
        )
        return Asked(system, user, outcome, Decimal(0), model_name=judge.model_name)
    outcome = call_model(settings, system, user, answer_schema(task), images)
    rate_limited = outcome.failure == Failure.RATE_LIMITED
    room_given_back(
        account, room, most_in_flight=most, limits=outcome.limits, rate_limited=rate_limited
    )
    ids = [result.id for result in task.results]
    return outcome_read(judge, system, user, ids, task.scale, outcome, call_cost(judge, outcome))


def _ask_sampled(judge: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
    """The same call `judge.samples` times at the judge's temperature: the grade given
    most often, and the share that gave it as its agreement (combining.py)."""
    samples = in_parallel([partial(ask_once, judge, prompt, task)] * judge.samples)
    parts = [
        (f"sample {number}", None, sample.judged, sample.failed)
        for number, sample in enumerate(samples, start=1)
    ]
    ids = [result.id for result in task.results]
    combined = combine(ids, parts, rule=SAMPLES, scale_grades=task.scale.grades)
    return asked_together(samples, combined.judged, combined.failed)


def _ask_panel(panel: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
    """The panel's grades: its members' made one by its rule (members_asked). A fitted
    panel before its fit asks nothing: it has no grade to give."""
    if panel.panel_rule == FITTED and panel_weights(panel, panel.members()) is None:
        ids = [result.id for result in task.results]
        unready = CallOutcome(sent=False)
        return Asked("", "", unready, Decimal(0), failed=dict.fromkeys(ids, not_ready(panel)))
    return members_asked(panel, prompt, task, panel.panel_rule)


def members_asked(panel: Judge, prompt: Prompt, task: JudgeTask, rule: str) -> Asked:
    """Each member asked at once (a member that sees no images is shown none), and
    their grades made one by `rule` (combining.py): the panel's own, or, for a
    calibration that gathers a fitted panel's votes before its fit, the median."""
    members = panel.members()
    asked = in_parallel([partial(ask, m, prompt, member_task(m, task)) for m in members])
    parts = [
        (member.name, member.id, each.judged, each.failed)
        for member, each in zip(members, asked, strict=True)
    ]
    ids = [result.id for result in task.results]
    weights = panel_weights(panel, members) if rule == FITTED else None
    combined = combine(ids, parts, rule=rule, scale_grades=task.scale.grades, weights=weights or ())
    return asked_together(asked, combined.judged, combined.failed)


def not_ready(judge: Judge) -> str:
    """Why the judge cannot grade yet ("" when it can): a fitted panel before its fit."""
    if judge.panel_rule == FITTED and panel_weights(judge, judge.members()) is None:
        return (
            f"{judge.name}'s weights are not fitted yet: calibrate the panel on a gold set, "
            "then fit its weights on that calibration"
        )
    return ""


def member_task(member: Judge, task: JudgeTask) -> JudgeTask:
    """The task as a panel's member is shown it: without images unless it sees them."""
    if member.sees_images:
        return task
    return replace(task, results=[replace(r, image=None, image_note="") for r in task.results])


def panel_weights(panel: Judge, members: list[Judge]) -> list[float] | None:
    """The fitted rule's weights in the members' order; None before they are fitted
    (or when the members changed since)."""
    fitted = (panel.panel_fit or {}).get("weights") or {}
    weights = [fitted.get(str(member.id)) for member in members]
    if any(weight is None for weight in weights) or len(fitted) != len(members):
        return None
    return [float(weight) for weight in weights if weight is not None]


def asked_together(parts: list[Asked], judged: dict[str, Judged], failed: dict[str, str]) -> Asked:
    """Several calls as one ask: their tokens and cost added; failed as a whole, as the
    first part that failed so (a retryable one first: the whole ask is made again)."""
    calls = [call for part in parts for call in part.calls]
    whole = [call for call in calls if call.outcome.failure is not None]
    whole.sort(key=lambda call: not call.outcome.retryable)
    first = whole[0].outcome if whole else calls[0].outcome
    # Which of the calls failed, when the models differ (a panel's members).
    named = len({call.model_name for call in calls}) > 1
    outcome = CallOutcome(
        text="",
        input_tokens=sum(call.outcome.input_tokens for call in calls),
        cached_input_tokens=sum(call.outcome.cached_input_tokens for call in calls),
        output_tokens=sum(call.outcome.output_tokens for call in calls),
        latency_ms=max(call.outcome.latency_ms for call in calls),
        failure=first.failure if whole else None,
        error=(f"{whole[0].model_name}: " if named else "") + first.error if whole else "",
        retry_after_s=first.retry_after_s if whole else None,
        sent=any(call.outcome.sent for call in calls),
    )
    cost = sum((call.cost for call in calls), Decimal(0))
    if whole:
        judged, failed = {}, {}
    return Asked(calls[0].system, calls[0].user, outcome, cost, judged, failed, parts=tuple(calls))


def in_parallel(asks: list[Callable[[], Asked]]) -> list[Asked]:
    """Each of `asks` made at once, from threads of their own; their answers in the same
    order. Threads a call, not a shared pool: a panel's sampled member waits for its
    samples, and waits nested in one bounded pool could take all its threads."""
    if len(asks) == 1:
        return [asks[0]()]
    with ThreadPoolExecutor(max_workers=len(asks), thread_name_prefix="judge-part") as pool:
        return list(pool.map(lambda each: each(), asks))


def outcome_read(
    judge: Judge,
    system: str,
    user: str,
    ids: list[str],
    scale: engine.Scale,
    outcome: CallOutcome,
    cost: Decimal,
) -> Asked:
    """A call's outcome as an Asked: each result of `ids` judged, or why not (a call
    sent now, or a line of a batch)."""
    if outcome.failure is not None:
        return Asked(system, user, outcome, cost, model_name=judge.model_name)
    answer = read_answer(outcome.text, ids, scale)
    failed = dict(answer.failed)
    if outcome.refusal:
        failed = {result_id: f"the model declined: {outcome.refusal[:200]}" for result_id in ids}
    elif outcome.truncated:
        cut = f"the answer was cut off at max_output_tokens ({judge.max_output_tokens}); "
        failed = {result_id: cut + why for result_id, why in failed.items()}
    judged = {rid: judged for rid, judged in answer.judged.items() if rid not in failed}
    return Asked(system, user, outcome, cost, judged, failed, model_name=judge.model_name)


# How long a call waits here for room the account's learned limits leave (rate_limits.py)
# before it is handed back as rate limited, for its run to wait out.
ROOM_WAIT_MAX_S = 30.0


def _room(account: str, most: int, timeout_s: float) -> Room:
    waited = 0.0
    while True:
        room = room_taken(account, most_in_flight=most, timeout_s=timeout_s)
        if room.wait_s <= 0 or waited + room.wait_s > ROOM_WAIT_MAX_S:
            return room
        time.sleep(room.wait_s)
        waited += room.wait_s


def most_spent(judge: Judge, prompt: Prompt, task: JudgeTask) -> Most:
    """What asking about the task may spend at most (budgets.py): each call's prompt as
    `ask` sends it, with the schema when the judge sends one, and the most output
    tokens; a sampled judge's calls times its samples, a panel's its members' added."""
    if judge.is_panel:
        mosts = [most_spent(m, prompt, member_task(m, task)) for m in judge.members()]
        return Most(
            sum(m.tokens for m in mosts),
            sum((m.cost for m in mosts), Decimal(0)),
            calls=sum(m.calls for m in mosts),
        )
    system, user = messages_for(task, prompt)
    schema = answer_schema(task) if judge.structured_output else None
    images = len(images_in(task)) * IMAGE_TOKENS_BOUND
    one = call_most(judge, input_tokens_bound(system, user, schema) + images)
    return Most(one.tokens * judge.samples, one.cost * judge.samples, calls=judge.samples)


def call_cost(judge: Judge, outcome: CallOutcome) -> Decimal:
    """The call's estimated cost from the prices the lead entered (per million tokens):
    the tokens read from the provider's prompt cache at the cached price, if one is set."""
    cached = min(outcome.cached_input_tokens, outcome.input_tokens)
    cached_price = judge.price_cached_input_per_million
    if cached_price is None:
        cached_price = judge.price_input_per_million
    return (
        (outcome.input_tokens - cached) * judge.price_input_per_million
        + cached * cached_price
        + outcome.output_tokens * judge.price_output_per_million
    ) / Decimal(1_000_000)


def judgement_key(judge: Judge, prompt: Prompt, context: JudgeTask, result: Result) -> str:
    """The cache key of the judge's judgement of `result` in `context` (prompting.py)."""
    return cache_key(model_identity(judge), prompt, context, result)


def model_identity(judge: Judge) -> str:
    """What made a judgement, as its cache key names it: the model by its provider,
    address and name, with its samples; a panel by its rule, weights and members."""
    if judge.is_panel:
        members = judge.members()
        weights = panel_weights(judge, members) if judge.panel_rule == FITTED else None
        shown = [model_identity(m) + (" with images" if m.sees_images else "") for m in members]
        ruled = judge.panel_rule + (f" {weights}" if weights is not None else "")
        return f"panel {ruled}: " + "; ".join(shown)
    identity = f"{judge.protocol} {judge.base_url} {judge.model_name}"
    if judge.samples > 1:
        identity += f" {judge.samples} samples at temperature {judge.temperature}"
    return identity


def budget_reached(judge: Judge, *, calls: int, tokens: int, cost: Decimal) -> str:
    """Which of the judge's budgets this spending has reached ("" for none): a
    calibration's check before each call (a run reserves instead, budgets.py)."""
    if judge.budget_calls is not None and calls >= judge.budget_calls:
        return f"the budget of {judge.budget_calls} calls is reached"
    if judge.budget_tokens is not None and tokens >= judge.budget_tokens:
        return f"the budget of {judge.budget_tokens} tokens is reached"
    if judge.budget_cost is not None and cost >= judge.budget_cost:
        return f"the budget of {in_dollars(judge.budget_cost, 2)} is reached"
    return ""
