"""An evaluation's life cycle (states.py): every state against every event, each
allowed (to the state it leads to) or refused with the reason."""

import pytest

from apps.core.errors import InvalidState
from apps.evaluations import states
from apps.evaluations.models import Evaluation
from apps.evaluations.states import Event, State, move, state_of
from apps.lifecycle.steps import evaluation_archive
from tests.factories import finish, make_evaluation

pytestmark = pytest.mark.django_db

ALLOWED = {
    (State.PENDING, Event.FETCH): State.FETCHING,
    (State.PENDING, Event.OPEN): State.ACTIVE,
    (State.PENDING, Event.ARCHIVE): State.ARCHIVED,
    (State.PENDING, Event.DELETE): State.PENDING,  # the lifecycle then deletes it
    (State.FETCHING, Event.FETCHED): State.ACTIVE,
    (State.FETCHING, Event.PAUSE): State.PENDING,
    (State.ACTIVE, Event.PAUSE): State.PENDING,
    (State.ACTIVE, Event.FINISH): State.FINISHED,
    (State.ACTIVE, Event.COMPLETE): State.FINISHED,
    (State.FINISHED, Event.ARCHIVE): State.ARCHIVED,
    (State.FINISHED, Event.RESTART): State.FINISHED,  # the copy is the new one
    (State.FINISHED, Event.DELETE): State.FINISHED,
    (State.ARCHIVED, Event.UNARCHIVE): State.FINISHED,  # archived when finished
    (State.ARCHIVED, Event.DELETE): State.ARCHIVED,
}

STARTING = "the evaluation is already starting: its keywords are running"
IN_ARCHIVE = "the evaluation is archived: bring it back from the archive first"
REFUSED = {
    (State.PENDING, Event.FETCHED): "the evaluation is no longer starting: it is pending",
    (State.PENDING, Event.PAUSE): "only an active or starting evaluation can pause; "
    "this one is pending",
    (State.PENDING, Event.FINISH): "only an active evaluation can finish; this one is pending",
    (State.PENDING, Event.COMPLETE): "only an active evaluation can finish; this one is pending",
    (State.PENDING, Event.UNARCHIVE): "the evaluation is not archived",
    (State.PENDING, Event.RESTART): "only a finished evaluation restarts; this one is pending",
    (State.FETCHING, Event.FETCH): STARTING,
    (State.FETCHING, Event.OPEN): STARTING,
    (State.FETCHING, Event.FINISH): "only an active evaluation can finish; "
    "this one is running its keywords",
    (State.FETCHING, Event.COMPLETE): "only an active evaluation can finish; "
    "this one is running its keywords",
    (State.FETCHING, Event.ARCHIVE): "pause or finish the evaluation before archiving it",
    (State.FETCHING, Event.UNARCHIVE): "the evaluation is not archived",
    (State.FETCHING, Event.RESTART): "only a finished evaluation restarts; "
    "this one is running its keywords",
    (State.FETCHING, Event.DELETE): "pause the evaluation before deleting it: "
    "it is running its keywords",
    (State.ACTIVE, Event.FETCH): "only a pending evaluation can start; this one is active",
    (State.ACTIVE, Event.OPEN): "only a pending evaluation can start; this one is active",
    (State.ACTIVE, Event.FETCHED): "the evaluation is no longer starting: it is active",
    (State.ACTIVE, Event.ARCHIVE): "pause or finish the evaluation before archiving it",
    (State.ACTIVE, Event.UNARCHIVE): "the evaluation is not archived",
    (State.ACTIVE, Event.RESTART): "only a finished evaluation restarts; this one is active",
    (State.ACTIVE, Event.DELETE): "pause the evaluation before deleting it: it is active",
    (State.FINISHED, Event.FETCH): "only a pending evaluation can start; this one is finished",
    (State.FINISHED, Event.OPEN): "only a pending evaluation can start; this one is finished",
    (State.FINISHED, Event.FETCHED): "the evaluation is no longer starting: it is finished",
    (State.FINISHED, Event.PAUSE): "only an active or starting evaluation can pause; "
    "this one is finished",
    (State.FINISHED, Event.FINISH): "only an active evaluation can finish; this one is finished",
    (State.FINISHED, Event.COMPLETE): "only an active evaluation can finish; this one is finished",
    (State.FINISHED, Event.UNARCHIVE): "the evaluation is not archived",
    (State.ARCHIVED, Event.FETCH): IN_ARCHIVE,
    (State.ARCHIVED, Event.OPEN): IN_ARCHIVE,
    (State.ARCHIVED, Event.FETCHED): IN_ARCHIVE,
    (State.ARCHIVED, Event.PAUSE): IN_ARCHIVE,
    (State.ARCHIVED, Event.FINISH): IN_ARCHIVE,
    (State.ARCHIVED, Event.COMPLETE): IN_ARCHIVE,
    (State.ARCHIVED, Event.ARCHIVE): "the evaluation is already archived",
    (State.ARCHIVED, Event.RESTART): IN_ARCHIVE,
}


def evaluation_in(state: State) -> Evaluation:
    """An evaluation brought to the state as a lead and a worker bring it there (the
    archived one was finished first)."""
    evaluation = make_evaluation(start=state not in (State.PENDING, State.FETCHING))
    if state == State.FETCHING:
        Evaluation.objects.filter(id=evaluation.id).update(fetching=True)  # a start's run
    if state in (State.FINISHED, State.ARCHIVED):
        finish(evaluation)
    if state == State.ARCHIVED:
        evaluation_archive(evaluation=evaluation)
    evaluation.refresh_from_db()
    assert state_of(evaluation) == state
    return evaluation


def test_the_table_names_every_state_against_every_event_once():
    pairs = {(state, event) for state in State for event in Event}
    assert set(ALLOWED) | set(REFUSED) == pairs
    assert not set(ALLOWED) & set(REFUSED)


@pytest.mark.parametrize(("state", "event"), sorted(ALLOWED))
def test_an_allowed_event_moves_the_evaluation_to_its_next_state(state, event):
    evaluation = evaluation_in(state)

    move(evaluation_id=evaluation.id, event=event)

    evaluation.refresh_from_db()
    assert state_of(evaluation) == ALLOWED[(state, event)]


@pytest.mark.parametrize(("state", "event"), sorted(REFUSED))
def test_a_refused_event_leaves_the_evaluation_as_it_was_and_says_why(state, event):
    evaluation = evaluation_in(state)

    with pytest.raises(InvalidState) as refused:
        move(evaluation_id=evaluation.id, event=event)

    assert refused.value.message == REFUSED[(state, event)]
    evaluation.refresh_from_db()
    assert state_of(evaluation) == state


def test_a_finish_guard_holds_back_completing_but_not_a_lead_finishing_by_hand(monkeypatch):
    monkeypatch.setattr(states, "_finish_guards", [lambda evaluation: "a judge still grades"])
    completing, by_hand = make_evaluation(), make_evaluation()

    with pytest.raises(InvalidState, match="a judge still grades"):
        move(evaluation_id=completing.id, event=Event.COMPLETE)
    move(evaluation_id=by_hand.id, event=Event.FINISH)

    completing.refresh_from_db()
    by_hand.refresh_from_db()
    assert (state_of(completing), state_of(by_hand)) == (State.ACTIVE, State.FINISHED)
