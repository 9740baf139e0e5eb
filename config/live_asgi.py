"""The live pages' event stream as an ASGI application (apps/core/live_stream.py).

    uvicorn config.live_asgi:application --host 127.0.0.1 --port 8001

A process of its own beside gunicorn: it holds every open live page's connection and
writes to one only when its topic changes. It reads the settings (the SECRET_KEY that
signs the pages' tokens, the Redis it hears changes on) and nothing else of Django's: no
database, no views.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402 (needs the settings above)
from django.core.exceptions import ImproperlyConfigured  # noqa: E402

from apps.core.live import topic_of_stream_token  # noqa: E402
from apps.core.live_stream import ChangeFeed, LiveStream  # noqa: E402

if not settings.LIVE_REDIS_URL:
    raise ImproperlyConfigured(
        "The live stream hears of changes on Redis: set LIVE_REDIS_URL, CACHE_URL or a "
        "Redis CELERY_BROKER_URL."
    )

application = LiveStream(
    feed=ChangeFeed(settings.LIVE_REDIS_URL, settings.LIVE_CHANNEL),
    topic_of_token=topic_of_stream_token,
    max_connections=settings.LIVE_STREAM_MAX_CONNECTIONS,
)
