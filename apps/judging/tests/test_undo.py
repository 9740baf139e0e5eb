"""What a grader is told after a grade, and taking it back: the confirmation filling the
page's live region with Undo, a grade taken back or put back as it was through the grade
writer, and a skip taken back from the grader's history (Previous), through real URLs
by the cast of team A and the outsider of team B."""

import re

import pytest

from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    SnapshotSkip,
    Source,
    Status,
)
from apps.judging.tests.test_views import HTMX, held, shown_slot, text
from tests.factories import client_for, make_evaluation, make_grader

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, metrics=[("cg", 5)], keywords={"red shoes": 5})


def grade_held(client, grader, grade: int):
    """The grader grades the result they hold, with htmx: (that slot, the answer)."""
    slot = held(grader)
    answer = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": grade}, headers=HTMX)
    assert answer.status_code == 200, text(answer)
    slot.refresh_from_db()
    return slot, answer


@pytest.fixture
def graded_good(evaluation, evaluator):
    """The evaluator's client, and the result they graded 2 · Good on it."""
    client = client_for(evaluator)
    client.get("/feedback/")
    graded, _ = grade_held(client, evaluator, 2)
    return client, graded


def confirmation_of(answer) -> str:
    """The part of an htmx answer that fills the page's live region, out of band."""
    match = re.search(
        r'<div id="grade-confirmation" hx-swap-oob="innerHTML">(.*?)</div>', text(answer), re.S
    )
    assert match, text(answer)
    return match.group(1)


def skip_held(client, grader, reason: str = "") -> FeedbackSlot:
    slot = held(grader)
    client.post(f"/feedback/slots/{slot.id}/skip/", {"reason": reason}, headers=HTMX)
    return slot


# --- The confirmation -------------------------------------------------------------------


def test_the_page_has_a_polite_live_region_for_what_a_grade_gave(evaluation, evaluator):
    page = text(client_for(evaluator).get("/feedback/"))

    assert (
        '<div id="grade-confirmation" class="grade-confirmation" role="status" '
        'aria-live="polite" aria-atomic="true"></div>'
    ) in page


def test_a_grade_is_confirmed_by_its_label_with_an_undo_for_that_result(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")

    graded, answer = grade_held(client, evaluator, 2)

    confirmation = confirmation_of(answer)
    assert '<span class="confirmation-text" data-testid="confirmation">Graded 2 · Good</span>' in (
        confirmation
    )
    assert f'hx-post="/feedback/slots/{graded.id}/undo/"' in confirmation
    assert 'name="earlier"' not in confirmation
    assert shown_slot(answer) == held(evaluator)  # the next result is on the card


def test_a_changed_grade_is_confirmed_with_the_grade_it_replaced(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    graded, _ = grade_held(client, evaluator, 3)
    card = text(client.get("/feedback/previous/", headers=HTMX))
    assert '<input type="hidden" name="earlier" value="3">' in card

    answer = client.post(
        f"/feedback/slots/{graded.id}/grade/", {"grade": 0, "earlier": 3}, headers=HTMX
    )

    confirmation = confirmation_of(answer)
    assert "Changed 3 · Perfect to 0 · Poor" in confirmation
    assert '<input type="hidden" name="earlier" value="3">' in confirmation


@pytest.mark.parametrize("earlier", ["7", "x", "99999999999"])
def test_an_earlier_grade_that_is_no_grade_of_the_scale_is_not_offered_back(
    earlier, evaluation, evaluator
):
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    answer = client.post(
        f"/feedback/slots/{slot.id}/grade/", {"grade": 2, "earlier": earlier}, headers=HTMX
    )

    confirmation = confirmation_of(answer)
    assert "Graded 2 · Good" in confirmation and 'name="earlier"' not in confirmation


def test_a_refused_grade_fills_no_confirmation(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")

    answer = client.post(f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 9}, headers=HTMX)

    assert answer.status_code == 400
    assert "grade-confirmation" not in text(answer)


def test_without_htmx_the_grade_is_confirmed_as_a_message(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")

    response = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 1}, follow=True
    )

    assert "Graded 1 · Fair." in text(response)


# --- Undo a grade -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_undo_takes_the_grade_back_and_gives_the_result_back_to_the_grader(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    graded, _ = grade_held(client, evaluator, 3)
    assert EvaluationMetric.objects.get(evaluation=evaluation).value == pytest.approx(3.0)

    answer = client.post(f"/feedback/slots/{graded.id}/undo/", headers=HTMX)

    assert answer.status_code == 200
    assert shown_slot(answer) == graded
    assert "Grade taken back" in confirmation_of(answer)
    graded.refresh_from_db()
    assert (graded.grade, graded.grader, graded.source) == (None, evaluator, "")
    assert graded.graded_at is None and graded.assigned_at is not None
    assert not graded.snapshot_started  # its only grade: a fresh result again
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 0
    # Nothing graded is left: no value, not the 3.0 of the grade taken back.
    assert EvaluationMetric.objects.get(evaluation=evaluation).value is None

    again = client.post(f"/feedback/slots/{graded.id}/grade/", {"grade": 1}, headers=HTMX)
    assert again.status_code == 200
    graded.refresh_from_db()
    assert graded.grade == 1


def test_undo_of_a_changed_grade_puts_back_the_grade_it_replaced_with_its_note(
    evaluation, evaluator
):
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)
    client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 3, "reason": "exact"}, headers=HTMX)
    client.post(
        f"/feedback/slots/{slot.id}/grade/",
        {"grade": 0, "reason": "exact", "earlier": 3},
        headers=HTMX,
    )

    answer = client.post(f"/feedback/slots/{slot.id}/undo/", {"earlier": 3}, headers=HTMX)

    slot.refresh_from_db()
    assert (slot.grade, slot.reason, slot.source) == (3, "exact", Source.PERSON)
    assert "Back to 3 · Perfect" in confirmation_of(answer)
    assert "<strong>changing an earlier grade</strong>" in text(answer)
    assert 'aria-pressed="true"' in text(answer)


def test_undo_without_htmx_shows_the_result_again_with_a_message(graded_good):
    client, graded = graded_good

    response = client.post(f"/feedback/slots/{graded.id}/undo/")

    assert response.status_code == 200 and "<html" in text(response)
    assert "Grade taken back: grade this result again." in text(response)
    assert shown_slot(response) == graded


def test_undo_of_a_teammates_grade_is_refused_and_changes_nothing(evaluation, evaluator, admin):
    teammate = client_for(admin)
    teammate.get("/feedback/")
    theirs, _ = grade_held(teammate, admin, 2)

    answer = client_for(evaluator).post(f"/feedback/slots/{theirs.id}/undo/", headers=HTMX)

    assert "there is no grade of yours on this result to take back" in text(answer)
    theirs.refresh_from_db()
    assert (theirs.grade, theirs.grader) == (2, admin)


def test_undo_of_a_result_not_graded_yet_is_refused(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    response = client.post(f"/feedback/slots/{slot.id}/undo/", follow=True)

    assert "there is no grade of yours on this result to take back" in text(response)
    slot.refresh_from_db()
    assert (slot.grade, slot.grader) == (None, evaluator)


def test_undo_in_a_finished_evaluation_is_refused(evaluation, graded_good):
    client, graded = graded_good
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)

    answer = client.post(f"/feedback/slots/{graded.id}/undo/", headers=HTMX)

    assert "the evaluation is not open for grading" in text(answer)
    graded.refresh_from_db()
    assert graded.grade == 2


def test_undo_of_a_team_a_grade_by_the_outsider_is_not_found(graded_good, outsider):
    _, graded = graded_good

    response = client_for(outsider).post(f"/feedback/slots/{graded.id}/undo/", headers=HTMX)

    assert response.status_code == 404
    graded.refresh_from_db()
    assert graded.grade == 2


def test_undo_by_get_is_refused(graded_good):
    client, graded = graded_good

    assert client.get(f"/feedback/slots/{graded.id}/undo/").status_code == 405
    graded.refresh_from_db()
    assert graded.grade == 2


def test_an_earlier_grade_off_the_scale_is_refused_naming_the_grade(graded_good):
    client, graded = graded_good

    answer = client.post(f"/feedback/slots/{graded.id}/undo/", {"earlier": 7}, headers=HTMX)

    assert "7 is not a graded grade (0, 1, 2, 3)" in text(answer)
    graded.refresh_from_db()
    assert graded.grade == 2


# --- A skip taken back from the history -------------------------------------------------


def test_previous_meets_a_skip_after_the_grades_and_offers_to_undo_it(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    grade_held(client, evaluator, 2)
    skipped = skip_held(client, evaluator, "no picture")

    card = text(client.get("/feedback/previous/", headers=HTMX))

    assert f'data-skipped="{skipped.snapshot_id}"' in card
    assert "you skipped this result" in card and "no picture" in card
    assert f'hx-post="/feedback/results/{skipped.snapshot_id}/unskip/"' in card
    # Further back: the grade before the skip.
    before = re.search(r'href="(/feedback/previous/\?before=[^"]+)"', card).group(1)
    assert "changing an earlier grade" in text(client.get(before, headers=HTMX))


def test_undoing_a_skip_gives_the_result_back_to_the_grader(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    skipped = skip_held(client, evaluator)

    answer = client.post(f"/feedback/results/{skipped.snapshot_id}/unskip/", headers=HTMX)

    assert not SnapshotSkip.objects.filter(user=evaluator).exists()
    shown = shown_slot(answer)
    assert shown.snapshot_id == skipped.snapshot_id and shown.grader == evaluator
    assert "Skip taken back" in confirmation_of(answer)
    client.post(f"/feedback/slots/{shown.id}/grade/", {"grade": 1}, headers=HTMX)
    shown.refresh_from_db()
    assert shown.grade == 1


def test_a_skip_taken_back_after_another_grader_took_the_result_says_so(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    skipped = skip_held(client, evaluator)
    FeedbackSlot.objects.filter(id=skipped.id).update(grader=make_grader(evaluation.team), grade=2)

    answer = client.post(f"/feedback/results/{skipped.snapshot_id}/unskip/", headers=HTMX)

    assert "Skip taken back, but the result is with other graders now or done." in text(answer)
    assert not SnapshotSkip.objects.filter(user=evaluator).exists()


def test_a_skip_of_another_grader_or_another_team_is_not_found(
    evaluation, evaluator, admin, outsider
):
    client = client_for(evaluator)
    client.get("/feedback/")
    skipped = skip_held(client, evaluator)

    for someone in (admin, outsider):
        response = client_for(someone).post(f"/feedback/results/{skipped.snapshot_id}/unskip/")
        assert response.status_code == 404
    assert SnapshotSkip.objects.filter(user=evaluator).exists()


def test_a_refused_undo_without_htmx_returns_to_the_queue_the_grader_chose(evaluation, evaluator):
    client = client_for(evaluator)
    client.get(f"/feedback/?evaluation={evaluation.id}")

    response = client.post(
        f"/feedback/slots/{held(evaluator).id}/undo/", {"evaluation": evaluation.id}
    )

    assert response.status_code == 302
    assert response.url == f"/feedback/?evaluation={evaluation.id}"
