"""Live pages: a version per topic, and the cheap "nothing changed" answer.

A topic (an evaluation, a team's dashboard) has a random token in the default cache,
renewed by `changed` after the commit of whatever changes what its pages show; a live
answer's ETag is that token, and `LiveShortcut`, around the WSGI application, answers
304 before Django runs while it is the same. Where the live stream runs, a change is
also published on Redis (LIVE_CHANNEL). How pages follow changes and why:
docs/lead-pages.md, "Live pages".
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.core.cache import caches
from django.core.cache.backends.redis import RedisSerializer
from django.db import transaction
from redis import Redis

from apps.core.shared_cache import SharedRedisCache, fail_open

LIVE_POLL_MS = 1500
LIVE_BACKSTOP_MS = 30_000
# Ten minutes: a page redraws its parts once per expiry even when nothing changed (200
# pages of a topic at 120 s cost 2 points of a core in bench/live_bench.py), and a bump
# is lost only when Redis fails at that very moment, when the metrics' catch-up after
# the outage bumps again anyway.
VERSION_SECONDS = 600
STREAM_TOKEN_SECONDS = 12 * 3600  # a page open longer goes back to asking every 1.5 s
LIVE_PATH = re.compile(r"^/live/(evaluation|team)/(\d+)/")
TOPIC = re.compile(r"^(evaluation|team):\d+$")
_KEY = "live:{}"
_STREAM_SALT = "relevo.live-stream"


def evaluation_topic(evaluation_id: int) -> str:
    return f"evaluation:{evaluation_id}"


def team_topic(team_id: int) -> str:
    return f"team:{team_id}"


def topic_of_path(path: str) -> str | None:
    """The topic a live URL names (`/live/evaluation/12/...` -> "evaluation:12")."""
    match = LIVE_PATH.match(path)
    return f"{match.group(1)}:{match.group(2)}" if match else None


def version(topic: str) -> str | None:
    """The topic's current token (a new one if it had none); None when the cache is away."""
    cache = caches["default"]
    key = _KEY.format(topic)
    token = cache.get(key)
    if token is None:
        fresh = secrets.token_hex(8)
        # Another process may add one at the same moment: then its token is the one.
        token = fresh if cache.add(key, fresh, VERSION_SECONDS) else cache.get(key)
    return token if token is None else str(token)


def current_version(topic: str) -> str | None:
    """The topic's token as it stands, without making one (the shortcut's read)."""
    token = caches["default"].get(_KEY.format(topic))
    return None if token is None else str(token)


def changed(*, evaluation_id: int | None = None, team_id: int | None = None) -> None:
    """What an evaluation's or a team's pages show changed: new tokens after the commit.

    An evaluation's change is its team's too (the dashboard shows its progress)."""
    topics = []
    if evaluation_id is not None:
        topics.append(evaluation_topic(evaluation_id))
    if team_id is not None:
        topics.append(team_topic(team_id))
    if topics:
        transaction.on_commit(lambda: _renew(topics))


def _renew(topics: list[str]) -> None:
    # The shared cache fails open: Redis away drops the bump, and the tokens' expiry
    # shows the change a little later instead (module doc).
    cache = caches["default"]
    for topic in topics:
        cache.set(_KEY.format(topic), secrets.token_hex(8), VERSION_SECONDS)
    # Published wherever Redis is known, whether or not this process was told of a
    # stream: the workers make most changes, and their settings need not name it.
    if settings.LIVE_REDIS_URL:
        publisher = _publisher()
        for topic in topics:
            fail_open(partial(publisher.publish, settings.LIVE_CHANNEL, topic), 0)


_publishers: dict[str, Redis] = {}


def _publisher() -> Redis:
    """One Redis client per process and URL for the publishes (a client keeps a pool)."""
    url = settings.LIVE_REDIS_URL
    if url not in _publishers:
        _publishers[url] = Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    return _publishers[url]


def stream_token(topic: str) -> str:
    """What lets a page open its topic's stream: the topic, signed and dated."""
    return signing.TimestampSigner(salt=_STREAM_SALT).sign(topic)


def topic_of_stream_token(token: str) -> str | None:
    """The topic a stream token names, or None if it is forged, broken or too old."""
    try:
        topic = signing.TimestampSigner(salt=_STREAM_SALT).unsign(
            token, max_age=STREAM_TOKEN_SECONDS
        )
    except signing.BadSignature:  # also SignatureExpired
        return None
    return topic if TOPIC.match(topic) else None


def etag(token: str) -> str:
    return f'"{token}"'


def live_page(topic: str, url: str) -> dict[str, Any]:
    """What a page needs to be live (templates/_live.html): its live URL, the ETag it is
    drawn at, how often to ask, and its stream where there is one.

    Read before the page's content is, so a change made while it renders is caught by
    the first ask."""
    token = version(topic)
    stream = settings.LIVE_STREAM_URL
    return {
        "url": url,
        "etag": etag(token) if token else "",
        "every_ms": LIVE_POLL_MS,
        "stream": f"{stream}?{urlencode({'t': stream_token(topic)})}" if stream else "",
        "backstop_ms": LIVE_BACKSTOP_MS,
    }


class LiveShortcut:
    """WSGI middleware: a live URL asked with its topic's current ETag gets 304 here.

    Anything else (another URL, no If-None-Match, a changed topic, the cache away) goes to
    the application unchanged.

    It answers every poll of every open live page, so it reads the token with as little
    as it can: in Redis, with one client kept for the process. Django's cache builds a
    new Redis client for every read, which cost a 304 more than the read itself (about
    80 us of CPU; bench/README.md). Failures still fall back as the
    shared cache's do (`fail_open`).
    """

    def __init__(self, application: Callable[..., Any]) -> None:
        self.application = application
        # Made at the first poll, in the process that serves it (gunicorn loads this in
        # its master and forks the workers).
        self._redis: Redis | None = None
        self._serializer = RedisSerializer()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        asked = environ.get("HTTP_IF_NONE_MATCH")
        if asked and environ.get("REQUEST_METHOD") == "GET":
            topic = topic_of_path(environ.get("PATH_INFO", ""))
            if topic is not None:
                token = self._current_token(topic)
                if token is not None and asked == etag(token):
                    start_response(
                        "304 Not Modified",
                        [("ETag", asked), ("Cache-Control", "no-cache, private")],
                    )
                    return [b""]
        return self.application(environ, start_response)

    def _current_token(self, topic: str) -> str | None:
        """current_version(topic), read straight from Redis when the cache is there."""
        cache = caches["default"]
        if not isinstance(cache, SharedRedisCache):  # in this process's memory
            return current_version(topic)
        key = cache.make_key(_KEY.format(topic))
        if self._redis is None:
            self._redis = cache._cache.get_client(key)
        raw = fail_open(partial(self._redis.get, key), None)  # bytes, or None: no token
        return str(self._serializer.loads(raw)) if isinstance(raw, bytes) else None
