"""The address-safety layer for clients built on httpx2 (the AI providers' SDKs).

`openai` and `anthropic` send their requests through an httpx2 client Relevo gives them
(httpx2 is the fork of httpx, same API, that the `anthropic` package requires).
Its transport, SafeTransport, applies to every request (each redirect hop and retry
included) what `client` applies to a search call:

- the host is checked by `safety` (unless `allow_private`) and the connection goes to
  the checked address, the name kept for the Host header and for TLS (SNI and the
  certificate), so a DNS answer that changes between check and connect cannot slip in;
- the answer is read up to `max_bytes`: a longer one is cut off with an error
  (ResponseTooLarge), never held whole in memory;
- answers are asked for uncompressed (Accept-Encoding: identity) and a compressed one
  is refused (CompressedAnswer): a few kilobytes of gzip can expand to gigabytes after
  the cap on what was read.

A refused address raises AddressRefused before anything is sent. `outbound_url` reads a
URL typed into a form as the client will read it when it sends, so what a form saves is
what the client can call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2 as httpx  # the providers' SDKs are built on httpx2 (httpx's API)

from apps.core.typed import BIGINT_MAX, parse_int

from .client import tls_context
from .safety import AddressRefused, Resolver, addresses_to_call

_DEFAULT_PORTS = {"http": 80, "https": 443}

__all__ = [
    "AddressRefused",
    "CompressedAnswer",
    "ResponseTooLarge",
    "SafeTransport",
    "UnusableURL",
    "outbound_url",
    "safe_http_client",
]

# A host as DNS spells it (after IDNA: a name in another script is xn--… by then).
_HOST_NAME = re.compile(r"[A-Za-z0-9.-]+")


class UnusableURL(ValueError):
    """The text is not a URL the client can send to; the message says why."""


def outbound_url(text: str) -> httpx.URL:
    """`text` read by httpx, the parser that sends the request: an http(s) URL with a host
    that is a DNS name or an IP address, else UnusableURL. Where the host leads is not
    checked here: `safety` does that (refused_without_lookup when typed, on every call)."""
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as error:
        raise UnusableURL(f"not a URL Relevo can send to: {error}") from None
    if url.scheme not in _DEFAULT_PORTS or not url.raw_host:
        raise UnusableURL("must be an http:// or https:// URL with a host")
    host = url.raw_host.decode("ascii")
    is_ip_literal = ":" in host  # httpx has checked an IPv6 literal between brackets
    if not is_ip_literal and not _HOST_NAME.fullmatch(host):
        shown = url.host.replace("%20", " ")
        raise UnusableURL(
            f"not a URL Relevo can send to: the host {shown[:100]!r} is not a name (a host "
            "name has only letters, digits, '-' and '.')"
        )
    return url


class ResponseTooLarge(httpx.TransportError):
    """The answer was longer than the transport reads."""


class CompressedAnswer(httpx.DecodingError):
    """The answer came compressed though it was asked for uncompressed."""


class SafeTransport(httpx.BaseTransport):
    def __init__(
        self,
        *,
        allow_private: bool,
        max_bytes: int,
        resolver: Resolver | None = None,
        inner: httpx.BaseTransport | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self.resolver = resolver
        self.inner = inner or httpx.HTTPTransport(verify=tls_context(), trust_env=False)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in _DEFAULT_PORTS or not url.raw_host:
            raise httpx.UnsupportedProtocol("the URL must be http:// or https:// with a host")
        host = url.raw_host.decode("ascii")
        port = url.port or _DEFAULT_PORTS[url.scheme]
        addresses = addresses_to_call(
            host, port, allow_private=self.allow_private, resolver=self.resolver
        )
        request.headers["Host"] = url.netloc.decode("ascii")
        request.headers["Accept-Encoding"] = "identity"
        if url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": host}
        last_error: httpx.ConnectError | None = None
        for address in addresses:
            request.url = url.copy_with(host=str(address))
            try:
                response = self.inner.handle_request(request)
            except httpx.ConnectError as error:  # nothing sent yet: the next address
                last_error = error
                continue
            finally:
                request.url = url
            return self._capped(response)
        assert last_error is not None  # addresses is never empty (checked by safety)
        raise last_error

    def _capped(self, response: httpx.Response) -> httpx.Response:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            response.close()
            raise CompressedAnswer(f"the answer is compressed ({encoding}); it was not asked to be")
        declared = response.headers.get("content-length", "")
        if (parse_int(declared, 0, BIGINT_MAX) or 0) > self.max_bytes:
            response.close()
            raise ResponseTooLarge(f"the answer is larger than {self.max_bytes} bytes")
        stream = response.stream
        if not isinstance(stream, httpx.SyncByteStream):
            raise TypeError("SafeTransport serves synchronous clients only")
        response.stream = _CappedStream(stream, self.max_bytes)
        return response

    def close(self) -> None:
        self.inner.close()


class _CappedStream(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, max_bytes: int) -> None:
        self.stream = stream
        self.max_bytes = max_bytes

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self.stream:
            read += len(chunk)
            if read > self.max_bytes:
                raise ResponseTooLarge(f"the answer is larger than {self.max_bytes} bytes")
            yield chunk

    def close(self) -> None:
        self.stream.close()


def safe_http_client(
    *,
    timeout_s: float,
    allow_private: bool,
    max_bytes: int,
    resolver: Resolver | None = None,
) -> httpx.Client:
    """An httpx client whose every request goes through SafeTransport; no proxies or
    certificates from the environment, no redirects followed."""
    return httpx.Client(
        transport=SafeTransport(
            allow_private=allow_private, max_bytes=max_bytes, resolver=resolver
        ),
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=False,
        trust_env=False,
    )
