"""The grade writer's bulk entry for slots one grader holds (slots_judge_held, an AI
judge's call): one transaction under slot_judge's rules; what the grader no longer holds,
or an evaluation closed meanwhile, is left alone; a grade off the scale writes nothing."""

import pytest

from apps.core.errors import InvalidInput
from apps.evaluations.models import FeedbackSlot, Keyword, Status
from apps.judging.judgements import Giver, HeldJudgement, slots_judge_held
from tests.factories import assign, make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def held():
    """Three results of one keyword (strategy 3), the first slot of each held by a grader."""
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 3})
    grader = make_grader(evaluation.team)
    slots = slots_of(evaluation)
    mine = [assign(slot, grader) for slot in slots[::3]]
    return evaluation, grader, mine


def judge(evaluation, grader, grades):
    return slots_judge_held(
        giver=Giver.grader(grader),
        judgements=[HeldJudgement(slot.id, grade, f"because {grade}") for slot, grade in grades],
        team_id=evaluation.team_id,
    )


def test_it_grades_every_held_slot_starts_their_results_and_marks_the_keyword(held):
    evaluation, grader, mine = held
    version = Keyword.objects.get(evaluation=evaluation).grade_version
    written = judge(evaluation, grader, zip(mine, [1, 0, 1], strict=True))
    assert written == {slot.id for slot in mine}
    stored = FeedbackSlot.objects.filter(id__in=written).order_by("id")
    assert [(s.grade, s.reason) for s in stored] == [
        (1, "because 1"),
        (0, "because 0"),
        (1, "because 1"),
    ]
    assert all(s.graded_at is not None for s in stored)
    # The other slot of each result is started too: the queue offers it first.
    assert all(
        FeedbackSlot.objects.filter(evaluation=evaluation).values_list(
            "snapshot_started", flat=True
        )
    )
    keyword = Keyword.objects.get(evaluation=evaluation)
    assert keyword.needs_scoring and keyword.grade_version == version + 1


def test_a_slot_no_longer_held_is_left_alone(held):
    evaluation, grader, mine = held
    FeedbackSlot.objects.filter(id=mine[1].id).update(grader=None, assigned_at=None)
    written = judge(evaluation, grader, zip(mine, [1, 1, 1], strict=True))
    assert written == {mine[0].id, mine[2].id}
    assert FeedbackSlot.objects.get(id=mine[1].id).grade is None


def test_a_closed_evaluation_or_another_team_writes_nothing(held):
    evaluation, grader, mine = held
    with_other_team = slots_judge_held(
        giver=Giver.grader(grader),
        judgements=[HeldJudgement(mine[0].id, 1)],
        team_id=evaluation.team_id + 1000,
    )
    assert with_other_team == set()
    type(evaluation).objects.filter(id=evaluation.id).update(status=Status.PENDING)
    assert judge(evaluation, grader, zip(mine, [1, 1, 1], strict=True)) == set()
    assert not FeedbackSlot.objects.filter(evaluation=evaluation).exclude(grade=None).exists()


def test_a_grade_off_the_scale_writes_nothing_and_names_the_slot(held):
    evaluation, grader, mine = held
    with pytest.raises(InvalidInput) as refused:
        judge(evaluation, grader, zip(mine, [1, 5, 1], strict=True))
    assert f"slot {mine[1].id}: grade: 5 is not a binary grade (0, 1)" in refused.value.problems
    assert not FeedbackSlot.objects.filter(evaluation=evaluation).exclude(grade=None).exists()


def test_only_a_grader_writes_held_slots(held):
    evaluation, _grader, mine = held
    with pytest.raises(ValueError):
        slots_judge_held(
            giver=Giver.lead(),
            judgements=[HeldJudgement(mine[0].id, 1)],
            team_id=evaluation.team_id,
        )
