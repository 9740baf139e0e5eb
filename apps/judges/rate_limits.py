"""A provider's rate limits, learned from its answers and shared by every run and
calibration that calls the same account (protocol, address and API key), through the
broker's Redis, so that several runs never trip one account's limit together.

Before a call takes room (`room_taken`); after it, what the answer said is kept
(`room_given_back`):

- the requests a minute the provider allows (its `...-limit-requests` header): calls are
  counted over the last minute, and none is sent past that many;
- a pause: after a 429 until its Retry-After (or RATE_LIMITED_PAUSE_S), and while the
  answers say no request or token is left, until their reset;
- the calls in flight, once a 429 came: half of the judge's calls_at_once, halved again
  after each 429 and grown by one after each answer that was not (additive increase,
  multiplicative decrease). Grown back to calls_at_once, the limiter leaves the calls in
  flight to the runs' own lanes again: an account that never said "too many" is never
  slowed by it.

Where Redis is not there (the embedded default's in-process tasks), does not answer, or
AI_JUDGES_SHARED_RATE_LIMITS is off, calls go as they always did: each run honours the
429s and Retry-After it meets itself. A limiter is a guard, not a gate: it fails open.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from dataclasses import dataclass

import redis
from celery import current_app
from django.conf import settings

from .limit_headers import Limits

WINDOW_S = 60.0
RATE_LIMITED_PAUSE_S = 1.0
STATE_TTL_S = 3_600
# After Redis failed, this process leaves it alone for this long.
BACKOFF_S = 10.0

_TAKE = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[5]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local pause = tonumber(redis.call('HGET', KEYS[3], 'pause_until') or '0')
if pause > now then return tostring(pause - now) end
local limit = tonumber(redis.call('HGET', KEYS[3], 'limit') or '0')
if limit > 0 and redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tostring(tonumber(oldest[2]) + tonumber(ARGV[5]) - now)
end
local most = tonumber(ARGV[3])
local width = tonumber(redis.call('HGET', KEYS[3], 'width') or ARGV[3])
if width > most then width = most end
if width < most and redis.call('ZCARD', KEYS[2]) >= math.max(1, math.floor(width)) then
  return '0.05'
end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), ARGV[2])
for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, tonumber(ARGV[6])) end
return '0'
"""

_GIVE_BACK = """
local now = tonumber(ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
-- The call counts from its answer on: never earlier than the provider counted it.
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[2])
local most = tonumber(ARGV[3])
local width = tonumber(redis.call('HGET', KEYS[3], 'width') or ARGV[3])
if ARGV[4] == '1' then width = math.max(1, width / 2) else width = math.min(most, width + 1) end
redis.call('HSET', KEYS[3], 'width', tostring(width))
if tonumber(ARGV[5]) > 0 then redis.call('HSET', KEYS[3], 'limit', ARGV[5]) end
local pause = tonumber(ARGV[6])
if pause > 0 then
  local until_ = now + pause
  local current = tonumber(redis.call('HGET', KEYS[3], 'pause_until') or '0')
  if until_ > current then redis.call('HSET', KEYS[3], 'pause_until', tostring(until_)) end
end
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[7]))
return '0'
"""

_clients: dict[tuple[int, str], redis.Redis] = {}
_unavailable_until = 0.0


@dataclass(frozen=True)
class Room:
    """A call's room: `wait_s` 0 and a ticket when taken, else how long to wait."""

    wait_s: float
    ticket: str = ""


TAKEN_WITHOUT_REDIS = Room(0.0)


def account_of(protocol: str, base_url: str, api_key: str) -> str:
    """One name per provider account; the key itself never leaves this process."""
    material = f"{protocol}\n{base_url.rstrip('/')}\n{api_key}".encode()
    return hashlib.sha256(material).hexdigest()[:24]


def room_taken(account: str, *, most_in_flight: int, timeout_s: float) -> Room:
    """Room for one call to the account, or how long until there may be some."""
    client = _redis()
    if client is None:
        return TAKEN_WITHOUT_REDIS
    ticket = uuid.uuid4().hex
    now = time.time()
    try:
        wait = client.eval(
            _TAKE,
            3,
            *_keys(account),
            now,
            ticket,
            max(1, most_in_flight),
            now + timeout_s + 5,
            WINDOW_S,
            STATE_TTL_S,
        )
    except (redis.RedisError, OSError, ValueError):
        _back_off()
        return TAKEN_WITHOUT_REDIS
    seconds = float(wait)
    return Room(0.0, ticket) if seconds <= 0 else Room(seconds)


def room_given_back(
    account: str, room: Room, *, most_in_flight: int, limits: Limits | None, rate_limited: bool
) -> None:
    """The call is over: its room is free, and what its answer said is learned."""
    client = _redis()
    if client is None or not room.ticket:
        return
    pause = pause_after(limits, rate_limited=rate_limited)
    limit = limits.requests_limit if limits and limits.requests_limit else 0
    with contextlib.suppress(redis.RedisError, OSError, ValueError):
        client.eval(
            _GIVE_BACK,
            3,
            *_keys(account),
            time.time(),
            room.ticket,
            max(1, most_in_flight),
            "1" if rate_limited else "0",
            limit,
            pause,
            STATE_TTL_S,
        )


def pause_after(limits: Limits | None, *, rate_limited: bool) -> float:
    """How long every call to the account waits after this answer (0: none)."""
    pauses = []
    if rate_limited:
        retry = limits.retry_after_s if limits else None
        pauses.append(retry if retry is not None else RATE_LIMITED_PAUSE_S)
    if limits is not None:
        if limits.requests_remaining == 0 and limits.requests_reset_s:
            pauses.append(limits.requests_reset_s)
        if limits.tokens_remaining == 0 and limits.tokens_reset_s:
            pauses.append(limits.tokens_reset_s)
    return max(pauses, default=0.0)


def _keys(account: str) -> tuple[str, str, str]:
    # Named after the deployment's pipeline queue: tests and benches keep their own.
    base = f"relevo:judges:limits:{current_app.conf.pipeline_queue}:{account}"
    return f"{base}:sent", f"{base}:in-flight", f"{base}:state"


def _redis() -> redis.Redis | None:
    """This process's client of the broker's Redis; None without one, or while it is
    left alone after failing."""
    url = str(current_app.conf.broker_url or "")
    if (
        not settings.AI_JUDGES_SHARED_RATE_LIMITS
        or not url.startswith(("redis://", "rediss://", "unix://"))
        or time.monotonic() < _unavailable_until
    ):
        return None
    client = _clients.get((os.getpid(), url))
    if client is None:
        client = redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.5)
        _clients.clear()
        _clients[(os.getpid(), url)] = client
    return client


def _back_off() -> None:
    global _unavailable_until
    _unavailable_until = time.monotonic() + BACKOFF_S
