"""Which cache every process shares: CACHE_URL (a Redis, or a folder of files), else the
broker's Redis, else each process's own memory; anything else in CACHE_URL stops start-up
naming the variable."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import redis_or_local_cache, shared_cache_url


def test_cache_url_names_the_redis_of_the_cache():
    assert (
        shared_cache_url("redis://cache.internal:6379/3", "redis://broker:6379/0")
        == "redis://cache.internal:6379/3"
    )


def test_without_cache_url_the_cache_shares_the_broker_s_redis():
    assert shared_cache_url("", "redis://broker:6379/0") == "redis://broker:6379/0"
    assert shared_cache_url("", "rediss://broker:6380/0") == "rediss://broker:6380/0"


@pytest.mark.parametrize("broker", ["", "memory://localhost/", "amqp://guest@rabbit//"])
def test_without_any_redis_each_process_keeps_its_cache_in_memory(broker):
    assert shared_cache_url("", broker) == ""


def test_a_cache_url_that_is_not_redis_stops_start_up_naming_the_variable():
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL='memcached://x:11211'"):
        shared_cache_url("memcached://x:11211", "")


def test_a_cache_url_may_name_a_folder_that_the_processes_of_one_machine_share():
    # `make run` without Redis: the web, the worker and beat read the same live versions.
    assert shared_cache_url("file:///srv/relevo/.run/cache", "") == "file:///srv/relevo/.run/cache"

    cache = redis_or_local_cache(
        "file:///srv/relevo/.run/cache", backend="unused", prefix="relevo-cache", wait_seconds=1
    )

    assert cache["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"
    assert cache["LOCATION"] == "/srv/relevo/.run/cache"
