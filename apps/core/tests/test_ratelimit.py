"""apps.core.ratelimit: fixed-window counts, the client's address behind proxies, rates
written in the environment, and a store that fails open (and one that is really shared)."""

import threading
import uuid

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.core import ratelimit
from apps.core.rates import parse_rate
from config.env import env_rate


@pytest.fixture
def clock(monkeypatch):
    """Wall-clock time for the windows, set by the test."""
    now = [1_000_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])
    return now


def test_a_rate_allows_its_count_per_window_then_starts_again(clock):
    clock[0] = 3600 * 100 + 10  # 10 s into an hour
    verdicts = [ratelimit.hit("test", "client", "3/hour") for _ in range(4)]

    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert verdicts[-1].retry_after == 3590
    clock[0] += 3590
    assert ratelimit.hit("test", "client", "3/hour").allowed


def test_counts_are_per_scope_and_per_client(clock):
    for _ in range(2):
        ratelimit.hit("test", "client", "2/min")

    assert not ratelimit.hit("test", "client", "2/min").allowed
    assert ratelimit.hit("test", "another client", "2/min").allowed
    assert ratelimit.hit("other", "client", "2/min").allowed


def test_check_does_not_count(clock):
    assert all(ratelimit.check("test", "client", "1/min").allowed for _ in range(5))
    ratelimit.hit("test", "client", "1/min")
    assert not ratelimit.check("test", "client", "1/min").allowed


def test_the_rate_defaults_to_the_settings(settings, clock):
    settings.THROTTLE_RATES = {"scope-of-test": "1/day"}

    assert ratelimit.hit("scope-of-test", "client").allowed
    assert not ratelimit.hit("scope-of-test", "client").allowed


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5/hour", (5, 3600)), ("3000/min", (3000, 60)), ("10/s", (10, 1)), ("2/days", (2, 86400))],
)
def test_rates_are_read_as_count_per_period(text, expected):
    assert parse_rate(text) == expected


@pytest.mark.parametrize("text", ["0/min", "5", "5/week", "five/min", "-1/s"])
def test_a_rate_from_the_environment_that_is_not_one_stops_start_up(text, monkeypatch):
    monkeypatch.setenv("THROTTLE_SOMETHING", text)

    with pytest.raises(ImproperlyConfigured, match="THROTTLE_SOMETHING"):
        env_rate("THROTTLE_SOMETHING", "1/min")


def test_describe_wait_reads_as_people_write():
    assert ratelimit.describe_wait(1) == "1 second"
    assert ratelimit.describe_wait(45) == "45 seconds"
    assert ratelimit.describe_wait(700) == "12 minutes"
    assert ratelimit.describe_wait(20000) == "6 hours"


# --- The client's address ----------------------------------------------------------------


def request_from(remote: str, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


def test_without_proxies_x_forwarded_for_is_ignored(settings):
    settings.TRUSTED_PROXY_COUNT = 0

    assert ratelimit.client_address(request_from("203.0.113.9", "1.2.3.4")) == "203.0.113.9"


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (1, "198.51.100.7", "198.51.100.7"),
        # The client wrote the first entry itself; the proxy appended the real address.
        (1, "1.2.3.4, 198.51.100.7", "198.51.100.7"),
        (2, "1.2.3.4, 198.51.100.7, 10.0.0.2", "198.51.100.7"),
        (3, "198.51.100.7, 10.0.0.2", "198.51.100.7"),
    ],
)
def test_behind_proxies_the_address_the_first_proxy_saw_counts(
    settings, proxies, forwarded, expected
):
    settings.TRUSTED_PROXY_COUNT = proxies

    assert ratelimit.client_address(request_from("10.0.0.1", forwarded)) == expected


@pytest.mark.parametrize("forwarded", ["unknown", "1.2.3.4, not-an-address", "1.2.3.4:8080"])
def test_behind_a_proxy_an_entry_that_is_no_address_is_not_taken(settings, forwarded):
    settings.TRUSTED_PROXY_COUNT = 1

    assert ratelimit.client_address(request_from("10.0.0.1", forwarded)) == "10.0.0.1"


def test_behind_a_proxy_without_the_header_the_connection_counts(settings):
    settings.TRUSTED_PROXY_COUNT = 1

    assert ratelimit.client_address(request_from("10.0.0.1")) == "10.0.0.1"


# --- The store ---------------------------------------------------------------------------


class DeadStore:
    calls = 0

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            DeadStore.calls += 1
            raise RedisConnectionError("Connection refused")

        return fail


def test_a_failing_store_lets_everything_through_and_is_left_alone_for_a_while(monkeypatch, caplog):
    DeadStore.calls = 0
    monkeypatch.setattr(ratelimit, "caches", {ratelimit.CACHE_ALIAS: DeadStore()})
    now = [500.0]
    monkeypatch.setattr(ratelimit.time, "monotonic", lambda: now[0])

    verdicts = [ratelimit.hit("test", "client", "1/hour") for _ in range(20)]

    assert all(v.allowed for v in verdicts)
    assert ratelimit.check("test", "client", "1/hour").allowed
    assert DeadStore.calls == 1
    assert len([r for r in caplog.records if r.name == "apps.core.ratelimit"]) == 1
    now[0] += ratelimit.STORE_BACKOFF_SECONDS + 1
    ratelimit.hit("test", "client", "1/hour")
    assert DeadStore.calls == 2  # tried again once the back-off is over


def test_with_redis_the_count_is_shared_by_every_connection(settings, redis_url):
    """Two threads have two connections to Redis, as two workers would."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url,
            # A prefix of this test's own: nothing else in that Redis is touched, and the
            # keys expire with their window.
            "KEY_PREFIX": f"relevo-test-{uuid.uuid4().hex}",
        },
    }
    client = uuid.uuid4().hex

    def count_three() -> None:
        for _ in range(3):
            ratelimit.hit("test", client, "5/min")

    worker = threading.Thread(target=count_three)
    worker.start()
    worker.join()
    count_three()

    assert not ratelimit.check("test", client, "5/min").allowed


def test_the_deploy_check_warns_about_counts_kept_per_process(settings):
    assert [m.id for m in ratelimit.check_shared_store(None)] == ["relevo.W001"]

    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "x"},
    }
    assert ratelimit.check_shared_store(None) == []
