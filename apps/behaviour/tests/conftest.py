import pytest

from apps.judging.judgements import Giver, slot_judge
from tests.factories import make_evaluation, slots_of

from .click_logs import KEYWORDS, people_grade_of


@pytest.fixture
def graded_by_people():
    """Eight keywords of four results, each graded by three people by position."""
    evaluation = make_evaluation(scale="graded", strategy=3, keywords=KEYWORDS)
    for slot in slots_of(evaluation):
        grader = ("ann", "bob", "cy")[slot.index]
        grade = people_grade_of(slot.snapshot.position)
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, grader), grade=grade)
    return evaluation
