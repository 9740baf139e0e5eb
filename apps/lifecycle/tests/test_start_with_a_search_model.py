"""Starting an evaluation that has a search model: its keywords run against a real search
server on 127.0.0.1, the results become snapshots, then the evaluation opens."""

import contextlib

import psycopg
import pytest
from django.db import connection

from apps.core.errors import InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Snapshot, Status
from apps.evaluations.services import evaluation_create_with_keywords, keywords_add
from apps.lifecycle import fetching
from apps.lifecycle.steps import evaluation_start, evaluation_stop
from tests.factories import make_search_model, make_team
from tests.search_server import documents_for

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def another_runner_holds(endpoint_id):
    """The endpoint's runner lock, taken as another worker process would take it."""
    if connection.vendor != "postgresql":
        with fetching.endpoint_runner_lock(endpoint_id) as held:
            assert held
            yield
        return
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute(
            "SELECT pg_advisory_lock(%s, %s)", [fetching.ENDPOINT_LOCK_SPACE, endpoint_id]
        )
        yield


@pytest.fixture
def start(django_capture_on_commit_callbacks):
    """evaluation_start, with what it queues after commit run in-process as in dev."""

    def starting(evaluation):
        with django_capture_on_commit_callbacks(execute=True):
            evaluation_start(evaluation=evaluation)
        evaluation.refresh_from_db()
        return evaluation

    return starting


def model_evaluation(team, server, *, keywords=("red shoes", "blue hat"), path="/search", **kw):
    model = make_search_model(team, server.base_url, path=path)
    return evaluation_create_with_keywords(
        team=team,
        name="Shoes 1",
        metrics=[("ndcg", 5)],
        keywords=keywords,
        search_model=model,
        **kw,
    )


def test_start_runs_every_keyword_stores_its_results_in_order_and_opens_the_evaluation(
    start,
    search_server,
):
    evaluation = model_evaluation(make_team(), search_server, strategy=3)

    evaluation = start(evaluation)

    assert evaluation.status == Status.ACTIVE and not evaluation.fetching
    assert evaluation.started_at is not None
    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert (keyword.http_status, keyword.failed, keyword.attempts) == (200, False, 1)
    assert keyword.executed_at is not None and keyword.execution_ms is not None
    stored = list(Snapshot.objects.filter(keyword=keyword).order_by("position"))
    expected = documents_for("red shoes", 5)
    assert [s.doc_id for s in stored] == [d["_id"] for d in expected]
    assert stored[0].name == "red shoes result 1"
    assert stored[0].image.endswith("/1.png") and stored[0].attributes == {"price": 10}
    assert FeedbackSlot.objects.filter(evaluation=evaluation).count() == 2 * 5 * 3
    assert evaluation.total_slots == 30


def test_a_server_error_is_tried_again_with_back_off_and_then_succeeds(start, search_server):
    search_server.fail_first = 1
    evaluation = model_evaluation(make_team(), search_server, path="/flaky")

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert (keyword.http_status, keyword.failed, keyword.attempts) == (200, False, 2)
    assert search_server.keyword_calls["red shoes"] == 2
    assert keyword.snapshots.count() == 5


def test_a_keyword_that_keeps_failing_is_recorded_with_its_code_and_message(
    start, search_server, settings
):
    settings.SEARCH_ATTEMPTS = 3
    search_server.fail_first = 10
    evaluation = model_evaluation(make_team(), search_server, path="/flaky")

    evaluation = start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert (keyword.http_status, keyword.failed, keyword.attempts) == (500, True, 3)
    assert "500" in keyword.execution_message
    assert keyword.snapshots.count() == 0
    assert evaluation.status == Status.ACTIVE  # the lead sees the failures on the page


@pytest.mark.parametrize(
    ("path", "words"),
    [("/malformed", "json"), ("/html", "json")],
)
def test_an_answer_that_is_not_json_fails_the_keyword_without_trying_again(
    start, search_server, path, words
):
    evaluation = model_evaluation(make_team(), search_server, path=path)

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert keyword.failed and keyword.attempts == 1
    assert words in keyword.execution_message.lower()


def test_empty_results_are_not_a_failure(start, search_server):
    evaluation = model_evaluation(make_team(), search_server, path="/empty")

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert (keyword.failed, keyword.http_status, keyword.execution_message) == (
        False,
        200,
        "no results",
    )


def test_a_slow_answer_past_the_endpoint_timeout_fails_the_keyword(start, search_server, settings):
    settings.SEARCH_ATTEMPTS = 1
    search_server.slow_seconds = 1.0
    team = make_team()
    model = make_search_model(team, search_server.base_url, path="/slow", timeout_seconds=0.3)
    evaluation = evaluation_create_with_keywords(
        team=team, name="Slow", metrics=[("ndcg", 5)], keywords=["a"], search_model=model
    )

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation)
    assert keyword.failed and keyword.http_status is None
    assert keyword.execution_message == "no complete answer within 0.3 s"


def test_loopback_is_refused_unless_the_setting_allows_it(start, search_server, settings):
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = False
    evaluation = model_evaluation(make_team(), search_server)

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation, text="red shoes")
    assert keyword.failed and keyword.attempts == 1
    assert "127.0.0.1" in keyword.execution_message
    assert search_server.calls["/search"] == 0


def test_requests_in_flight_never_exceed_the_concurrency_per_endpoint(
    start, search_server, settings
):
    settings.SEARCH_CONCURRENCY_PER_ENDPOINT = 3
    search_server.delay_seconds = 0.05
    keywords = [f"keyword {n}" for n in range(30)]
    evaluation = model_evaluation(make_team(), search_server, keywords=keywords)

    start(evaluation)

    assert search_server.most_in_flight == 3
    assert Keyword.objects.filter(evaluation=evaluation, executed_at__isnull=False).count() == 30
    assert Snapshot.objects.filter(keyword__evaluation=evaluation).count() == 150


def test_a_pause_while_keywords_run_stops_the_run_and_a_resume_runs_only_the_rest(
    start, search_server, settings, monkeypatch
):
    settings.SEARCH_CONCURRENCY_PER_ENDPOINT = 1
    keywords = [f"keyword {n}" for n in range(10)]
    evaluation = model_evaluation(make_team(), search_server, keywords=keywords)
    monkeypatch.setattr(fetching, "CHECK_EVERY_SECONDS", 0.0)
    monkeypatch.setattr(fetching, "STORE_EVERY_KEYWORDS", 1)
    real_renew = fetching._renew_lease
    checks = []

    def lead_pauses_on_the_third_check(evaluation_id):
        checks.append(evaluation_id)
        if len(checks) == 3:
            evaluation_stop(evaluation=Evaluation.objects.get(id=evaluation_id))
        return real_renew(evaluation_id)

    monkeypatch.setattr(fetching, "_renew_lease", lead_pauses_on_the_third_check)

    evaluation = start(evaluation)

    assert evaluation.status == Status.PENDING and not evaluation.fetching
    run_first = set(
        Keyword.objects.filter(evaluation=evaluation, executed_at__isnull=False).values_list(
            "text", flat=True
        )
    )
    assert 0 < len(run_first) < 10

    monkeypatch.setattr(fetching, "_renew_lease", real_renew)
    evaluation = start(evaluation)

    assert evaluation.status == Status.ACTIVE
    assert all(search_server.keyword_calls[text] == 1 for text in keywords)
    assert Snapshot.objects.filter(keyword__evaluation=evaluation).count() == 50


def test_keywords_added_while_paused_run_when_grading_resumes(start, search_server):
    evaluation = start(model_evaluation(make_team(), search_server))
    evaluation = evaluation_stop(evaluation=evaluation)
    keywords_add(evaluation=evaluation, texts=["green socks"])

    evaluation = start(evaluation)

    assert evaluation.status == Status.ACTIVE
    assert search_server.keyword_calls["red shoes"] == 1
    assert search_server.keyword_calls["green socks"] == 1
    assert evaluation.total_slots == 15


def test_a_second_runner_finds_the_lease_taken(search_server):
    evaluation = model_evaluation(make_team(), search_server)
    Evaluation.objects.filter(id=evaluation.id).update(fetching=True)
    assert fetching._take_lease(evaluation.id)

    assert fetching.evaluation_fetch(evaluation_id=evaluation.id) == "busy"
    assert search_server.calls["/search"] == 0


def test_an_endpoint_busy_with_another_evaluation_waits_and_the_sweep_finds_the_run(
    search_server,
):
    evaluation = model_evaluation(make_team(), search_server)
    Evaluation.objects.filter(id=evaluation.id).update(fetching=True)
    endpoint_id = evaluation.search_model.endpoint_id

    with another_runner_holds(endpoint_id):
        outcome = fetching.evaluation_fetch(evaluation_id=evaluation.id)

    assert outcome == "endpoint busy"
    assert fetching.stalled_fetches() == [evaluation.id]
    assert fetching.evaluation_fetch(evaluation_id=evaluation.id) == "opened"


def test_a_result_stored_twice_by_racing_runners_is_kept_once(search_server):
    evaluation = model_evaluation(make_team(), search_server, keywords=["red shoes"])
    keyword = Keyword.objects.get(evaluation=evaluation)
    call = fetching._Runner(evaluation, [])
    outcome = fetching.KeywordOutcome(keyword.id, call.call.run("red shoes"), 1)

    assert fetching.store_outcomes(evaluation=evaluation, outcomes=[outcome]) == 1
    assert fetching.store_outcomes(evaluation=evaluation, outcomes=[outcome]) == 0
    assert keyword.snapshots.count() == 5
    evaluation.refresh_from_db()
    assert evaluation.total_slots == 5


def test_starting_twice_while_keywords_run_is_refused(start, search_server):
    evaluation = model_evaluation(make_team(), search_server)
    Evaluation.objects.filter(id=evaluation.id).update(fetching=True)
    evaluation.refresh_from_db()

    with pytest.raises(InvalidState, match="already starting"):
        start(evaluation)


def test_a_search_answer_nested_too_deep_fails_its_keyword_with_the_reason(start, search_server):
    evaluation = model_evaluation(make_team(), search_server, keywords=["shoes"], path="/deep")

    start(evaluation)

    keyword = Keyword.objects.get(evaluation=evaluation)
    assert keyword.failed
    assert "nested deeper than 20 levels" in keyword.execution_message


def test_a_result_image_that_is_not_a_web_address_is_left_out(start, search_server):
    evaluation = model_evaluation(
        make_team(), search_server, keywords=["shoes"], path="/script-images"
    )

    start(evaluation)

    stored = Snapshot.objects.filter(keyword__evaluation=evaluation).order_by("position")
    assert [(s.doc_id, s.image) for s in stored] == [("a", ""), ("b", "https://img.example/b")]
