"""With the broker (Redis) unreachable, every write that queues a task after its commit
saves its data and answers normally; the periodic sweeps do the queued work later.

Two of these paths used to publish with a bare `.delay()` after the commit (the recompute
after a start that reused grades, and the recompute after a settings edit): the request
raised once its data was saved. Every task is now queued through apps.core.queueing.
"""

import time

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.core import queueing
from apps.evaluations.models import EvaluationMetric, FeedbackSlot, Keyword, Status
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.fetching import stalled_fetches
from apps.lifecycle.steps import evaluation_finish_now
from apps.lifecycle.tasks import resume_stalled_fetches
from apps.scoring.tasks import recompute_marked
from tests.factories import make_evaluation, make_grader, make_search_model, make_team, slots_of

# Real commits: the tasks are queued when the request's transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

# Publishing to a port where nothing listens is refused at once; waiting on a broker
# that is down (retries, long timeouts) would show up as slow answers.
FAST_SECONDS = 3


@pytest.fixture
def team():
    return make_team()


@pytest.fixture
def api(team) -> Client:
    _token, text = api_token_create(team=team, name="ci")
    return Client(headers={"Authorization": f"Bearer {text}"})


def graded_and_finished(team, grader) -> None:
    """An earlier evaluation of the team whose first result has a grade to reuse."""
    earlier = make_evaluation(team=team, keywords={"red shoes": 2})
    slot_judge(slot_id=slots_of(earlier)[0].id, giver=Giver.recorded(grader), grade=3)
    evaluation_finish_now(evaluation=earlier)


def timed(request):
    started = time.monotonic()
    response = request()
    elapsed = time.monotonic() - started
    assert elapsed < FAST_SECONDS, f"the answer waited on the broker for {elapsed:.1f} s"
    return response


def test_a_start_that_reuses_grades_is_saved_and_answers_with_the_broker_down(
    broker_down, api, team
):
    graded_and_finished(team, make_grader(team))
    evaluation = make_evaluation(
        team=team, reuse="keyword_doc", keywords={"red shoes": 2}, start=False
    )

    response = timed(lambda: api.post(f"/api/v1/evaluations/{evaluation.id}/start/"))

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "active"
    evaluation.refresh_from_db()
    assert evaluation.status == Status.ACTIVE
    assert FeedbackSlot.objects.filter(evaluation=evaluation, reused=True).count() == 1
    # The recompute could not be queued: the reused grade's keyword waits for the sweep.
    assert Keyword.objects.get(evaluation=evaluation).needs_scoring
    assert queueing._broker_unavailable_until > time.monotonic()

    queueing.broker_failure_forget()
    recompute_marked()  # what beat runs once the broker is back

    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")
    assert ndcg.value is not None
    assert not Keyword.objects.get(evaluation=evaluation).needs_scoring


def test_a_settings_edit_that_changes_the_metrics_is_saved_and_answers_with_the_broker_down(
    broker_down, api, team
):
    evaluation = make_evaluation(team=team, metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    slot_judge(slot_id=first.id, giver=Giver.recorded(None, "import"), grade=3)
    slot_judge(slot_id=second.id, giver=Giver.recorded(None, "import"), grade=1)
    api.post(f"/api/v1/evaluations/{evaluation.id}/stop/")
    recompute_marked()  # the grades' recomputes could not be queued either
    queueing.broker_failure_forget()  # the edit tries the broker afresh

    response = timed(
        lambda: api.patch(
            f"/api/v1/evaluations/{evaluation.id}/",
            {"metrics": [{"metric": "cg", "k": 5}, {"metric": "dcg", "k": 5}]},
            content_type="application/json",
        )
    )

    assert response.status_code == 200, response.content
    assert [m["metric"] for m in response.json()["metrics"]] == ["cg", "dcg"]
    assert Keyword.objects.get(evaluation=evaluation).needs_scoring  # left for the sweep
    assert queueing._broker_unavailable_until > time.monotonic()

    recompute_marked()

    dcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="dcg")
    assert dcg.value is not None


def test_a_start_that_runs_a_search_model_is_saved_and_the_sweep_resumes_it(broker_down, api, team):
    model = make_search_model(team, "http://127.0.0.1:9")  # never called: nothing runs
    evaluation = make_evaluation(team=team, search_model=model, start=False)

    response = timed(lambda: api.post(f"/api/v1/evaluations/{evaluation.id}/start/"))

    assert response.status_code == 200, response.content
    evaluation.refresh_from_db()
    assert evaluation.fetching and evaluation.status == Status.PENDING
    assert stalled_fetches() == [evaluation.id]  # what resume_stalled_fetches picks up

    # The beat task itself survives the broker being down, and leaves the fetch waiting.
    assert timed(resume_stalled_fetches) == 1
    assert stalled_fetches() == [evaluation.id]
