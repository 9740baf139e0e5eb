"""The default cache in Redis, so every web process and worker sees the same entries.

What Relevo caches is derived work that can always be computed again (a comparison's
statistics, an AI judge calibration's figures). In each process's memory, two gunicorn
processes, or two machines, each computed and kept their own; in Redis one computation
serves them all (config/settings.py chooses this backend when a Redis URL is known).

Two rules follow from "derived work":

- Redis away never fails a page. A read that cannot reach Redis is a miss and a write is
  dropped; the page computes what it needs. After a failure this process leaves Redis
  alone for STORE_BACKOFF_SECONDS, so a page does not wait on a timeout for every entry.
- `clear()` deletes this cache's own keys (its KEY_PREFIX), never the whole database: by
  default the cache shares the Celery broker's Redis database, whose queued tasks a
  FLUSHDB would throw away.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What the Redis client raises when the server is unreachable, slow or refusing.
STORE_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)
STORE_BACKOFF_SECONDS = 10.0
_unavailable_until = 0.0

Answer = TypeVar("Answer")
Timeout: TypeAlias = float | None
Version: TypeAlias = int | None


def fail_open(call: Callable[[], Answer], fallback: Answer) -> Answer:
    """`call()`, or `fallback` when Redis fails now or failed within the back-off."""
    global _unavailable_until
    if time.monotonic() < _unavailable_until:
        return fallback
    try:
        return call()
    except STORE_ERRORS as error:
        _unavailable_until = time.monotonic() + STORE_BACKOFF_SECONDS
        logger.warning(
            "the shared cache (Redis) did not answer (%s); computing without it for %g s",
            error,
            STORE_BACKOFF_SECONDS,
        )
        return fallback


class SharedRedisCache(RedisCache):
    """Django's Redis cache that fails open and clears only its own keys (module doc)."""

    _cache: RedisCacheClient  # Django's own client (a cached property the stubs omit)

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        if not self.key_prefix:
            raise ImproperlyConfigured(
                "The shared cache needs a KEY_PREFIX: clear() deletes the keys under it."
            )

    # Each operation asks Redis through fail_open: a failure reads as a miss, or as nothing
    # written, deleted or added.
    def get(self, key: Any, default: Any = None, version: Version = None) -> Any:
        read = super().get
        return fail_open(lambda: read(key, default, version), default)

    def get_many(self, keys: Iterable[Any], version: Version = None) -> dict[Any, Any]:
        read, wanted = super().get_many, list(keys)
        return fail_open(lambda: read(wanted, version), {})

    def set(
        self, key: Any, value: Any, timeout: Timeout = DEFAULT_TIMEOUT, version: Version = None
    ) -> None:
        write = super().set
        fail_open(lambda: write(key, value, timeout, version), None)

    def add(
        self, key: Any, value: Any, timeout: Timeout = DEFAULT_TIMEOUT, version: Version = None
    ) -> bool:
        write = super().add
        return fail_open(lambda: write(key, value, timeout, version), False)

    def delete(self, key: Any, version: Version = None) -> bool:
        remove = super().delete
        return fail_open(lambda: remove(key, version), False)

    def clear(self) -> None:
        """Delete every key under this cache's prefix, and nothing else in the database."""
        client = self._cache.get_client(None, write=True)
        pattern = _glob_escaped(self.key_prefix) + ":*"
        batch: list[bytes] = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) == 1000:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)


def _glob_escaped(text: str) -> str:
    """`text` matched literally in a Redis SCAN pattern."""
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)
