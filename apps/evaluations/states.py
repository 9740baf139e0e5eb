"""An evaluation's life cycle: its states, the events that move it, and the one place
that moves it. Every change of `status`, `fetching` or `archived` goes through `move`,
which locks the row, asks the table below (and, to complete, the finish guards) and
writes the new state, or refuses with the reason as an InvalidState.

It sits with the tables, below the pipeline and the lifecycle, so that both call it;
what a move sets off (reuse on opening, exact means on finishing) stays with them.
Modules above register finish guards (finish_guard_add): the AI judges say "not yet"
while a run or a chain still works, and finish the evaluation when it ends.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from django.db.models import Q

from apps.core.errors import InvalidState

from .models import Evaluation, Status


class State(StrEnum):
    PENDING = "pending"  # built or paused: its keywords and settings may change
    FETCHING = "fetching"  # started: its keywords run against the search model
    ACTIVE = "active"  # open for grading
    FINISHED = "finished"
    ARCHIVED = "archived"  # hidden from lists and the work pool (a pending or finished one)


class Event(StrEnum):
    FETCH = "fetch"  # a start with keywords to run
    OPEN = "open"  # a start with nothing to run
    FETCHED = "fetched"  # the keyword run is done
    PAUSE = "pause"
    FINISH = "finish"  # a lead, by hand, whatever the progress
    COMPLETE = "complete"  # the last slot graded and scored
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive"
    RESTART = "restart"  # a fresh copy of a finished evaluation set to restart
    DELETE = "delete"


# Targets beside a state: the evaluation keeps its state (a copy is made, or it goes),
# or it gets back the status it had before it was archived.
UNCHANGED = "unchanged"
RESTORED = "restored"

TRANSITIONS: dict[State, dict[Event, str]] = {
    State.PENDING: {
        Event.FETCH: State.FETCHING,
        Event.OPEN: State.ACTIVE,
        Event.ARCHIVE: State.ARCHIVED,
        Event.DELETE: UNCHANGED,
    },
    State.FETCHING: {Event.FETCHED: State.ACTIVE, Event.PAUSE: State.PENDING},
    State.ACTIVE: {
        Event.PAUSE: State.PENDING,
        Event.FINISH: State.FINISHED,
        Event.COMPLETE: State.FINISHED,
    },
    State.FINISHED: {
        Event.ARCHIVE: State.ARCHIVED,
        Event.RESTART: UNCHANGED,
        Event.DELETE: UNCHANGED,
    },
    State.ARCHIVED: {Event.UNARCHIVE: RESTORED, Event.DELETE: UNCHANGED},
}

# A finish guard: why the evaluation may not complete yet (work still under way on it),
# or None.
FinishGuard = Callable[[Evaluation], str | None]
_finish_guards: list[FinishGuard] = []


def finish_guard_add(guard: FinishGuard) -> None:
    """Ask `guard` before an evaluation completes (an app's ready(); once each)."""
    if guard not in _finish_guards:
        _finish_guards.append(guard)


def state_of(evaluation: Evaluation) -> State:
    """The evaluation's state, from its status and its fetching and archived flags."""
    if evaluation.archived:
        return State.ARCHIVED
    if evaluation.fetching:
        return State.FETCHING
    return State(evaluation.status)


def refusal(state: State, event: Event) -> str | None:
    """Why the event may not happen in the state (the table's answer), or None."""
    if event in TRANSITIONS[state]:
        return None
    if state == State.FETCHING and event in (Event.FETCH, Event.OPEN):
        return "the evaluation is already starting: its keywords are running"
    if state == State.ARCHIVED:
        if event == Event.ARCHIVE:
            return "the evaluation is already archived"
        return "the evaluation is archived: bring it back from the archive first"
    return _REFUSALS[event].format(state=_SAID.get(state, state))


_SAID = {State.FETCHING: "running its keywords"}


_REFUSALS = {
    Event.FETCH: "only a pending evaluation can start; this one is {state}",
    Event.OPEN: "only a pending evaluation can start; this one is {state}",
    Event.FETCHED: "the evaluation is no longer starting: it is {state}",
    Event.PAUSE: "only an active or starting evaluation can pause; this one is {state}",
    Event.FINISH: "only an active evaluation can finish; this one is {state}",
    Event.COMPLETE: "only an active evaluation can finish; this one is {state}",
    Event.ARCHIVE: "pause or finish the evaluation before archiving it",
    Event.UNARCHIVE: "the evaluation is not archived",
    Event.RESTART: "only a finished evaluation restarts; this one is {state}",
    Event.DELETE: "pause the evaluation before deleting it: it is {state}",
}


def move(*, evaluation_id: int, event: Event, **columns: Any) -> None:
    """Move the evaluation by the event, with `columns` written beside its state: one
    UPDATE conditional on a state the event may leave, so two moves at once cannot both
    happen. Completing first asks the finish guards (the caller holds the row's lock, as
    the pipeline's store does). Refused with the reason as an InvalidState."""
    if event == Event.COMPLETE:
        held = _held_back(evaluation_id)
        if held is not None:
            raise InvalidState(held)
    ready = Evaluation.objects.filter(_in_any(_SOURCES[event]), id=evaluation_id)
    changes = {**_columns(_TARGETS[event]), **columns}
    if not (ready.update(**changes) if changes else ready.exists()):
        raise InvalidState(_why_refused(evaluation_id, event))


def _held_back(evaluation_id: int) -> str | None:
    """Why a finish guard holds the open evaluation back from completing, or None."""
    if not _finish_guards:
        return None
    evaluation = Evaluation.objects.filter(id=evaluation_id).first()
    if evaluation is None or state_of(evaluation) != State.ACTIVE:
        return None  # the table refuses it
    for guard in _finish_guards:
        held = guard(evaluation)
        if held is not None:
            return held
    return None


def _why_refused(evaluation_id: int, event: Event) -> str:
    current = Evaluation.objects.filter(id=evaluation_id).first()
    if current is None:
        return "the evaluation no longer exists"
    return refusal(state_of(current), event) or "the evaluation changed meanwhile; try again"


_SOURCES = {event: [s for s, events in TRANSITIONS.items() if event in events] for event in Event}
# Each event leads to one target from whichever state it leaves.
_TARGETS = {
    event: next(events[event] for events in TRANSITIONS.values() if event in events)
    for event in Event
}
_WHERE = {
    State.PENDING: Q(archived=False, fetching=False, status=Status.PENDING),
    State.FETCHING: Q(archived=False, fetching=True),
    State.ACTIVE: Q(archived=False, fetching=False, status=Status.ACTIVE),
    State.FINISHED: Q(archived=False, fetching=False, status=Status.FINISHED),
    State.ARCHIVED: Q(archived=True),
}


def _in_any(states: list[State]) -> Q:
    where = Q(pk__in=[])
    for state in states:
        where |= _WHERE[state]
    return where


def _columns(target: str) -> dict[str, Any]:
    if target == State.PENDING:
        return {"status": Status.PENDING, "fetching": False}
    if target == State.FETCHING:
        return {"fetching": True}
    if target == State.ACTIVE:
        return {"status": Status.ACTIVE, "fetching": False, "fetch_lease_until": None}
    if target == State.FINISHED:
        return {"status": Status.FINISHED}
    if target == State.ARCHIVED:
        return {"archived": True}
    if target == RESTORED:
        return {"archived": False}
    return {}
