"""From start to grading with real parts: a Celery worker on Redis runs the keywords of an
evaluation against a real search server, opens it, and a grader gets its results."""

import pytest

from apps.accounts.models import Membership
from apps.evaluations.models import Evaluation, Keyword, Snapshot, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judging.services import slot_claim_next
from apps.lifecycle.steps import evaluation_start
from tests.factories import make_grader, make_search_model, make_team
from tests.worker import stop_worker, wait_for


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_keywords_opens_the_evaluation_and_a_grader_gets_a_result(
    celery_worker_process, search_server
):
    team = make_team()
    grader = make_grader(team)
    evaluation = evaluation_create_with_keywords(
        team=team,
        name="Live 1",
        metrics=[("ndcg", 5)],
        keywords=["red shoes", "blue hat", "green socks"],
        search_model=make_search_model(team, search_server.base_url, path="/flaky"),
    )
    search_server.fail_first = 1  # each keyword's first call answers 500

    evaluation_start(evaluation=evaluation)

    def opened() -> bool:
        return Evaluation.objects.get(id=evaluation.id).status == Status.ACTIVE

    if not wait_for(opened, seconds=30):
        output = stop_worker(celery_worker_process)
        pytest.fail(f"the worker did not open the evaluation in 30 s; its output:\n{output}")
    assert set(Keyword.objects.filter(evaluation=evaluation).values_list("attempts", "failed")) == {
        (2, False)
    }
    assert Snapshot.objects.filter(keyword__evaluation=evaluation).count() == 15

    membership = Membership.objects.get(user=grader, team=team)
    slot = slot_claim_next(membership=membership)

    assert slot is not None and slot.evaluation_id == evaluation.id
    assert slot.snapshot.doc_id.endswith("-1")  # the first keyword's first result
