"""One call through the real `openai` and `anthropic` clients to a real local server that
speaks their protocols: answers, tokens, truncation, refusals, and every failure kind
with whether to retry, the API key sent to the provider and kept out of every error."""

from decimal import Decimal

import pytest

from apps.judges.asking import call_cost
from apps.judges.providers import CallOutcome, Failure, ModelSettings, Protocol, call_model
from apps.judges.services import judge_create

from .fake_provider import FakeProvider, Reply

API_KEY = "not-a-real-key-secret"
ANSWER = '{"judgements": [{"id": "r1", "grade": 2, "reason": "Close."}]}'
SCHEMA = {"type": "object"}


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


def settings(server, protocol=Protocol.OPENAI, **changes) -> ModelSettings:
    url = server.openai_url if protocol == Protocol.OPENAI else server.anthropic_url
    options = {"allow_private": True, "timeout_s": 2.0, "temperature": 0.0}
    options.update(changes)
    return ModelSettings(protocol, url, "test-model", API_KEY, **options)


def test_an_openai_compatible_server_answers_with_text_and_tokens(server):
    server.script(Reply.openai(ANSWER, tokens=(321, 45)))
    outcome = call_model(settings(server), "system text", "user text", SCHEMA)
    assert outcome.failure is None and outcome.text == ANSWER
    assert (outcome.input_tokens, outcome.output_tokens) == (321, 45)
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {API_KEY}"
    assert seen.body["model"] == "test-model" and seen.body["temperature"] == 0.0
    assert seen.body["messages"][0] == {"role": "system", "content": "system text"}
    assert seen.body["response_format"]["json_schema"]["schema"] == SCHEMA


def test_without_structured_output_no_response_format_is_sent(server):
    server.script(Reply.openai(ANSWER))
    call_model(settings(server, structured=False), "s", "u", SCHEMA)
    assert "response_format" not in server.requests[0].body


def test_anthropic_answers_through_the_messages_api(server):
    server.script(Reply.anthropic(ANSWER, tokens=(200, 20)))
    outcome = call_model(settings(server, Protocol.ANTHROPIC), "system text", "user text")
    assert outcome.failure is None and outcome.text == ANSWER
    assert (outcome.input_tokens, outcome.output_tokens) == (200, 20)
    (seen,) = server.requests
    assert seen.path == "/v1/messages"
    assert API_KEY in (
        seen.headers.get("x-api-key"),
        seen.headers.get("authorization", "").removeprefix("Bearer "),
    )
    # The instructions are marked for Anthropic's prompt cache.
    assert seen.body["system"] == [
        {"type": "text", "text": "system text", "cache_control": {"type": "ephemeral"}}
    ]
    assert seen.body["temperature"] == 0.0


@pytest.mark.parametrize("protocol", [Protocol.OPENAI, Protocol.ANTHROPIC])
def test_tokens_read_from_the_prompt_cache_are_counted_among_the_input(server, protocol):
    reply = (
        Reply.openai(ANSWER, tokens=(2_000, 20), cached=1_536)
        if protocol == Protocol.OPENAI
        # Anthropic counts the cached tokens apart from its input_tokens.
        else Reply.anthropic(ANSWER, tokens=(464, 20), cache_read=1_536)
    )
    server.script(reply)

    outcome = call_model(settings(server, protocol), "system text", "user text")

    assert (outcome.input_tokens, outcome.cached_input_tokens) == (2_000, 1_536)


def test_anthropic_gets_the_schema_as_its_output_format_and_no_temperature_unless_set(server):
    server.script(Reply.anthropic(ANSWER))
    call_model(settings(server, Protocol.ANTHROPIC, temperature=None), "s", "u", SCHEMA)
    body = server.requests[0].body
    assert body["output_config"]["format"] == {"type": "json_schema", "schema": SCHEMA}
    assert "temperature" not in body


@pytest.mark.parametrize("protocol", [Protocol.OPENAI, Protocol.ANTHROPIC])
def test_an_answer_cut_off_at_max_tokens_is_marked_truncated(server, protocol):
    reply = (
        Reply.openai('{"judgements": [{"id": "r1", "gra', finish_reason="length")
        if protocol == Protocol.OPENAI
        else Reply.anthropic('{"judgements": [{"id": "r1", "gra', stop_reason="max_tokens")
    )
    server.script(reply)
    outcome = call_model(settings(server, protocol), "s", "u")
    assert outcome.truncated and outcome.failure is None


@pytest.mark.parametrize("protocol", [Protocol.OPENAI, Protocol.ANTHROPIC])
def test_a_429_says_how_long_to_wait(server, protocol):
    server.script(Reply.error(429, "slow down", **{"retry-after": "7"}))
    outcome = call_model(settings(server, protocol), "s", "u")
    assert outcome.failure == Failure.RATE_LIMITED and outcome.retryable
    assert outcome.retry_after_s == 7.0
    assert len(server.requests) == 1  # the client's own retries are off


@pytest.mark.parametrize(
    ("reply", "failure", "retryable"),
    [
        (Reply.error(500, "boom"), Failure.UNAVAILABLE, True),
        (Reply.error(503, "overloaded"), Failure.UNAVAILABLE, True),
        (Reply.error(401, f"Incorrect API key provided: {API_KEY}"), Failure.REJECTED, False),
        (Reply.error(400, "response_format is not supported"), Failure.REJECTED, False),
        (Reply.openai(ANSWER, tokens=(1, 1)).__class__(delay_s=3.0), Failure.TIMEOUT, True),
    ],
)
def test_failures_say_whether_trying_again_may_help(server, reply, failure, retryable):
    server.script(reply)
    outcome = call_model(settings(server, timeout_s=1.0), "s", "u")
    assert (outcome.failure, outcome.retryable) == (failure, retryable)
    assert API_KEY not in outcome.error and outcome.error


def test_a_body_that_is_not_json_is_a_failure_not_an_exception(server):
    server.script(Reply(body="<html>bad gateway</html>"))
    outcome = call_model(settings(server), "s", "u")
    assert outcome.failure == Failure.MALFORMED and not outcome.retryable and not outcome.text


def test_the_local_machine_is_refused_unless_the_deployment_allows_it(server):
    server.script(Reply.openai(ANSWER))
    outcome = call_model(settings(server, allow_private=False), "s", "u")
    assert outcome.failure == Failure.REFUSED and not outcome.retryable
    assert "loopback" in outcome.error
    assert server.requests == []  # nothing was sent


def test_an_answer_larger_than_the_limit_is_refused(server, monkeypatch):
    from apps.judges import providers

    monkeypatch.setattr(providers, "MAX_ANSWER_BYTES", 1_000)
    server.script(Reply.openai("x" * 5_000))
    outcome = call_model(settings(server), "s", "u")
    assert outcome.failure == Failure.TOO_LARGE


@pytest.mark.django_db
def test_cached_input_tokens_cost_their_own_price_when_one_is_set(team_a):
    judge = judge_create(
        team=team_a,
        name="Cheap cache",
        protocol="openai",
        base_url="https://api.openai.com/v1",
        model_name="gpt-test",
        price_input_per_million="2",
        price_output_per_million="8",
        price_cached_input_per_million="0.5",
    )
    outcome = CallOutcome(input_tokens=2_000, cached_input_tokens=1_500, output_tokens=100)

    # 500 input at $2, 1,500 cached at $0.50, 100 output at $8, per million.
    assert call_cost(judge, outcome) == Decimal("0.00255")
    judge.price_cached_input_per_million = None
    assert call_cost(judge, outcome) == Decimal("0.0048")
