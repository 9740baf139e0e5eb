import pytest

from apps.evaluations.models import Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.lifecycle.steps import evaluation_start
from apps.tries.starting import TryRequest, try_start
from tests.factories import make_grader

from .tuned import ASKED, grade_open_slots, make_tuned_model


@pytest.fixture
def tuned_model(team_a, search_server):
    return make_tuned_model(team_a, search_server)


@pytest.fixture
def graded_today(team_a, search_server, tuned_model):
    """The model's evaluation of eight results a query, every one graded by people."""
    search_server.results = 8
    evaluation = evaluation_create_with_keywords(
        team=team_a,
        name="Today",
        metrics=[("ndcg", 5)],
        keywords=ASKED,
        search_model=tuned_model,
    )
    evaluation_start(evaluation=evaluation)  # its keywords run here (tasks in-process)
    grade_open_slots(evaluation, make_grader(team_a))
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED
    return evaluation


@pytest.fixture
def boost_down(team_a, graded_today):
    """Boost 1 ranks the pool worst first: documents 10 and 9, which nobody judged, on top."""
    return try_start(
        team=team_a,
        user=None,
        asked=TryRequest(model="Tuned", evaluation=graded_today.id, params={"boost": 1}),
    )
