"""API throttles: requests per token and without one, and invalid tokens per
address; each refused with 429, Retry-After and the API's usual error body. And a Redis
that does not answer breaks neither the API nor log-in."""

import logging

import pytest
from django.contrib.auth import SESSION_KEY
from django.core import mail
from django.test import Client

from apps.accounts.api_tokens import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("steady_rate_windows")]

URL = "/api/v1/evaluations/"


def bearer(text: str, address: str = "127.0.0.1") -> Client:
    return Client(headers={"Authorization": f"Bearer {text}"}, REMOTE_ADDR=address)


def assert_throttled(response) -> None:
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["errors"] == []
    assert "Expected available in" in body["detail"]


def with_rates(settings, **rates: str) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
    }


@pytest.fixture
def token_text(team_a) -> str:
    return api_token_create(team=team_a, name="ci")[1]


# --- Invalid tokens ------------------------------------------------------------------------


def test_invalid_tokens_beyond_the_limit_get_429_with_retry_after(token_text):
    guesser = bearer("rlv_0123456789ab_guess", address="203.0.113.9")

    answers = [guesser.get(URL).status_code for _ in range(30)]  # 30/min by default
    refused = guesser.get(URL)

    assert answers == [401] * 30
    assert_throttled(refused)
    assert "Too many invalid tokens were sent from this address" in refused.json()["detail"]
    # Even a right token is not looked at from there now: guessing gets nowhere.
    assert_throttled(bearer(token_text, address="203.0.113.9").get(URL))
    # Another address is not held back.
    assert bearer(token_text, address="198.51.100.20").get(URL).status_code == 200


def test_malformed_authorization_headers_count_as_invalid_tokens(settings, token_text):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_token_failures": "3/min"}
    client = Client(headers={"Authorization": "Basic dXNlcjpwYXNz"})

    assert [client.get(URL).status_code for _ in range(4)] == [401, 401, 401, 429]


def test_requests_with_a_valid_token_do_not_count_as_failures(settings, token_text):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_token_failures": "2/min"}
    client = bearer(token_text)

    assert {client.get(URL).status_code for _ in range(5)} == {200}


# --- Rates per token and without one -----------------------------------------------------


def test_a_token_over_its_rate_gets_429_with_the_usual_error_body(settings, team_a, token_text):
    with_rates(settings, token="3/min")
    client = bearer(token_text)

    answers = [client.get(URL).status_code for _ in range(3)]
    refused = client.get(URL)

    assert answers == [200, 200, 200]
    assert_throttled(refused)
    assert 0 < int(refused["Retry-After"]) <= 60
    # The count is per token: the team's other integration keeps working.
    _row, other = api_token_create(team=team_a, name="nightly")
    assert bearer(other).get(URL).status_code == 200


def test_the_rates_read_the_settings_of_the_moment(settings, token_text):
    client = bearer(token_text)
    with_rates(settings, token="1/min")
    client.get(URL)
    assert client.get(URL).status_code == 429

    with_rates(settings, token="5000/min")

    assert client.get(URL).status_code == 200


def test_the_schema_without_a_token_is_limited_per_address(settings):
    with_rates(settings, anon="2/min")
    client = Client()

    answers = [client.get("/api/schema/").status_code for _ in range(2)]

    refused = client.get("/api/schema/")

    assert answers == [200, 200]
    # The schema's own renderer writes the answer (it is not JSON there).
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert Client(REMOTE_ADDR="198.51.100.20").get("/api/schema/").status_code == 200


def test_the_default_rates_let_a_busy_integration_work(token_text):
    client = bearer(token_text)

    assert {client.get(URL).status_code for _ in range(200)} == {200}


# --- Redis down --------------------------------------------------------------------------


@pytest.fixture
def throttle_redis_down(settings):
    """The throttles count in a Redis where nothing listens."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        },
    }


def test_with_redis_down_the_api_log_in_and_password_reset_work_and_one_warning_says_so(
    throttle_redis_down, team_a, owner, token_text, caplog
):
    owner.set_password("Correct-horse-battery-42")
    owner.save(update_fields=["password"])
    caplog.set_level(logging.WARNING, logger="apps.core.ratelimit")

    api = [bearer(token_text).get(URL).status_code for _ in range(5)]
    bad_token = bearer("rlv_0123456789ab_guess").get(URL)
    browser = Client()
    login = browser.post(
        "/accounts/login/", {"username": "owner@a.test", "password": "Correct-horse-battery-42"}
    )
    reset = Client().post("/accounts/password-reset/", {"email": "owner@a.test"})

    assert api == [200] * 5
    assert bad_token.status_code == 401
    assert login.status_code == 302 and SESSION_KEY in browser.session
    assert reset.status_code == 302 and len(mail.outbox) == 1
    warnings = [r for r in caplog.records if r.name == "apps.core.ratelimit"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "Throttle store unreachable" in warnings[0].getMessage()


def test_with_redis_down_the_log_in_lock_out_still_holds(throttle_redis_down, team_a, owner):
    """The lock-out counts in the database, not in Redis."""
    client = Client()

    answers = [
        client.post("/accounts/login/", {"username": "owner@a.test", "password": f"x{n}"})
        for n in range(11)
    ]

    assert [a.status_code for a in answers][-2:] == [429, 429]
