"""Asking a judge's model about one keyword's results, and reading its answer: what a
live run (runs.py) and a calibration (calibration.py) share.

Nothing here touches the database, so a calibration can ask several calls at once from
threads: the caller logs the call and stores what came back. A call first takes room
under the account's learned rate limits (rate_limits.py) and gives it back with what its
answer said of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal

from apps import engine

from .answers import Judged, read_answer
from .budgets import Most, call_most, input_tokens_bound
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
    failed as a whole (`outcome.failure`) has neither."""

    system: str
    user: str
    outcome: CallOutcome
    cost: Decimal
    judged: dict[str, Judged] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def ask(judge: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
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
        return Asked(system, user, outcome, Decimal(0))
    outcome = call_model(settings, system, user, answer_schema(task), images)
    rate_limited = outcome.failure == Failure.RATE_LIMITED
    room_given_back(
        account, room, most_in_flight=most, limits=outcome.limits, rate_limited=rate_limited
    )
    ids = [result.id for result in task.results]
    return outcome_read(judge, system, user, ids, task.scale, outcome, call_cost(judge, outcome))


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
        return Asked(system, user, outcome, cost)
    answer = read_answer(outcome.text, ids, scale)
    failed = dict(answer.failed)
    if outcome.refusal:
        failed = {result_id: f"the model declined: {outcome.refusal[:200]}" for result_id in ids}
    elif outcome.truncated:
        cut = f"the answer was cut off at max_output_tokens ({judge.max_output_tokens}); "
        failed = {result_id: cut + why for result_id, why in failed.items()}
    judged = {rid: judged for rid, judged in answer.judged.items() if rid not in failed}
    return Asked(system, user, outcome, cost, judged, failed)


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
    """What asking about the task may spend at most (budgets.py): its prompt as `ask`
    sends it, with the schema when the judge sends one, and the most output tokens."""
    system, user = messages_for(task, prompt)
    schema = answer_schema(task) if judge.structured_output else None
    images = len(images_in(task)) * IMAGE_TOKENS_BOUND
    return call_most(judge, input_tokens_bound(system, user, schema) + images)


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
    """The cache key of the judge's judgement of `result` in `context` (prompting.py):
    the model is named by its provider, address and name."""
    model = f"{judge.protocol} {judge.base_url} {judge.model_name}"
    return cache_key(model, prompt, context, result)


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
