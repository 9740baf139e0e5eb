"""Live pages' versions and the shortcut that answers "nothing changed" before Django.

The shortcut is called as a WSGI server calls it; the application behind it records
whether it was reached."""

import pytest
from django.core.cache import caches
from django.db import transaction

from apps.core import live

pytestmark = pytest.mark.django_db(transaction=True)


class Behind:
    """The application behind the shortcut: answers 200 and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"rendered"]


def call(app, path: str, *, if_none_match: str | None = None, method: str = "GET"):
    answered = {}

    def start_response(status, headers):
        answered["status"], answered["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": method, "PATH_INFO": path}
    if if_none_match is not None:
        environ["HTTP_IF_NONE_MATCH"] = if_none_match
    body = b"".join(app(environ, start_response))
    return answered["status"], answered["headers"], body


@pytest.fixture(autouse=True)
def empty_cache():
    caches["default"].clear()


def test_a_topic_gets_a_token_once_and_keeps_it_until_it_changes():
    first = live.version("evaluation:7")
    assert first is not None and len(first) == 16
    assert live.version("evaluation:7") == first

    live.changed(evaluation_id=7)  # outside a transaction: renewed at once

    assert live.version("evaluation:7") != first


def test_a_change_renews_the_token_only_once_its_transaction_commits():
    before = live.version("evaluation:7")
    with transaction.atomic():
        live.changed(evaluation_id=7, team_id=3)
        assert live.version("evaluation:7") == before
    assert live.version("evaluation:7") != before


def test_a_rolled_back_change_renews_nothing():
    before = live.version("team:3")
    with pytest.raises(RuntimeError), transaction.atomic():
        live.changed(team_id=3)
        raise RuntimeError("rolled back")
    assert live.version("team:3") == before


def test_an_evaluations_change_is_its_teams_too():
    evaluation, team = live.version("evaluation:7"), live.version("team:3")

    live.changed(evaluation_id=7, team_id=3)

    assert live.version("evaluation:7") != evaluation and live.version("team:3") != team
    assert live.topic_of_path("/live/evaluation/7/disagreements/") == "evaluation:7"
    assert live.topic_of_path("/live/team/3/dashboard/") == "team:3"
    assert live.topic_of_path("/evaluations/7/") is None


def test_the_shortcut_answers_304_to_the_current_etag_without_the_application():
    behind = Behind()
    app = live.LiveShortcut(behind)
    etag = live.etag(live.version("evaluation:7"))

    status, headers, body = call(app, "/live/evaluation/7/", if_none_match=etag)

    assert status.startswith("304") and body == b"" and headers["ETag"] == etag
    assert behind.calls == 0


@pytest.mark.parametrize(
    ("path", "if_none_match", "method"),
    [
        ("/live/evaluation/7/", None, "GET"),  # a first ask
        ("/live/evaluation/7/", '"an-old-token"', "GET"),  # changed since
        ("/live/evaluation/8/", "CURRENT", "GET"),  # another topic's token
        ("/evaluations/7/", "CURRENT", "GET"),  # not a live URL
        ("/live/evaluation/7/", "CURRENT", "POST"),
    ],
)
def test_anything_else_goes_to_the_application(path, if_none_match, method):
    behind = Behind()
    app = live.LiveShortcut(behind)
    current = live.etag(live.version("evaluation:7"))
    asked = current if if_none_match == "CURRENT" else if_none_match

    status, _headers, body = call(app, path, if_none_match=asked, method=method)

    assert status == "200 OK" and body == b"rendered" and behind.calls == 1


def test_a_topic_whose_token_expired_or_was_lost_goes_to_the_application():
    behind = Behind()
    app = live.LiveShortcut(behind)
    etag = live.etag(live.version("evaluation:7"))
    caches["default"].delete("live:evaluation:7")  # expired, or Redis restarted empty

    status, _headers, _body = call(app, "/live/evaluation/7/", if_none_match=etag)

    assert status == "200 OK" and behind.calls == 1


def test_a_topic_whose_token_another_process_just_made_reads_that_token(monkeypatch):
    cache = caches["default"]
    made_elsewhere = "0123456789abcdef"
    real_add = cache.add

    def add_after_another_process(key, value, timeout=None):
        real_add(key, made_elsewhere, timeout)  # the other process wins the race
        return False

    monkeypatch.setattr(cache, "add", add_after_another_process)

    assert live.version("evaluation:9") == made_elsewhere
