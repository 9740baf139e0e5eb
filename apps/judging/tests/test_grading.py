"""The grade writer's rules for a grader (slot_judge with Giver.grader): it grades only
when every rule holds, and otherwise writes nothing and says which rule failed."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.errors import InvalidInput, InvalidState, NotAllowed, NotFound
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword
from apps.judging.judgements import Action, Giver, slot_judge
from tests.factories import assign, make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def started():
    """A binary evaluation whose first snapshot has a grade; its second slot is held."""
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    first, second, _third = slots_of(evaluation)
    slot_judge(slot_id=first.id, giver=Giver.recorded(None, "import"), grade=1)
    grader = make_grader(evaluation.team)
    assign(second, grader)
    second.refresh_from_db()
    assert second.snapshot_started and second.evaluation == evaluation  # read here, once
    return evaluation, second, grader


def grade(slot, grader, value, team_id=None) -> FeedbackSlot:
    return slot_judge(
        slot_id=slot.id,
        giver=Giver.grader(grader),
        grade=value,
        reason="clear",
        team_id=team_id or slot.evaluation.team_id,
    )


def test_it_grades_the_graders_started_slot_and_marks_the_keyword_in_one_transaction(started):
    _evaluation, slot, grader = started
    version = Keyword.objects.get(id=slot.keyword_id).grade_version

    with CaptureQueriesContext(connection) as grading:
        grade(slot, grader, 0)

    # Write the grade of the held slot of a started result (checked as it is written),
    # mark the keyword (and on a database with transactions of its own, BEGIN and COMMIT
    # around them).
    statements = [q["sql"] for q in grading.captured_queries]
    assert (
        sum(not s.startswith(("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")) for s in statements) == 2
    )
    slot.refresh_from_db()
    assert (slot.grade, slot.reason) == (0, "clear")
    assert slot.graded_at is not None
    keyword = Keyword.objects.get(id=slot.keyword_id)
    assert keyword.needs_scoring and keyword.grade_version == version + 1


def refused_and_untouched(slot, grader, value, error, team_id=None) -> bool:
    version = Keyword.objects.get(id=slot.keyword_id).grade_version
    with pytest.raises(error):
        grade(slot, grader, value, team_id)
    stored = FeedbackSlot.objects.get(id=slot.id)
    keyword = Keyword.objects.get(id=slot.keyword_id)
    untouched = stored.grade is None and stored.graded_at is None
    return untouched and keyword.grade_version == version


def test_it_refuses_another_graders_slot(started):
    evaluation, slot, _grader = started
    assert refused_and_untouched(slot, make_grader(evaluation.team), 1, NotAllowed)


def test_it_refuses_a_slot_of_another_team(started):
    _evaluation, slot, grader = started
    assert refused_and_untouched(slot, grader, 1, NotFound, team_id=make_team().id)


def test_it_refuses_a_slot_of_an_evaluation_not_open_for_grading(started):
    evaluation, slot, grader = started
    Evaluation.objects.filter(id=evaluation.id).update(status="finished")
    assert refused_and_untouched(slot, grader, 1, InvalidState)


@pytest.mark.parametrize("value", [2, -1, True, "1", None])
def test_it_refuses_a_grade_off_the_scale(started, value):
    _evaluation, slot, grader = started
    assert refused_and_untouched(slot, grader, value, InvalidInput)


def test_the_first_grade_of_a_snapshot_starts_the_snapshot_in_the_same_transaction():
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    slot = slots_of(evaluation)[0]
    grader = make_grader(evaluation.team)
    assign(slot, grader)

    grade(slot, grader, 1)

    stored = FeedbackSlot.objects.filter(snapshot_id=slot.snapshot_id).order_by("id")
    graded_and_started = [(s.grade, s.snapshot_started) for s in stored]
    assert graded_and_started == [(1, True), (None, True), (None, True)]
    assert Keyword.objects.get(id=slot.keyword_id).needs_scoring


def test_it_refuses_the_first_grade_of_a_snapshot_when_the_slot_is_anothers():
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    slot = slots_of(evaluation)[0]
    assign(slot, make_grader(evaluation.team))

    assert refused_and_untouched(slot, make_grader(evaluation.team), 1, NotAllowed)
    assert not FeedbackSlot.objects.filter(snapshot_started=True).exists()


def test_a_grader_may_not_clear_a_grade_only_a_lead_may(started):
    evaluation, slot, grader = started
    grade(slot, grader, 1)

    with pytest.raises(NotAllowed):
        slot_judge(slot_id=slot.id, giver=Giver.grader(grader), action=Action.CLEAR)
    assert FeedbackSlot.objects.get(id=slot.id).grade == 1

    slot_judge(slot_id=slot.id, giver=Giver.lead(), action=Action.CLEAR)
    cleared = FeedbackSlot.objects.get(id=slot.id)
    assert (cleared.grade, cleared.grader_id, cleared.graded_at) == (None, None, None)
