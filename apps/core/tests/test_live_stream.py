"""The live pages' event stream on a real uvicorn and a real Redis: a page's stream is
told when its topic changes (published by `live.changed` after the commit), hears
nothing of other topics, and refuses what it should, saying why."""

import pytest
from django.db import transaction
from django.test import override_settings

from apps.core import live, live_stream
from tests.live_stream_server import EventReader, StreamServer
from tests.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stream(redis_url):
    with (
        StreamServer(redis_url) as server,
        override_settings(
            LIVE_STREAM_URL=server.url, LIVE_REDIS_URL=redis_url, LIVE_CHANNEL=server.channel
        ),
    ):
        yield server


def opened(server: StreamServer, topic: str) -> EventReader:
    reader = EventReader(server.port, f"t={live.stream_token(topic)}")
    assert reader.status == 200
    assert reader.headers["content-type"] == "text/event-stream"
    assert reader.next_event() == ("comment", topic)  # the stream's first line names it
    return reader


def test_a_stream_is_told_when_its_topic_changes_after_the_commit(stream):
    page = opened(stream, "evaluation:7")

    with transaction.atomic():
        live.changed(evaluation_id=7)
        assert page.next_event(timeout=0.3) == ("timeout", ""), "told before the commit"

    assert page.next_event() == ("changed", "evaluation:7")
    page.close()


def test_a_stream_hears_nothing_of_other_topics_and_a_team_hears_its_evaluations(stream):
    evaluation_page = opened(stream, "evaluation:7")
    dashboard = opened(stream, "team:3")

    live.changed(evaluation_id=8, team_id=4)
    assert evaluation_page.next_event(timeout=0.5) == ("timeout", "")

    live.changed(evaluation_id=7, team_id=3)  # an evaluation's change is its team's too
    assert evaluation_page.next_event() == ("changed", "evaluation:7")
    assert dashboard.next_event() == ("changed", "team:3")
    evaluation_page.close()
    dashboard.close()


def test_changes_while_a_page_is_busy_come_as_one_event(stream):
    page = opened(stream, "team:3")
    for _ in range(5):
        live.changed(team_id=3)

    assert page.next_event() == ("changed", "team:3")
    # The five may arrive as one or a few wake-ups, never as more than five.
    extra = 0
    while page.next_event(timeout=0.3)[0] == "changed":
        extra += 1
    assert extra <= 4
    page.close()


def test_a_still_stream_gets_a_comment_to_stay_open(stream, monkeypatch):
    monkeypatch.setattr(live_stream, "KEEPALIVE_SECONDS", 0.2)
    page = opened(stream, "team:3")

    assert page.next_event(timeout=2) == ("comment", "still here")
    page.close()


def test_a_stream_ends_after_its_longest_time_and_the_browser_opens_it_again(stream, monkeypatch):
    monkeypatch.setattr(live_stream, "MAX_STREAM_SECONDS", 0.3)
    page = opened(stream, "team:3")

    assert page.next_event(timeout=0.2) == ("timeout", "")
    assert page.next_event(timeout=2) == ("closed", "")
    page.close()
    assert stream.feed.count == 0


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("", 400, "one token"),
        ("t=a&t=b", 400, "one token"),
        ("t=" + "x" * 600, 400, "over 512 bytes"),
        ("t=evaluation:7:forged:signature", 403, "not valid"),
    ],
)
def test_a_stream_is_refused_with_a_reason(stream, query, status, says):
    reader = EventReader(stream.port, query)

    assert reader.status == status
    assert says in reader.body()
    reader.close()


def test_a_token_too_old_is_refused_and_the_page_goes_back_to_asking(stream, monkeypatch):
    token = live.stream_token("team:3")
    monkeypatch.setattr(live, "STREAM_TOKEN_SECONDS", -1)

    reader = EventReader(stream.port, f"t={token}")

    assert reader.status == 403
    reader.close()


def test_a_token_names_a_topic_and_nothing_else():
    assert live.topic_of_stream_token(live.stream_token("evaluation:12")) == "evaluation:12"
    assert live.topic_of_stream_token(live.stream_token("session:12")) is None
    assert live.topic_of_stream_token("evaluation:12") is None


def test_beyond_its_connections_the_stream_answers_503(redis_url):
    with StreamServer(redis_url, max_connections=2) as server:
        first, second = opened(server, "team:1"), opened(server, "team:1")

        third = EventReader(server.port, f"t={live.stream_token('team:1')}")

        assert third.status == 503
        assert "Too many live pages" in third.body()
        for reader in (first, second, third):
            reader.close()


def test_after_redis_comes_back_every_stream_is_told_to_ask():
    if not RedisServer.available():
        pytest.skip("redis-server is not installed")
    redis = RedisServer().start()
    try:
        with StreamServer(redis.url()) as server:
            page = opened(server, "team:3")
            redis.stop()
            server.feed.subscribed.clear()
            redis.start()

            # Changes made while the subscription was down were not heard: ask anyway.
            event = page.next_event(timeout=10)
            while event[0] == "comment":
                event = page.next_event(timeout=10)
            assert event == ("changed", "team:3")
            page.close()
    finally:
        redis.close()


def test_a_page_gets_its_stream_only_where_one_runs(redis_url):
    assert live.live_page("team:3", "/live/team/3/dashboard/")["stream"] == ""

    with override_settings(LIVE_STREAM_URL="http://127.0.0.1:8001/live/stream/"):
        settings = live.live_page("team:3", "/live/team/3/dashboard/")

    assert settings["stream"].startswith("http://127.0.0.1:8001/live/stream/?t=team%3A3%3A")
    assert settings["backstop_ms"] == live.LIVE_BACKSTOP_MS
