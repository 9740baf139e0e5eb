"""apps.core.shared_cache: the default cache in a real Redis, as every web process and
machine sees it. A comparison computed by one process is read by another; Redis away is a
miss, never an error page; clear() leaves the rest of the database (the broker's queues)
alone.

Each test uses a Redis database of its own (SHARED_CACHE_DB) and a key prefix of its own,
and deletes what it wrote."""

import uuid
from urllib.parse import urlparse, urlunparse

import numpy as np
import pytest
import redis
from django.core.cache import caches

from apps.core import shared_cache
from apps.stats import paired as stats
from tests.comparison_data import shop_pair
from tests.factories import client_for

pytestmark = pytest.mark.django_db

# Not the broker's (CI: 14) nor the other tests' (15), nor the benches' (12, 13).
SHARED_CACHE_DB = 10
COMPARE = "/evaluations/compare/?e={}&e={}"


def cache_settings(location: str, prefix: str) -> dict[str, object]:
    return {
        "BACKEND": "apps.core.shared_cache.SharedRedisCache",
        "LOCATION": location,
        "KEY_PREFIX": prefix,
        "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.5},
    }


@pytest.fixture
def shared_redis(settings, redis_url):
    """The default cache in Redis under a prefix of this test's own; its keys deleted after."""
    location = urlunparse(urlparse(redis_url)._replace(path=f"/{SHARED_CACHE_DB}"))
    prefix = f"relevo-test-{uuid.uuid4().hex}"
    settings.CACHES = {**settings.CACHES, "default": cache_settings(location, prefix)}
    shared_cache._unavailable_until = 0.0
    yield redis.Redis.from_url(location), prefix
    caches["default"].clear()  # this test's prefix only


def another_process_cache() -> None:
    """Forget this process's cache client: the next use builds a new one, with its own
    connections, as another gunicorn process or machine would."""
    caches["default"].close()
    del caches["default"]


@pytest.fixture
def computations(monkeypatch):
    """Counts the comparisons' statistics actually computed (not read from the cache)."""
    computed: list[int] = []
    compare = stats.compare_paired
    monkeypatch.setattr(
        stats, "compare_paired", lambda *a, **k: computed.append(1) or compare(*a, **k)
    )
    return computed


def test_a_comparison_computed_by_one_process_is_read_by_another(
    shared_redis, owner, team_a, computations
):
    client, prefix = shared_redis
    first, second = shop_pair(team_a)
    url = COMPARE.format(first.id, second.id)

    one = client_for(owner).get(url)
    another_process_cache()
    other = client_for(owner).get(url)

    assert one.status_code == other.status_code == 200
    assert len(computations) == 1  # the second process read the first one's entry
    shown = [pair.metrics[0].result for pair in one.context["comparison"].pairs]
    read = [pair.metrics[0].result for pair in other.context["comparison"].pairs]
    assert read == shown  # the same numbers, unpickled from Redis
    stored = [key.decode() for key in client.scan_iter(match=f"{prefix}:*")]
    # One comparison entry (beside the evaluations' live tokens and sources read with it).
    assert len([key for key in stored if ":relevo:comparison:" in key]) == 1


def test_two_cache_clients_built_independently_see_the_same_entry(shared_redis, settings):
    client, prefix = shared_redis
    entry = settings.CACHES["default"]
    one, another = (
        shared_cache.SharedRedisCache(entry["LOCATION"], {**entry}) for _process in range(2)
    )
    baseline = np.array([[0.1], [0.5], [0.9], [0.4]])
    results = stats.compare_paired(baseline, baseline + 0.1)

    one.set("relevo:comparison:test", results, 60)

    assert another.get("relevo:comparison:test") == results
    assert [key.decode() for key in client.scan_iter(match=f"{prefix}:*")] == [
        f"{prefix}:1:relevo:comparison:test"
    ]


def test_clear_deletes_the_cache_s_keys_and_leaves_the_rest_of_the_database(shared_redis):
    client, prefix = shared_redis
    queue = f"relevo-test-queue-{uuid.uuid4().hex}"  # stands for the broker's queue
    client.rpush(queue, "a task")
    caches["default"].set("kept-a-while", 1, 60)
    try:
        caches["default"].clear()

        assert caches["default"].get("kept-a-while") is None
        assert client.lrange(queue, 0, -1) == [b"a task"]
        assert list(client.scan_iter(match=f"{prefix}:*")) == []
    finally:
        client.delete(queue)


def test_without_redis_the_comparison_is_computed_and_the_page_works(
    settings, owner, team_a, computations, caplog
):
    # Nothing listens on port 9 (discard): every call to Redis fails at once.
    settings.CACHES = {
        **settings.CACHES,
        "default": cache_settings("redis://127.0.0.1:9/0", "relevo-test-away"),
    }
    shared_cache._unavailable_until = 0.0
    first, second = shop_pair(team_a)

    response = client_for(owner).get(COMPARE.format(first.id, second.id))

    assert response.status_code == 200
    assert "is better than" in response.content.decode()
    assert len(computations) == 1
    warnings = [r for r in caplog.records if r.name == "apps.core.shared_cache"]
    assert len(warnings) == 1  # then the process leaves Redis alone for a while
    shared_cache._unavailable_until = 0.0
