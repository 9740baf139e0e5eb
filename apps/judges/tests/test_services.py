"""A stored judge calls its model with the key it was given, decrypted only for the call;
the deployment's setting decides whether it may reach a server on this machine."""

import pytest

from apps.judges.providers import Failure, Protocol, call_model
from apps.judges.services import judge_create, judge_update, model_settings
from tests.factories import make_team

from .fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-anthropic"


def add_judge(**fields):
    defaults = {"name": "Judge", "protocol": "openai", "model_name": "m"}
    return judge_create(team=make_team(), **{**defaults, **fields})


@pytest.fixture
def server():
    with FakeProvider() as fake:
        yield fake


def test_a_stored_judge_calls_its_model_with_its_key(server, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    judge = add_judge(
        protocol="anthropic",
        base_url=server.anthropic_url,
        model_name="claude-test",
        api_key=API_KEY,
        timeout_seconds=5,
        max_output_tokens=500,
    )
    judge.refresh_from_db()
    call = model_settings(judge)
    assert (call.protocol, call.model, call.timeout_s) == (Protocol.ANTHROPIC, "claude-test", 5.0)
    server.script(Reply.anthropic("{}"))
    assert call_model(call, "s", "u").failure is None
    sent = server.requests[0]
    assert API_KEY in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
    assert sent.body["max_tokens"] == 500


def test_a_blank_key_from_a_form_keeps_the_stored_one(settings):
    judge = add_judge(name="Local", base_url="https://models.example/v1", api_key=API_KEY)
    judge_update(judge=judge, api_key="", name="Local model")
    judge.refresh_from_db()
    assert judge.name == "Local model" and model_settings(judge).api_key == API_KEY


def test_a_judge_saved_while_local_servers_were_allowed_is_refused_once_they_are_not(
    server, settings
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    judge = add_judge(base_url=server.openai_url)
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = False
    outcome = call_model(model_settings(judge), "s", "u")
    assert outcome.failure == Failure.REFUSED and server.requests == []
