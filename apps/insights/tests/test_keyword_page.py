"""A keyword's results with every slot's grade, grader and reason, and a lead's reset."""

import re

import pytest

from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.models import KeywordMetric
from tests.factories import assign, client_for, make_evaluation, slots_of

from .lead_pages import HTMX, grade_slots, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(team_a, evaluator, django_capture_on_commit_callbacks):
    """Three results of 'red shoes' with three slots each: graded by the evaluator with a
    reason, by an external grader, one held, the rest open."""
    evaluation = make_evaluation(
        team=team_a, strategy=3, metrics=[("cg", 10), ("ndcg", 10)], keywords={"red shoes": 3}
    )
    slots = slots_of(evaluation)
    with django_capture_on_commit_callbacks(execute=True):
        slot_judge(
            slot_id=slots[0].id, giver=Giver.recorded(evaluator), grade=3, reason="exact match"
        )
        slot_judge(slot_id=slots[1].id, giver=Giver.recorded(None, "Agency 7"), grade=2)
    assign(slots[3], evaluator)
    return evaluation


def url(evaluation) -> str:
    keyword = evaluation.keywords.get()
    return f"/evaluations/{evaluation.id}/keywords/{keyword.id}/"


def reset_url(evaluation, slot) -> str:
    return f"/evaluations/{evaluation.id}/slots/{slot.id}/reset/"


def slot_item(page: str, slot) -> str:
    match = re.search(rf'<li data-slot="{slot.id}">(.*?)</li>', page, re.S)
    assert match, page
    return match.group(1)


def test_a_lead_sees_every_slots_grade_grader_and_reason(evaluation, owner):
    slots = slots_of(evaluation)

    response = client_for(owner).get(url(evaluation))

    page = text(response)
    assert response.status_code == 200
    first = slot_item(page, slots[0])
    assert '<strong class="grade">3 · Perfect</strong>' in first
    assert "evaluator@a.test" in first and '<q class="reason">exact match</q>' in first
    assert "Agency 7" in slot_item(page, slots[1]) and "(external)" in slot_item(page, slots[1])
    assert "unassigned" in slot_item(page, slots[2])
    assert "(holding it)" in slot_item(page, slots[3])
    # The keyword's own value of each metric.
    assert page.count('<dl class="keyword-values"') == 1 and "nDCG@10" in page


def test_the_keyword_page_says_how_much_of_each_top_k_is_judged(evaluation, owner):
    # Only the first of the three results has grades.
    page = text(client_for(owner).get(url(evaluation)))

    values = page[page.index('<dl class="keyword-values"') :]
    assert "judged@10: 33.3 % · 2 unjudged" in values


def test_reset_buttons_show_for_slots_with_a_grade_or_a_grader_only(evaluation, owner):
    slots = slots_of(evaluation)

    page = text(client_for(owner).get(url(evaluation)))

    for slot in slots[:2] + [slots[3]]:
        assert reset_url(evaluation, slot) in page
    assert reset_url(evaluation, slots[2]) not in page


def test_the_keyword_page_refuses_evaluators_and_outsiders(evaluation, evaluator, outsider):
    assert client_for(evaluator).get(url(evaluation)).status_code == 403
    assert client_for(outsider).get(url(evaluation)).status_code == 404


def test_the_keyword_page_costs_the_same_queries_for_many_results(
    team_a, owner, django_assert_max_num_queries
):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"many": 40})
    grade_slots(evaluation, {"many": [1] * 120})
    client = client_for(owner)
    client.get("/")

    with django_assert_max_num_queries(8):
        assert client.get(url(evaluation)).status_code == 200


# Committed for real, as in production: the recomputation queued by the reset runs (in
# process) when the reset commits, before the page answers.
@pytest.mark.django_db(transaction=True)
def test_a_lead_resets_a_grade_with_htmx_and_sees_the_result_redrawn(evaluation, owner):
    first = slots_of(evaluation)[0]
    cg = KeywordMetric.objects.filter(keyword=first.keyword, metric="cg")
    assert cg.get().value == 2.5  # the mean of 3 and 2 on the first result

    response = client_for(owner).post(reset_url(evaluation, first), headers=HTMX)

    fragment = text(response)
    assert response.status_code == 200
    assert fragment.lstrip().startswith('<tr id="snapshot-') and "<html" not in fragment
    assert "back in the queue" in fragment
    assert "exact match" not in fragment
    first.refresh_from_db()
    assert (first.grade, first.grader_id, first.reason, first.graded_at) == (None, None, "", None)
    # The metrics were queued again and recomputed without the grade.
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 1
    assert cg.get().value == 2.0
    # The keyword's values come along, swapped in by id.
    assert 'id="keyword-values" data-testid="keyword-values" hx-swap-oob="true"' in fragment
    assert re.search(
        r'<dd class="value" title="2.0"><a class="explain-link"[^>]*>2.0000</a></dd>', fragment
    )
    assert '<td title="2.0">2.00</td>' in fragment  # the result's value, redrawn


def test_a_reset_without_htmx_redirects_to_the_keyword_with_a_message(evaluation, admin):
    held = slots_of(evaluation)[3]

    response = client_for(admin).post(reset_url(evaluation, held), follow=True)

    assert response.redirect_chain[-1][0] == url(evaluation)
    assert "The grade is reset" in text(response)
    held.refresh_from_db()
    assert held.grader_id is None and held.assigned_at is None


def test_a_reset_needs_the_csrf_token(evaluation, owner):
    first = slots_of(evaluation)[0]
    client = client_for(owner, enforce_csrf_checks=True)

    refused = client.post(reset_url(evaluation, first), headers=HTMX)

    assert refused.status_code == 403
    first.refresh_from_db()
    assert first.grade == 3
    page = text(client.get(url(evaluation)))
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    accepted = client.post(reset_url(evaluation, first), headers={**HTMX, "X-CSRFToken": token})
    assert accepted.status_code == 200


def test_a_reset_by_get_is_refused(evaluation, owner):
    assert client_for(owner).get(reset_url(evaluation, slots_of(evaluation)[0])).status_code == 405


def test_an_evaluator_cannot_reset_a_grade(evaluation, evaluator):
    first = slots_of(evaluation)[0]

    assert client_for(evaluator).post(reset_url(evaluation, first)).status_code == 403
    first.refresh_from_db()
    assert first.grade == 3


def test_the_outsider_cannot_reset_a_team_a_grade(evaluation, outsider):
    first = slots_of(evaluation)[0]

    assert client_for(outsider).post(reset_url(evaluation, first)).status_code == 404
    first.refresh_from_db()
    assert first.grade == 3


def test_a_slot_of_another_evaluation_under_this_ones_address_is_not_found(
    evaluation, team_a, owner
):
    other = make_evaluation(team=team_a)
    foreign_slot = slots_of(other)[0]

    response = client_for(owner).post(reset_url(evaluation, foreign_slot))

    assert response.status_code == 404


def test_a_finished_evaluations_grades_cannot_be_reset(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)
    first = slots_of(evaluation)[0]
    client = client_for(owner)

    response = client.post(reset_url(evaluation, first), headers=HTMX)

    assert response.status_code == 400
    assert "finished" in text(response)
    first.refresh_from_db()
    assert first.grade == 3
    assert reset_url(evaluation, first) not in text(client.get(url(evaluation)))


def test_a_refused_reset_without_htmx_says_why(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)

    response = client_for(owner).post(reset_url(evaluation, slots_of(evaluation)[0]), follow=True)

    assert "can no longer be reset" in text(response)
    assert FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).count() == 2


def test_a_lead_sees_each_grade_labelled_with_its_value_and_name(evaluation, owner):
    page = text(client_for(owner).get(url(evaluation)))

    assert '<strong class="grade">2 · Good</strong>' in slot_item(page, slots_of(evaluation)[1])


def test_a_lead_sees_who_skipped_a_result_and_why(evaluation, evaluator, owner):
    held = slots_of(evaluation)[3]  # the second result, held by the evaluator
    skipped = client_for(evaluator).post(
        f"/feedback/slots/{held.id}/skip/", {"reason": "cannot read German"}, headers=HTMX
    )
    assert skipped.status_code == 200

    page = text(client_for(owner).get(url(evaluation)))

    second = page.split(f'id="snapshot-{held.snapshot_id}"')[1].split("</tr>")[0]
    assert 'skipped: <q class="reason">cannot read German</q>' in second
    assert "by evaluator@a.test" in second
    first = page.split(f'id="snapshot-{slots_of(evaluation)[0].snapshot_id}"')[1]
    assert "skipped:" not in first.split("</tr>")[0]


def test_a_skip_without_a_reason_says_none_was_given(evaluation, evaluator, owner):
    held = slots_of(evaluation)[3]
    client_for(evaluator).post(f"/feedback/slots/{held.id}/skip/", headers=HTMX)

    page = text(client_for(owner).get(url(evaluation)))

    assert 'skipped: <span class="muted">no reason given</span>' in page
