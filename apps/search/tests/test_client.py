"""The client against a real HTTP server on 127.0.0.1 (see conftest.py).

allow_private=True is needed to reach loopback at all; the refusal tests use
allow_private=False and check the server never saw the request.
"""

import ipaddress
import json
import socket
import time

import httpx
import pytest

from apps.search import ErrorKind, PreparedSearch, SearchTemplate, build_request, run_search

LIMITS = {"timeout_s": 2.0, "max_bytes": 100_000}


def get(url, **headers):
    return PreparedSearch("GET", url, tuple(headers.items()), None)


def call(prepared, **overrides):
    options = {**LIMITS, "allow_private": True, **overrides}
    return run_search(prepared, **options)


def test_json_results_come_back_parsed_with_status_and_timing(search_server):
    prepared = build_request(
        "GET", search_server.url("/search"), [("q", "#query#")], [], None, "json", "red shoes"
    )
    result = call(prepared)
    assert result.ok
    assert result.status == 200
    assert result.json["hits"]["hits"][0]["_source"]["title"] == "red shoes one"
    assert json.loads(result.body_text) == result.json
    assert result.error is None and result.error_kind is None and not result.retryable
    assert 0 <= result.elapsed_ms < 2000


def test_method_headers_and_body_are_sent_as_prepared(search_server):
    prepared = build_request(
        "PUT",
        search_server.url("/echo"),
        [],
        [("Authorization", "Bearer a:b:c"), ("X-Query", "#query#")],
        '{"q": "#query#"}',
        "json",
        'café "x"',
    )
    echoed = call(prepared).json
    assert echoed["method"] == "PUT"
    assert echoed["headers"]["authorization"] == "Bearer a:b:c"
    assert echoed["headers"]["content-type"] == "application/json"
    assert echoed["headers"]["user-agent"] == "Relevo (search relevance evaluation)"
    assert json.loads(echoed["body"]) == {"q": 'café "x"'}
    # A non-ASCII keyword in a header travels as UTF-8 (http.server reads it as latin-1).
    assert echoed["headers"]["x-query"].encode("latin-1").decode("utf-8") == 'café "x"'


def test_empty_results_are_a_success(search_server):
    result = call(get(search_server.url("/empty")))
    assert result.ok and result.json["hits"]["hits"] == []


def test_a_500_is_an_error_that_may_be_retried(search_server):
    result = call(get(search_server.url("/error500")))
    assert result.status == 500
    assert result.error == "HTTP 500 Internal Server Error"
    assert result.error_kind is ErrorKind.HTTP_STATUS
    assert result.retryable
    assert result.json == {"error": "index unavailable"}  # kept for "Test model"


def test_a_503_with_an_html_page_is_retryable_and_keeps_the_page(search_server):
    result = call(get(search_server.url("/error503")))
    assert (result.status, result.retryable, result.json) == (503, True, None)
    assert "Service Unavailable" in result.body_text


@pytest.mark.parametrize(("path", "status"), [("/forbidden", 403), ("/nowhere", 404)])
def test_a_4xx_is_an_error_that_is_not_retried(search_server, path, status):
    result = call(get(search_server.url(path)))
    assert result.status == status
    assert result.error.startswith(f"HTTP {status} ")
    assert not result.retryable


def test_a_slow_answer_times_out_and_may_be_retried(search_server):
    started = time.monotonic()
    result = call(get(search_server.url("/slow")), timeout_s=0.3)
    assert time.monotonic() - started < 1.2
    assert result.status is None
    assert result.error == "no complete answer within 0.3 s"
    assert result.error_kind is ErrorKind.TIMEOUT
    assert result.retryable


def test_a_server_trickling_bytes_is_cut_off_by_the_overall_deadline(search_server):
    # Every byte arrives well within the read timeout; only the total deadline stops it.
    started = time.monotonic()
    result = call(get(search_server.url("/trickle")), timeout_s=0.5)
    assert time.monotonic() - started < 1.5
    assert result.error_kind is ErrorKind.TIMEOUT


@pytest.mark.parametrize(
    ("path", "excerpt"),
    [
        # The excerpt starts a little before the point where parsing failed.
        ("/malformed", """...'{"hits": [{"_id": 1,, }]}}'"""),
        ("/html", "'<html><body>Search is down for maintenance</body></html>'"),
    ],
)
def test_malformed_json_is_an_error_quoting_where_it_broke(search_server, path, excerpt):
    result = call(get(search_server.url(path)))
    assert result.status == 200
    assert result.json is None
    assert result.error_kind is ErrorKind.INVALID_JSON
    assert result.error.startswith("the response is not valid JSON (")
    assert result.error.endswith(excerpt)
    assert not result.retryable


def test_an_empty_body_is_an_error(search_server):
    result = call(get(search_server.url("/empty-body")))
    assert result.error == "the response body is empty, expected JSON"


def test_a_body_declared_larger_than_the_cap_is_not_read(search_server):
    result = call(get(search_server.url("/huge")), max_bytes=10_000)
    assert result.status == 200
    assert result.error == "the response is larger than 10000 bytes; stopped reading"
    assert result.error_kind is ErrorKind.TOO_LARGE
    assert result.body_text == ""
    assert not result.retryable


def test_a_body_without_a_length_stops_at_the_cap_while_streaming(search_server):
    result = call(get(search_server.url("/huge-unannounced")), max_bytes=10_000)
    assert result.error_kind is ErrorKind.TOO_LARGE
    assert len(result.body_text) == 10_000  # what was read, for showing
    assert result.json is None


def test_the_cap_counts_decompressed_bytes(search_server):
    result = call(get(search_server.url("/gzip-bomb")), max_bytes=50_000)
    assert result.error_kind is ErrorKind.TOO_LARGE
    assert len(result.body_text) == 50_000


def test_a_declared_charset_is_used_to_read_the_body(search_server):
    result = call(get(search_server.url("/latin1")))
    assert result.json == {"hits": [{"id": 1, "name": "Café"}]}


def test_a_redirect_is_reported_and_not_followed(search_server):
    result = call(get(search_server.url("/redirect")))
    assert result.status == 302
    assert result.error == (
        f"HTTP 302: redirect to '{search_server.url('/search')}' not followed; "
        "point the endpoint at the final URL"
    )
    assert result.error_kind is ErrorKind.REDIRECT
    assert not result.retryable
    assert search_server.count("/search") == 0


def test_nothing_listening_is_a_retryable_transport_error():
    with socket.socket() as spare:  # a port that was free a moment ago
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    result = call(get(f"http://127.0.0.1:{port}/search"))
    assert result.status is None
    assert result.error.startswith("could not connect: ")
    assert result.error_kind is ErrorKind.TRANSPORT
    assert result.retryable


def test_the_connection_goes_to_the_checked_address_with_the_original_host(search_server):
    # "search.example" is only known to this stand-in resolver: if anything but the
    # checked address were dialled, the name would not resolve at all.
    def resolver(host, port):
        assert host == "search.example"
        return [ipaddress.ip_address("127.0.0.1")]

    url = f"http://search.example:{search_server.port}/echo"
    result = call(get(url), resolver=resolver)
    assert result.ok
    assert result.json["headers"]["host"] == f"search.example:{search_server.port}"


def test_localhost_is_reachable_when_private_addresses_are_allowed(search_server):
    # localhost may resolve to ::1 first; the server listens on 127.0.0.1 only, so this
    # also shows the client moves on to the next checked address when one refuses.
    result = call(get(f"http://localhost:{search_server.port}/search"))
    assert result.ok


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "[::1]", "localhost", "[::ffff:127.0.0.1]", "127.0.0.2", "LocalHost."],
)
def test_loopback_is_refused_without_allow_private_and_nothing_is_sent(search_server, host):
    result = call(get(f"http://{host}:{search_server.port}/search"), allow_private=False)
    assert result.status is None
    assert result.error.startswith("refused: ")
    assert result.error_kind is ErrorKind.REFUSED
    assert not result.retryable
    assert search_server.requests == []


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.20", "169.254.169.254", "[fd00::1]"])
def test_private_addresses_are_refused_before_any_connection(monkeypatch, host):
    def no_client(*args, **kwargs):
        raise AssertionError("no HTTP client may be created for a refused address")

    monkeypatch.setattr(httpx, "Client", no_client)
    result = call(get(f"http://{host}/latest/meta-data/"), allow_private=False)
    assert result.error_kind is ErrorKind.REFUSED
    assert "calls to private addresses are not allowed" in result.error


def test_a_name_pointing_inside_is_refused(search_server):
    def rebinding(host, port):
        return [ipaddress.ip_address("127.0.0.1")]

    url = f"http://search.example:{search_server.port}/search"
    result = call(get(url), allow_private=False, resolver=rebinding)
    assert result.error == (
        "refused: 127.0.0.1 is a loopback address; calls to private addresses are not allowed"
    )
    assert search_server.requests == []


def test_a_template_built_request_round_trips_through_the_server(search_server):
    template = SearchTemplate("GET", search_server.url("/search?q=#query#"))
    result = call(template.build("a&b=c #1"))
    assert result.json["hits"]["hits"][1]["_source"]["title"] == "a&b=c #1 two"


def test_a_user_agent_from_the_template_wins(search_server):
    result = call(get(search_server.url("/echo"), **{"User-Agent": "team-probe/1"}))
    assert result.json["headers"]["user-agent"] == "team-probe/1"


@pytest.mark.parametrize("limits", [{"timeout_s": 0}, {"max_bytes": 0}])
def test_limits_must_be_positive(limits):
    with pytest.raises(ValueError, match="must be positive"):
        call(get("http://127.0.0.1:9/"), **limits)
