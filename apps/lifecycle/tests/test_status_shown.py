"""The status a person reads on an evaluation's badge: a paused evaluation says "Paused",
not "Pending" as one never started does, and one whose keywords still run says "Starting"."""

import pytest

from apps.evaluations.models import Evaluation, Status
from apps.lifecycle.steps import evaluation_stop
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db


def test_an_evaluation_never_started_is_pending(team_a):
    assert make_evaluation(team=team_a, start=False).status_shown == "Pending"


def test_a_started_evaluation_is_active_and_a_finished_one_finished(team_a):
    evaluation = make_evaluation(team=team_a)
    assert evaluation.status_shown == "Active"
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)
    evaluation.refresh_from_db()
    assert evaluation.status_shown == "Finished"


def test_a_paused_evaluation_says_paused_though_its_status_is_pending(team_a):
    paused = evaluation_stop(evaluation=make_evaluation(team=team_a))
    assert paused.status == Status.PENDING
    assert paused.status_shown == "Paused"


def test_an_evaluation_whose_keywords_run_says_starting(team_a):
    evaluation = make_evaluation(team=team_a, start=False)
    evaluation.fetching = True
    assert evaluation.status_shown == "Starting"


def test_the_evaluation_page_and_the_list_show_the_paused_badge(team_a, owner):
    paused = evaluation_stop(evaluation=make_evaluation(team=team_a))
    lead = client_for(owner)
    badge = 'status-paused" data-testid="status">Paused'
    assert badge in lead.get(f"/evaluations/{paused.id}/").content.decode()
    listed = lead.get("/evaluations/").content.decode()
    assert 'status-paused">Paused' in listed and 'status-pending">' not in listed
