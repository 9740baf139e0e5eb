"""A provider's rate limits, learned from its answers' headers and shared through Redis by
every run on the same account: no more calls a minute than it allows, a pause after a
429 for every caller, fewer calls in flight after one and more after answers that pass;
another account is not held back; without Redis, calls go as before."""

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest
import redis
from celery import current_app

from apps.judges import asking, controls, rate_limits, runs
from apps.judges.asking import ask
from apps.judges.limit_headers import Limits, limits_from
from apps.judges.models import JudgeCall
from apps.judges.prompting import JudgeTask, Result, default_prompt
from apps.judges.providers import Failure
from apps.judges.services import judge_create
from tests.factories import make_evaluation

from .fake_provider import FakeProvider, Reply

ANSWER = json.dumps({"judgements": [{"id": "r1", "grade": 1, "confidence": 1, "reason": "r"}]})


# --- Reading the headers ---------------------------------------------------------------


def test_openai_headers_say_the_limits_and_when_they_reset():
    limits = limits_from(
        {
            "X-RateLimit-Limit-Requests": "60",
            "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-reset-requests": "1s",
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "149000",
            "x-ratelimit-reset-tokens": "6m0s",
        },
        datetime.now(UTC),
    )

    assert limits == Limits(60, 59, 1.0, 150_000, 149_000, 360.0, None)


def test_anthropic_headers_give_resets_as_moments():
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    later = (now + timedelta(seconds=42)).isoformat().replace("+00:00", "Z")

    limits = limits_from(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": later,
            "retry-after": "7",
        },
        now,
    )

    assert (limits.requests_limit, limits.requests_remaining) == (50, 0)
    assert (limits.requests_reset_s, limits.retry_after_s) == (42.0, 7.0)


def test_values_out_of_range_are_ignored_not_trusted():
    limits = limits_from(
        {
            "x-ratelimit-limit-requests": "-5",
            "x-ratelimit-remaining-requests": "1e9",
            "x-ratelimit-reset-requests": "99999h",
            "retry-after": "soon",
        },
        datetime.now(UTC),
    )

    assert (limits.requests_limit, limits.requests_remaining, limits.retry_after_s) == (
        None,
        None,
        None,
    )
    assert limits.requests_reset_s == 3_600.0  # at most an hour away


# --- Shared through Redis --------------------------------------------------------------


@pytest.fixture
def shared_limits(redis_url, monkeypatch, settings):
    """The broker's Redis, with a pipeline queue (so keys) of this test's own; calls wait
    at most half a second for room."""
    settings.AI_JUDGES_SHARED_RATE_LIMITS = True
    monkeypatch.setenv("CELERY_BROKER_URL", redis_url)  # Celery prefers it to its conf
    conf = current_app.conf
    saved = (conf.broker_url, conf.pipeline_queue)
    conf["broker_url"] = redis_url
    conf.pipeline_queue = f"limits-test-{threading.get_ident()}-{id(monkeypatch)}"
    rate_limits._unavailable_until = 0.0
    monkeypatch.setattr(asking, "ROOM_WAIT_MAX_S", 0.5)
    yield redis.Redis.from_url(redis_url)
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(f"relevo:judges:limits:{conf.pipeline_queue}:*"):
        client.delete(key)
    conf["broker_url"], conf.pipeline_queue = saved


def judge_on(team, server, name, key="not-a-real-key-limits", at_once=4):
    return judge_create(
        team=team,
        name=name,
        protocol="openai",
        base_url=server.openai_url,
        model_name="m",
        api_key=key,
        calls_at_once=at_once,
    )


def one_result_task(evaluation):
    return JudgeTask("red shoes", [Result("r1", "Shoe")], evaluation.grading_scale)


@pytest.mark.django_db
@pytest.mark.usefixtures("local_model_servers_allowed")
def test_two_runs_on_one_account_together_stay_under_its_requests_a_minute(team_a, shared_limits):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    task = one_result_task(evaluation)
    with FakeProvider() as server:
        limited = Reply.openai(ANSWER)
        limited.headers = {"x-ratelimit-limit-requests": "5"}
        server.script(limited)
        judges = [judge_on(team_a, server, "First"), judge_on(team_a, server, "Second")]
        outcomes: list = []

        def run(judge):
            for _ in range(6):
                outcomes.append(ask(judge, default_prompt(task.scale), task).outcome)

        threads = [threading.Thread(target=run, args=(judge,)) for judge in judges]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sent = len(server.requests)

    assert sent == 5  # the limit, learned from the first answer, held for both
    held = [o for o in outcomes if o.failure == Failure.RATE_LIMITED]
    assert len(held) == 7 and all(o.retry_after_s > 0 for o in held)
    assert "not sent" in held[0].error


@pytest.mark.django_db
@pytest.mark.usefixtures("local_model_servers_allowed")
def test_a_429_pauses_every_caller_of_the_account_and_halves_the_calls_in_flight(
    team_a, shared_limits
):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    task = one_result_task(evaluation)
    with FakeProvider() as server:
        server.script(Reply.error(429, "slow down", **{"retry-after": "30"}), Reply.openai(ANSWER))
        first, other = judge_on(team_a, server, "First"), judge_on(team_a, server, "Other")
        elsewhere = judge_on(team_a, server, "Elsewhere", key="another-account-key")

        refused = ask(first, default_prompt(task.scale), task).outcome
        held = ask(other, default_prompt(task.scale), task).outcome
        answered = ask(elsewhere, default_prompt(task.scale), task).outcome
        sent = len(server.requests)

    assert refused.failure == Failure.RATE_LIMITED and refused.retry_after_s == 30
    assert held.failure == Failure.RATE_LIMITED and 25 < held.retry_after_s <= 30
    assert answered.failure is None  # another account is not held back
    assert sent == 2
    account = rate_limits.account_of("openai", server.openai_url, "not-a-real-key-limits")
    state = shared_limits.hgetall(rate_limits._keys(account)[2])
    assert float(state[b"width"]) == 2.0  # four at once, halved


@pytest.mark.django_db
@pytest.mark.usefixtures("local_model_servers_allowed")
def test_answers_that_pass_let_more_calls_fly_up_to_the_judges_own(team_a, shared_limits):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    task = one_result_task(evaluation)
    with FakeProvider() as server:
        server.script(Reply.openai(ANSWER))
        judge = judge_on(team_a, server, "First", at_once=3)
        account = rate_limits.account_of("openai", server.openai_url, "not-a-real-key-limits")
        shared_limits.hset(rate_limits._keys(account)[2], "width", "1")

        widths = []
        for _ in range(3):
            ask(judge, default_prompt(task.scale), task)
            widths.append(float(shared_limits.hget(rate_limits._keys(account)[2], "width")))

    assert widths == [2.0, 3.0, 3.0]


def test_calls_in_flight_are_held_only_while_a_429_has_narrowed_them(shared_limits):
    account = "an-account-never-limited"
    rooms = [rate_limits.room_taken(account, most_in_flight=2, timeout_s=5) for _ in range(4)]
    assert [room.wait_s for room in rooms] == [0.0] * 4  # the runs' lanes set the pace
    shared_limits.hset(rate_limits._keys(account)[2], "width", "1")  # after a 429
    held = rate_limits.room_taken(account, most_in_flight=2, timeout_s=5)
    assert held.wait_s > 0 and not held.ticket


@pytest.mark.django_db
@pytest.mark.usefixtures("local_model_servers_allowed")
def test_without_redis_calls_go_as_before(team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    task = one_result_task(evaluation)
    with FakeProvider() as server:
        limited = Reply.openai(ANSWER)
        limited.headers = {"x-ratelimit-limit-requests": "1"}
        server.script(limited)
        judge = judge_on(team_a, server, "First")

        outcomes = [ask(judge, default_prompt(task.scale), task).outcome for _ in range(3)]

    assert [o.failure for o in outcomes] == [None, None, None]
    assert outcomes[0].limits.requests_limit == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("local_model_servers_allowed")
def test_a_call_held_back_is_not_sent_nor_counted_against_the_runs_calls(team_a, shared_limits):
    first_evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    other_evaluation = make_evaluation(team=team_a, keywords={"blue hats": 1})
    with FakeProvider() as server:
        server.script(Reply.error(429, "slow down", **{"retry-after": "30"}), Reply.openai(ANSWER))
        first = judge_on(team_a, server, "First")
        other = judge_on(team_a, server, "Other")
        first_run = controls.run_start(judge=first, evaluation=first_evaluation)
        other_run = controls.run_start(judge=other, evaluation=other_evaluation)
        runs.run_step(run_id=first_run.id)  # refused: the account pauses for 30 s
        runs.run_step(run_id=other_run.id)  # held back by the pause: nothing sent
        sent = len(server.requests)

    first_run.refresh_from_db()
    other_run.refresh_from_db()
    assert sent == 1
    assert (first_run.calls, other_run.calls) == (1, 0)
    held = JudgeCall.objects.get(run=other_run)
    assert held.error.endswith("not sent") and held.cost == 0 and held.failure == "rate_limited"
