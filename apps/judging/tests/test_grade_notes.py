"""A grader's optional note with a grade: typed on the card, saved as
the grade's reason, shown again when the grader goes back to it, read by the lead beside
the grade; bounded like every input."""

import pytest

from apps.evaluations.models import FeedbackSlot
from apps.judging.judgements import REASON_MAX_LENGTH
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, keywords={"red shoes": 3})


def held(user) -> FeedbackSlot:
    return FeedbackSlot.objects.get(grader=user, grade__isnull=True)


def test_the_card_offers_a_note_with_the_grade(evaluation, evaluator):
    page = client_for(evaluator).get("/feedback/").content.decode()

    assert '<input id="grade-note" class="grade-note" name="reason" maxlength="2000"' in page
    assert "A note with your grade (optional)" in page


def test_a_note_is_saved_with_the_grade_and_the_lead_reads_it_beside_it(
    evaluation, evaluator, owner
):
    grader = client_for(evaluator)
    grader.get("/feedback/")
    slot = held(evaluator)

    grader.post(
        f"/feedback/slots/{slot.id}/grade/",
        {"grade": 2, "reason": "  right shoe, wrong red  "},
        headers=HTMX,
    )

    slot.refresh_from_db()
    assert (slot.grade, slot.reason) == (2, "right shoe, wrong red")
    keyword_page = client_for(owner).get(
        f"/evaluations/{evaluation.id}/keywords/{slot.keyword_id}/"
    )
    assert "right shoe, wrong red" in keyword_page.content.decode()


def test_going_back_to_a_grade_shows_its_note(evaluation, evaluator):
    grader = client_for(evaluator)
    grader.get("/feedback/")
    slot = held(evaluator)
    grader.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 1, "reason": "too small"})

    previous = grader.get("/feedback/previous/").content.decode()

    assert 'value="too small"' in previous


def test_a_note_longer_than_the_bound_is_refused_naming_it_and_nothing_is_saved(
    evaluation, evaluator
):
    grader = client_for(evaluator)
    grader.get("/feedback/")
    slot = held(evaluator)

    response = grader.post(
        f"/feedback/slots/{slot.id}/grade/",
        {"grade": 2, "reason": "x" * (REASON_MAX_LENGTH + 1)},
        headers=HTMX,
    )

    assert response.status_code == 400
    assert "reason: at most 2000 characters (2001 given)" in response.content.decode()
    slot.refresh_from_db()
    assert (slot.grade, slot.reason) == (None, "")
