"""A run's budgets are caps: what a step's calls may spend at most is reserved on the
run's row before they are sent, and settled to what they spent once answered.

Several lanes and calls spend at once, so a step reserves its calls at their most (one
call; its input's bound in tokens, input_tokens_bound, plus the judge's most output
tokens; their cost) in one conditional UPDATE of the run's row, which lapses at
`reserved_until`. Why the bound holds: docs/ai-judges.md, "Budgets".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import (
    Case,
    DecimalField,
    Expression,
    F,
    IntegerField,
    Q,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone

from .models import Judge, JudgeRun
from .money import in_dollars

# The framing of a call's two messages (roles, separators) in tokens, generously.
FRAMING_TOKENS = 32
# How long a reservation counts after it was made: a call's timeout twice over (the
# client's timeout holds for each of connecting, sending and each read) and a margin.
RESERVATION_MARGIN = timedelta(seconds=60)
# How long a step that does not fit waits for the calls in flight to settle (to what
# they spent, often less than their most), before it looks again.
ROOM_WAIT_S = 2.0
RESERVE_ATTEMPTS = 5
_COST: DecimalField[Decimal, Decimal] = DecimalField(max_digits=12, decimal_places=6)


def has_budget(judge: Judge) -> bool:
    return any(
        limit is not None for limit in (judge.budget_calls, judge.budget_tokens, judge.budget_cost)
    )


def input_tokens_bound(system: str, user: str, schema: dict[str, Any] | None) -> int:
    """At most how many input tokens a call takes (the module's docstring): the bytes of
    its messages, of the answer's schema when it is sent, and the framing."""
    size = len(system.encode()) + len(user.encode())
    if schema is not None:
        size += len(json.dumps(schema).encode())
    return size + FRAMING_TOKENS


@dataclass(frozen=True)
class Most:
    """What one ask may spend at most: a call, or a sampled judge's or a panel's calls."""

    tokens: int
    cost: Decimal
    calls: int = 1


def call_most(judge: Judge, input_bound: int) -> Most:
    output = judge.max_output_tokens
    cost = (
        input_bound * judge.price_input_per_million + output * judge.price_output_per_million
    ) / Decimal(1_000_000)
    return Most(input_bound + output, cost)


@dataclass(frozen=True)
class Reservation:
    """What a step reserved: its first `asks` asks, at their most (`calls` calls: more
    when a judge samples or is a panel). When none fit, `why` says which budget stops
    the run, or `wait` says how long until calls in flight may leave room."""

    asks: int = 0
    calls: int = 0
    tokens: int = 0
    cost: Decimal = Decimal(0)
    why: str = ""
    wait: float | None = None
    on_row: bool = False  # reserved on the run's row (a judge without budgets is not)


def reserve(run: JudgeRun, mosts: list[Most]) -> Reservation:
    """Reserve the first of the calls (their mosts, in order) that fit in the judge's
    budgets beside what the run spent and what its other calls in flight reserved."""
    judge = run.judge
    if not has_budget(judge):
        return Reservation(asks=len(mosts), calls=sum(m.calls for m in mosts))
    window = timedelta(seconds=2 * judge.timeout_seconds) + RESERVATION_MARGIN
    count = len(mosts)
    for _ in range(RESERVE_ATTEMPTS):
        if count == 0:
            break
        taken = _try(run, judge, mosts[:count], window)
        if taken is not None:
            return taken
        # Another lane reserved or settled meanwhile: how many fit now?
        count = _fitting(judge, _spent(run.id), mosts)
    return _refusal(judge, _spent(run.id), mosts[0])


def settlement(reservation: Reservation) -> dict[str, Any]:
    """The run's columns to update when the reserved calls are answered (what they
    spent is added beside, by the caller): the reservation taken off."""
    if not reservation.on_row:
        return {}
    return {
        "reserved_calls": Greatest(F("reserved_calls") - reservation.calls, Value(0)),
        "reserved_tokens": Greatest(F("reserved_tokens") - reservation.tokens, Value(0)),
        "reserved_cost": Greatest(
            F("reserved_cost") - Value(reservation.cost, output_field=_COST),
            Value(Decimal(0), output_field=_COST),
        ),
    }


def _live(field: str, now: datetime, output: Any) -> Expression:
    """The reserved column while the reservation counts, else 0."""
    zero = Value(Decimal(0), output_field=output) if output is _COST else Value(0)
    return Case(When(Q(reserved_until__gt=now), then=F(field)), default=zero, output_field=output)


def _try(run: JudgeRun, judge: Judge, mosts: list[Most], window: timedelta) -> Reservation | None:
    """Reserve these calls in one conditional UPDATE; None when they do not fit now."""
    now = timezone.now()
    calls, tokens = sum(m.calls for m in mosts), sum(m.tokens for m in mosts)
    cost = sum((m.cost for m in mosts), Decimal(0))
    live_calls = _live("reserved_calls", now, IntegerField())
    live_tokens = _live("reserved_tokens", now, IntegerField())
    live_cost = _live("reserved_cost", now, _COST)
    fits: list[Any] = []
    if judge.budget_calls is not None:
        fits.append(LessThanOrEqual(F("calls") + live_calls + calls, judge.budget_calls))
    if judge.budget_tokens is not None:
        spent_tokens = F("input_tokens") + F("output_tokens") + live_tokens
        fits.append(LessThanOrEqual(spent_tokens + tokens, judge.budget_tokens))
    if judge.budget_cost is not None:
        spent_cost = F("cost") + live_cost + Value(cost, output_field=_COST)
        fits.append(LessThanOrEqual(spent_cost, Value(judge.budget_cost, output_field=_COST)))
    reserved = JudgeRun.objects.filter(*fits, id=run.id).update(
        reserved_calls=live_calls + calls,
        reserved_tokens=live_tokens + tokens,
        reserved_cost=live_cost + Value(cost, output_field=_COST),
        reserved_until=Greatest(Coalesce(F("reserved_until"), Value(now)), Value(now + window)),
    )
    if not reserved:
        return None
    return Reservation(asks=len(mosts), calls=calls, tokens=tokens, cost=cost, on_row=True)


@dataclass(frozen=True)
class _Spent:
    """The run's spending and what its calls in flight reserved (0 once lapsed)."""

    calls: int
    tokens: int
    cost: Decimal
    reserved_calls: int
    reserved_tokens: int
    reserved_cost: Decimal


def _spent(run_id: int) -> _Spent:
    row = JudgeRun.objects.filter(id=run_id).values(
        "calls",
        "input_tokens",
        "output_tokens",
        "cost",
        "reserved_calls",
        "reserved_tokens",
        "reserved_cost",
        "reserved_until",
    )[0]
    live = row["reserved_until"] is not None and row["reserved_until"] > timezone.now()
    return _Spent(
        calls=row["calls"],
        tokens=row["input_tokens"] + row["output_tokens"],
        cost=Decimal(row["cost"]),
        reserved_calls=row["reserved_calls"] if live else 0,
        reserved_tokens=row["reserved_tokens"] if live else 0,
        reserved_cost=Decimal(row["reserved_cost"]) if live else Decimal(0),
    )


def _fitting(judge: Judge, spent: _Spent, mosts: list[Most]) -> int:
    """How many of the first calls fit beside what is spent and reserved."""
    calls = spent.calls + spent.reserved_calls
    tokens = spent.tokens + spent.reserved_tokens
    cost = spent.cost + spent.reserved_cost
    count = 0
    for most in mosts:
        calls, tokens, cost = calls + most.calls, tokens + most.tokens, cost + most.cost
        if judge.budget_calls is not None and calls > judge.budget_calls:
            break
        if judge.budget_tokens is not None and tokens > judge.budget_tokens:
            break
        if judge.budget_cost is not None and cost > judge.budget_cost:
            break
        count += 1
    return count


def _refusal(judge: Judge, spent: _Spent, most: Most) -> Reservation:
    """Why not even one call fits: a budget reached, or calls in flight (they count for
    their most until they settle, or lapse) to wait for: what they leave decides."""
    if spent.reserved_calls:
        return Reservation(wait=ROOM_WAIT_S)
    if judge.budget_calls is not None and spent.calls + most.calls > judge.budget_calls:
        why = f"the budget of {judge.budget_calls} calls is reached"
        if most.calls > 1:
            left = max(judge.budget_calls - spent.calls, 0)
            why += f": the next ask makes {most.calls} calls, {left} are left"
        return Reservation(why=why)
    if judge.budget_tokens is not None and spent.tokens + most.tokens > judge.budget_tokens:
        left = max(judge.budget_tokens - spent.tokens, 0)
        return Reservation(
            why=f"the budget of {judge.budget_tokens} tokens is reached: the next call "
            f"may take up to {most.tokens} (its prompt and most output tokens), {left} are left"
        )
    if judge.budget_cost is not None:
        left_cost = max(judge.budget_cost - spent.cost, Decimal(0))
        return Reservation(
            why=f"the budget of {in_dollars(judge.budget_cost, 2)} is reached: the next call "
            f"may cost up to {in_dollars(most.cost)}, {in_dollars(left_cost)} is left"
        )
    return Reservation(wait=ROOM_WAIT_S)  # spent changed meanwhile: look again
