"""Counting requests per client so that nobody can ask for something without limit.

    verdict = ratelimit.hit("password_reset_address", client_address(request))
    if not verdict.allowed: ...   # verdict.retry_after: seconds until it is allowed again

A rate ("5/hour") is counted in fixed windows: the hour from 10:00 to 11:00 allows 5,
then the count starts again. (A client can fit 2 x 5 around a window's edge; for a
guard against abuse that is fine, and it costs one counter per client per window.)
Rates are named in settings.THROTTLE_RATES; the API's throttles pass their own.

Where the counts live, and why (the "throttle" cache of config/settings.py):

- Redis when THROTTLE_REDIS_URL is set: one count shared by every gunicorn worker and
  every machine. Not the database: the API throttle counts every API request, and a
  write on every read is what this project avoids (see apps/accounts/api_tokens.py).
- This process's memory otherwise: right for a developer's single process; with several
  workers each counts alone (`manage.py check --deploy` warns, docs/security.md).

A throttle is a guard, not a feature: when Redis does not answer, counting fails open.
The request goes through as if under its limit, one warning is logged, and this process
leaves Redis alone for STORE_BACKOFF_SECONDS, so that nobody waits on a dead server.
Log-in, grading and the API keep working while Redis is down. (The log-in lock-out,
the guard that must hold, counts in the database: apps/accounts/lockout.py.)
"""

import hashlib
import ipaddress
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.cache import caches
from django.http import HttpRequest
from redis.exceptions import RedisError

from .rates import parse_rate

logger = logging.getLogger(__name__)

CACHE_ALIAS = "throttle"
# What the Redis client raises when the server is unreachable, slow or refusing.
STORE_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)
# After a failure this process counts nothing (everything allowed) for this long.
STORE_BACKOFF_SECONDS = 10.0
_store_unavailable_until = 0.0


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    # Seconds until the current window ends, when the count starts again.
    retry_after: int


ALLOWED = Verdict(allowed=True, retry_after=0)


def hit(scope: str, ident: str, rate: str | None = None) -> Verdict:
    """Count one request of `ident` (a client address, an email...) in `scope`.

    Allowed while the count in the current window is within the rate; `rate` defaults
    to settings.THROTTLE_RATES[scope]."""
    count_per_window, seconds = parse_rate(rate or settings.THROTTLE_RATES[scope])
    key, retry_after = _window(scope, ident, seconds)
    count = _store_call(_increment, key, seconds)
    if count is None:
        return ALLOWED
    return Verdict(allowed=count <= count_per_window, retry_after=retry_after)


def check(scope: str, ident: str, rate: str | None = None) -> Verdict:
    """Whether one more would be allowed, without counting it (hit() counts)."""
    count_per_window, seconds = parse_rate(rate or settings.THROTTLE_RATES[scope])
    key, retry_after = _window(scope, ident, seconds)
    count = _store_call(lambda: caches[CACHE_ALIAS].get(key, 0))
    if count is None:
        return ALLOWED
    return Verdict(allowed=count < count_per_window, retry_after=retry_after)


def clear() -> None:
    """Forget every count and any store failure (tests start from nothing)."""
    global _store_unavailable_until
    _store_unavailable_until = 0.0
    _store_call(lambda: caches[CACHE_ALIAS].clear())


def describe_wait(seconds: int) -> str:
    """A wait as people read it: "45 seconds", "12 minutes", "2 hours"."""
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    if seconds < 2 * 3600:
        return f"{math.ceil(seconds / 60)} minutes"
    return f"{math.ceil(seconds / 3600)} hours"


def client_address(request: HttpRequest) -> str:
    """The address of the client who sent the request, as the lock-out and the throttles
    count it.

    With TRUSTED_PROXY_COUNT proxies in front of Relevo, each appends the address it
    received from to X-Forwarded-For, so the client's is the one the first proxy added:
    TRUSTED_PROXY_COUNT places from the end. Entries before it were written by the client
    and prove nothing. Without proxies (the default), REMOTE_ADDR is the client.
    """
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        addresses = [part.strip() for part in forwarded.split(",")]
        chosen = addresses[-min(proxies, len(addresses))]
        # Only an address: the lock-out stores it in an inet column on PostgreSQL, where
        # anything else (a client's "unknown", a typo) would fail the log-in.
        if _is_address(chosen):
            return chosen
    return str(request.META.get("REMOTE_ADDR", ""))


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _now() -> float:
    """The wall-clock time the windows are cut from (a test may pin it)."""
    return time.time()


def _window(scope: str, ident: str, seconds: int) -> tuple[str, int]:
    """The counter's key in the current window, and the seconds left in that window."""
    now = _now()
    window = int(now // seconds)
    # Hashed: keys stay short and safe for any store, and Redis holds no email addresses.
    digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
    return f"{scope}:{seconds}:{window}:{digest}", max(1, math.ceil((window + 1) * seconds - now))


def _increment(key: str, seconds: int) -> int:
    store = caches[CACHE_ALIAS]
    # add() creates the counter only if this window has none yet; incr() is atomic in
    # Redis, so two workers counting at once both count.
    store.add(key, 0, timeout=seconds)
    try:
        return int(store.incr(key))
    except ValueError:  # expired between the two calls, at the window's very end
        store.set(key, 1, timeout=seconds)
        return 1


def _store_call(function: Any, *args: Any) -> Any:
    """function(*args), or None when the store failed or failed a moment ago."""
    global _store_unavailable_until
    if time.monotonic() < _store_unavailable_until:
        return None
    try:
        return function(*args)
    except STORE_ERRORS as error:
        _store_unavailable_until = time.monotonic() + STORE_BACKOFF_SECONDS
        logger.warning(
            "Throttle store unreachable (%s: %s): throttles let requests through for %.0f s.",
            type(error).__name__,
            error,
            STORE_BACKOFF_SECONDS,
        )
        return None


@checks.register(checks.Tags.security, deploy=True)
def check_shared_store(app_configs: Any, **kwargs: Any) -> list[checks.CheckMessage]:
    """`check --deploy`: throttles counted in each process's memory count per worker."""
    backend = str(settings.CACHES.get(CACHE_ALIAS, {}).get("BACKEND", ""))
    if backend.endswith("LocMemCache"):
        return [
            checks.Warning(
                "Throttles count in each process's memory: with several web workers, each "
                "allows the full rate.",
                hint="Set THROTTLE_REDIS_URL to a Redis database (docs/security.md).",
                id="relevo.W001",
            )
        ]
    return []
