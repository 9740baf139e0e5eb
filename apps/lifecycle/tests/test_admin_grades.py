"""A grade edited in Django admin is recorded as every grade is (apps.judging.services):
checked against the scale, its keyword marked and its metrics recomputed. The rest of a
slot, and a result's computed value, cannot be edited there."""

import pytest

from apps.accounts.models import User
from apps.evaluations.models import FeedbackSlot, Keyword
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.models import KeywordMetric
from tests.factories import client_for, make_evaluation, make_grader, make_team, slots_of

# Real commits: the recompute is queued when the admin's save commits (and runs in-process).
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff():
    root = User.objects.create_superuser(email="root@example.test", password="x" * 12)
    return client_for(root)


@pytest.fixture
def evaluation():
    """cg@5 of one keyword whose first result has a grader's grade of 3 (Perfect)."""
    team = make_team()
    evaluation = make_evaluation(team=team, metrics=[("cg", 5)], keywords={"q": 2})
    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(make_grader(team)), grade=3)
    return evaluation


def change_url(slot: FeedbackSlot) -> str:
    return f"/admin/evaluations/feedbackslot/{slot.id}/change/"


def cg(evaluation) -> float | None:
    keyword = Keyword.objects.get(evaluation=evaluation)
    return KeywordMetric.objects.get(keyword=keyword, metric="cg", k=5).value


def test_a_grade_changed_in_the_admin_recomputes_the_keywords_metrics(staff, evaluation):
    slot = slots_of(evaluation)[0]
    versions_before = Keyword.objects.values_list("grade_version", flat=True).get()
    assert cg(evaluation) == 3

    response = staff.post(change_url(slot), {"grade": "1", "reason": "a second look"})

    assert response.status_code == 302, response.content.decode()
    slot.refresh_from_db()
    assert (slot.grade, slot.reason) == (1, "a second look")
    assert slot.grader is not None  # still its grader's grade
    keyword = Keyword.objects.get(evaluation=evaluation)
    assert keyword.grade_version == versions_before + 1  # marked, as a grade marks it
    assert not keyword.needs_scoring  # and recomputed once the save committed
    assert cg(evaluation) == 1


def test_a_grade_off_the_scale_is_refused_with_the_scales_grades(staff, evaluation):
    slot = slots_of(evaluation)[0]

    response = staff.post(change_url(slot), {"grade": "7", "reason": ""})

    assert response.status_code == 200
    assert "7 is not a graded grade (0, 1, 2, 3)" in response.content.decode()
    slot.refresh_from_db()
    assert slot.grade == 3
    assert cg(evaluation) == 3


def test_an_emptied_grade_resets_the_slot_and_the_metrics_follow(staff, evaluation):
    slot = slots_of(evaluation)[0]

    response = staff.post(change_url(slot), {"grade": "", "reason": ""})

    assert response.status_code == 302
    slot.refresh_from_db()
    assert (slot.grade, slot.grader) == (None, None)  # the queue offers it again
    assert cg(evaluation) != 3
    assert not Keyword.objects.get(evaluation=evaluation).needs_scoring


def test_a_free_slot_graded_in_the_admin_is_recorded_as_the_admins(staff, evaluation):
    free = slots_of(evaluation)[1]

    staff.post(change_url(free), {"grade": "2", "reason": ""})

    free.refresh_from_db()
    assert (free.grade, free.grader, free.external_grader) == (2, None, "root@example.test")
    assert cg(evaluation) == 3 + 2


def test_the_rest_of_a_slot_cannot_be_changed_added_or_deleted(staff, evaluation):
    slot = slots_of(evaluation)[0]
    page = staff.get(change_url(slot)).content.decode()

    assert 'name="grade"' in page and 'name="reason"' in page
    for field in ("evaluation", "keyword", "snapshot", "index", "grader", "graded_at"):
        assert f'name="{field}"' not in page
    assert staff.get("/admin/evaluations/feedbackslot/add/").status_code == 403
    deleted = staff.post(f"/admin/evaluations/feedbackslot/{slot.id}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    assert FeedbackSlot.objects.filter(id=slot.id).exists()


# The snapshot's form has its image's URLField, of which Django 5.2 warns about Django 6.
@pytest.mark.filterwarnings("ignore:The default scheme will be changed")
def test_a_results_computed_value_is_read_only(staff, evaluation):
    snapshot = slots_of(evaluation)[0].snapshot
    page = staff.get(f"/admin/evaluations/snapshot/{snapshot.id}/change/").content.decode()
    assert 'name="doc_id"' in page
    assert 'name="value"' not in page


def test_what_decides_the_metric_values_cannot_be_changed_in_admin(staff, evaluation):
    page = staff.get(f"/admin/evaluations/evaluation/{evaluation.id}/change/").content.decode()

    for setting in ("scale", "strategy", "profile", "transformers", "zero_without_results"):
        assert f'name="{setting}"' not in page  # shown, not a field of the form
    assert 'name="metrics-0-metric"' not in page


def test_computed_keyword_metrics_are_shown_but_not_editable_in_admin(staff, evaluation):
    metric = KeywordMetric.objects.get(keyword__evaluation=evaluation, metric="cg")
    url = f"/admin/scoring/keywordmetric/{metric.id}/change/"

    assert staff.get(url).status_code == 200
    assert 'name="value"' not in staff.get(url).content.decode()
    assert staff.post(url, {"value": "99"}).status_code == 403
    assert staff.get("/admin/scoring/keywordmetric/add/").status_code == 403
