"""Live pages: a version per topic, and the cheap "nothing changed" answer.

A live page (the evaluation page, the dashboard, the disagreement queue) asks its live
URL every LIVE_POLL_MS with the ETag of the last answer (static/js/live.js). Each answer's
ETag is the version of its topic, a random token replaced whenever what the page shows
changes (`changed`, called after the commit by the code that changed it). While the token
is the same, the answer is 304 and empty.

Topics are an evaluation ("evaluation:12": its progress, metrics, AI judges and
disagreements) and a team ("team:3": its dashboard). Live URLs name theirs in the path,
`/live/<kind>/<id>/...` (LIVE_PATH), so that `LiveShortcut`, around the WSGI application,
answers the 304 before Django runs at all: no session, no database, one read of the
shared cache. 200 pages asking every 1.5 s cost that shortcut, not 133 page renders a
second (bench/live_bench.py).

The 304 needs no login because it tells nothing: the ETag is a random token only a full
answer, which checks the person and the team, ever gave out. A change, or a token the
page never had, goes through Django as usual.

The versions live in the default cache: Redis when one is known, shared by every web
process and worker. A version expires after VERSION_SECONDS, so a change whose bump was
lost (Redis away at that moment) shows within that time, as a fresh token.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisSerializer
from django.db import transaction
from redis import Redis

from apps.core.shared_cache import SharedRedisCache, fail_open

LIVE_POLL_MS = 1500
VERSION_SECONDS = 120
LIVE_PATH = re.compile(r"^/live/(evaluation|team)/(\d+)/")
_KEY = "live:{}"


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


def etag(token: str) -> str:
    return f'"{token}"'


def live_page(topic: str, url: str) -> dict[str, Any]:
    """What a page needs to be live (templates/_live.html): its live URL, the ETag it is
    drawn at and how often to ask.

    Read before the page's content is, so a change made while it renders is caught by
    the first poll."""
    token = version(topic)
    return {"url": url, "etag": etag(token) if token else "", "every_ms": LIVE_POLL_MS}


class LiveShortcut:
    """WSGI middleware: a live URL asked with its topic's current ETag gets 304 here.

    Anything else (another URL, no If-None-Match, a changed topic, the cache away) goes to
    the application unchanged.

    It answers every poll of every open live page, so it reads the token with as little
    as it can: in Redis, with one client kept for the process. Django's cache builds a
    new Redis client for every read, which cost a 304 more than the read itself (about
    80 us of CPU; bench/README.md, issue 18 item 11). Failures still fall back as the
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
