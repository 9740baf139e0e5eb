"""The address-safety layer for the providers' SDKs (SafeTransport): the host checked and
pinned, the name kept, nothing sent to a refused address, answers bounded."""

import ipaddress

import httpx2
import pytest

from apps.search.safe_transport import (
    AddressRefused,
    CompressedAnswer,
    ResponseTooLarge,
    UnusableURL,
    outbound_url,
    safe_http_client,
)


def client(*, allow_private=True, max_bytes=100_000, resolver=None) -> httpx2.Client:
    return safe_http_client(
        timeout_s=5.0, allow_private=allow_private, max_bytes=max_bytes, resolver=resolver
    )


def test_a_name_is_called_at_its_checked_address_and_keeps_its_host_header(search_server):
    to_loopback = lambda host, port: [ipaddress.ip_address("127.0.0.1")]  # noqa: E731
    url = f"http://judge.example:{search_server.port}/echo"
    with client(resolver=to_loopback) as http:
        answer = http.post(url, json={"hello": 1})
    assert answer.status_code == 200
    assert answer.json()["headers"]["host"] == f"judge.example:{search_server.port}"
    assert answer.json()["headers"]["accept-encoding"] == "identity"


def test_a_private_address_is_refused_before_anything_is_sent(search_server):
    with client(allow_private=False) as http, pytest.raises(AddressRefused, match="loopback"):
        http.post(search_server.url("/echo"), json={})
    assert search_server.count("/echo") == 0


@pytest.mark.parametrize("path", ["/huge", "/huge-unannounced"])
def test_an_answer_over_the_limit_is_cut_off(search_server, path):
    with client(max_bytes=10_000) as http, pytest.raises(ResponseTooLarge):
        http.get(search_server.url(path))


def test_a_compressed_answer_is_refused(search_server):
    with client() as http, pytest.raises(CompressedAnswer):
        http.get(search_server.url("/gzip-bomb"))


def test_a_redirect_is_not_followed(search_server):
    with client() as http:
        answer = http.get(search_server.url("/redirect"))
    assert answer.status_code == 302 and search_server.count("/search") == 0


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("http://0177.0.0.1/", "Invalid IPv4 address"),
        ("http://[::1", "not a URL Relevo can send to"),
        ("http://a b/", "the host 'a b' is not a name"),
        ("ftp://example.com/", "must be an http:// or https:// URL with a host"),
        ("http:///path", "must be an http:// or https:// URL with a host"),
    ],
)
def test_a_url_the_client_could_not_send_to_is_refused_saying_why(text, why):
    with pytest.raises(UnusableURL, match=why):
        outbound_url(text)


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("https://hooks.example.com/x?token=1", "hooks.example.com"),
        ("http://[::1]:8000/hook", "::1"),
        ("https://例え.jp/", "例え.jp"),
    ],
)
def test_a_url_the_client_can_send_to_is_read_as_it_will_be_sent(text, host):
    assert outbound_url(text).host == host
