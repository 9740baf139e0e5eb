"""Stale judgements over the API: counted with the evaluation, sent back on request."""

import pytest

from apps.evaluations.models import FeedbackSlot
from apps.lifecycle.tests.test_reuse import graded_evaluation, new_evaluation, start
from apps.lifecycle.tests.test_stale_judgements import FIRST_RESULT, change_document
from tests.factories import make_evaluation, make_grader

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_stale(team_a, django_capture_on_commit_callbacks):
    graded_evaluation(team_a, [(make_grader(team_a, "ann@example.test"), 3)])
    evaluation = new_evaluation(team_a)
    change_document(evaluation, name="Result 1, new edition")
    return start(evaluation, django_capture_on_commit_callbacks)


def test_the_evaluation_counts_its_stale_judgements(api, with_stale):
    body = api.get(f"/api/v1/evaluations/{with_stale.id}/").json()

    assert body["stale_judgements"] == 1


def test_requeue_sends_them_back_and_answers_the_evaluation(
    api, with_stale, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/evaluations/{with_stale.id}/stale/requeue/")

    assert response.status_code == 200
    assert response.json()["stale_judgements"] == 0
    slot = FeedbackSlot.objects.get(evaluation=with_stale, snapshot__doc_id=FIRST_RESULT, index=0)
    assert slot.grade is None


def test_requeue_refuses_a_finished_evaluation_and_another_teams(api, team_a, team_b):
    finished = make_evaluation(team=team_a)
    finished.status = "finished"
    finished.save(update_fields=["status"])
    theirs = make_evaluation(team=team_b)

    refused = api.post(f"/api/v1/evaluations/{finished.id}/stale/requeue/")

    assert refused.status_code == 409
    assert "pending or open" in refused.json()["detail"]
    assert api.post(f"/api/v1/evaluations/{theirs.id}/stale/requeue/").status_code == 404
