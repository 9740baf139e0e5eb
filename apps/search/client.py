"""Sending one prepared search request, safely, and describing what came back.

`run_search` never raises for anything the remote side does: every outcome is a
`SearchResult` whose `error` says what went wrong in words a team lead can act on and
whose `retryable` flag tells the caller (a Celery task) whether trying again later could
help: transport failures, timeouts and 5xx answers could; a refused address, a 4xx, a
redirect, an oversized or malformed body would fail the same way again.

Safety rules, in the order they apply:

- the host is checked by `safety` (unless allow_private) and the connection is made to
  the checked address, with the original name kept for the Host header and TLS (SNI and
  certificate check), so a second DNS answer is never used;
- redirects are NOT followed: a 3xx is reported with its Location, so the lead points
  the endpoint at the final URL (and no redirect can lead to an internal address);
- proxies and credentials from the environment are ignored (`trust_env=False`): a proxy
  would resolve the name itself and undo the address check;
- the body is streamed and reading stops past `max_bytes` (counted after decompression;
  one network chunk inflates at most ~64 MiB before the count sees it);
- `timeout_s` bounds connecting and each read, and a deadline checked between chunks
  bounds the whole call, so a server trickling bytes cannot hold a worker forever. (Name
  resolution uses the system resolver and its own timeouts.)
"""

from __future__ import annotations

import json
import ssl
import time
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

import certifi
import httpx

from apps.core import bounded_json
from apps.core.typed import BIGINT_MAX, parse_int

from .request import PreparedSearch
from .safety import AddressRefused, IPAddress, Resolver, addresses_to_call

# How much of a body to quote in an error message.
_EXCERPT_CHARS = 80
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Lets a search team recognise (and filter out of their analytics) Relevo's queries.
USER_AGENT = "Relevo (search relevance evaluation)"


class ErrorKind(StrEnum):
    INVALID_REQUEST = "invalid_request"  # the request could not be built or sent as given
    REFUSED = "refused"  # the address may not be called
    TRANSPORT = "transport"  # name resolution, connection, TLS, broken connection
    TIMEOUT = "timeout"
    REDIRECT = "redirect"  # 3xx, not followed
    HTTP_STATUS = "http_status"  # 4xx or 5xx
    TOO_LARGE = "too_large"
    INVALID_JSON = "invalid_json"


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What one call returned. `body_text` holds at most max_bytes of the body (decoded,
    for showing in "Test model"); `json` is the parsed body, or None when it was not
    parsed (an error before or while parsing; a literal JSON `null` body also reads as
    None, and is then reported as an error by the mapper)."""

    status: int | None
    elapsed_ms: int
    body_text: str
    json: object
    error: str | None = None
    error_kind: ErrorKind | None = None
    retryable: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    reason: str
    location: str | None
    body: bytes
    charset: str | None


class _TooLarge(Exception):
    """Raised from inside the stream so the connection is closed unread."""

    def __init__(self, status: int, partial: bytes, charset: str | None) -> None:
        super().__init__(status)
        self.status = status
        self.partial = partial
        self.charset = charset


class _DeadlinePassed(Exception):
    pass


def run_search(
    prepared: PreparedSearch,
    *,
    timeout_s: float,
    max_bytes: int,
    allow_private: bool,
    resolver: Resolver | None = None,
) -> SearchResult:
    """Send `prepared` and describe the outcome; never raises for remote behaviour.

    `allow_private` comes from the deployment's settings. `resolver` replaces DNS (for
    tests: pointing a name at 127.0.0.1 shows the connection goes to the checked address).
    """
    if timeout_s <= 0 or max_bytes <= 0:
        raise ValueError("timeout_s and max_bytes must be positive")
    started = time.monotonic()

    def finish(
        *,
        status: int | None = None,
        body_text: str = "",
        parsed: object = None,
        error: str | None = None,
        error_kind: ErrorKind | None = None,
        retryable: bool = False,
    ) -> SearchResult:
        elapsed_ms = round((time.monotonic() - started) * 1000)
        return SearchResult(status, elapsed_ms, body_text, parsed, error, error_kind, retryable)

    try:
        url = httpx.URL(prepared.url)
    except httpx.InvalidURL as exc:
        return finish(error=f"invalid URL: {exc}", error_kind=ErrorKind.INVALID_REQUEST)
    if url.scheme not in _DEFAULT_PORTS or not url.raw_host:
        return finish(
            error="the URL must be http:// or https:// with a host",
            error_kind=ErrorKind.INVALID_REQUEST,
        )
    host = url.raw_host.decode("ascii")
    port = url.port or _DEFAULT_PORTS[url.scheme]
    try:
        addresses = addresses_to_call(host, port, allow_private=allow_private, resolver=resolver)
    except AddressRefused as exc:
        return finish(error=f"refused: {exc}", error_kind=ErrorKind.REFUSED)
    except OSError as exc:
        return finish(
            error=f"could not resolve '{host}': {exc}",
            error_kind=ErrorKind.TRANSPORT,
            retryable=True,
        )

    try:
        reply = _exchange(
            prepared,
            url,
            host,
            addresses,
            timeout_s=timeout_s,
            max_bytes=max_bytes,
            deadline=started + timeout_s,
        )
    except _TooLarge as exc:
        return finish(
            status=exc.status,
            body_text=_decode(exc.partial, exc.charset),
            error=f"the response is larger than {max_bytes} bytes; stopped reading",
            error_kind=ErrorKind.TOO_LARGE,
        )
    except (httpx.TimeoutException, _DeadlinePassed):
        return finish(
            error=f"no complete answer within {timeout_s:g} s",
            error_kind=ErrorKind.TIMEOUT,
            retryable=True,
        )
    except httpx.HTTPError as exc:
        message, retryable = _describe_transport_error(exc)
        return finish(error=message, error_kind=ErrorKind.TRANSPORT, retryable=retryable)

    status = reply.status
    text = _decode(reply.body, reply.charset)
    parsed, json_error = _parse_json(text)
    if 300 <= status < 400:
        return finish(
            status=status,
            body_text=text,
            error=f"HTTP {status}: redirect to '{reply.location or '?'}' not followed; "
            "point the endpoint at the final URL",
            error_kind=ErrorKind.REDIRECT,
        )
    if status >= 400:
        return finish(
            status=status,
            body_text=text,
            parsed=parsed,
            error=f"HTTP {status} {reply.reason}".rstrip(),
            error_kind=ErrorKind.HTTP_STATUS,
            retryable=status >= 500,
        )
    if json_error is not None:
        return finish(
            status=status, body_text=text, error=json_error, error_kind=ErrorKind.INVALID_JSON
        )
    return finish(status=status, body_text=text, parsed=parsed)


def _exchange(
    prepared: PreparedSearch,
    url: httpx.URL,
    host: str,
    addresses: list[IPAddress],
    *,
    timeout_s: float,
    max_bytes: int,
    deadline: float,
) -> _Reply:
    """Connect to the first checked address that accepts, send, and read the capped body.

    Only a failure to connect moves on to the next address: nothing was sent yet, so
    trying another cannot repeat a request.
    """
    # Values as UTF-8: httpx would refuse a non-ASCII keyword in a header value.
    headers = [
        (name.encode("ascii"), value.encode("utf-8"))
        for name, value in prepared.headers
        if name.lower() != "host"
    ]
    # The name (and port, when not the default) the URL had, not the address we dial.
    headers.append((b"Host", url.netloc))
    extensions = {"sni_hostname": host} if url.scheme == "https" else {}
    last_error: httpx.ConnectError | None = None
    with httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=False,
        trust_env=False,
        verify=tls_context(),
        headers={"User-Agent": USER_AGENT},  # a template's own User-Agent wins
    ) as client:
        for address in addresses:
            pinned = url.copy_with(host=str(address))
            try:
                with client.stream(
                    prepared.method,
                    pinned,
                    headers=headers,
                    content=prepared.body,
                    extensions=extensions,
                ) as response:
                    charset = response.charset_encoding
                    declared = response.headers.get("content-length", "")
                    if (parse_int(declared, 0, BIGINT_MAX) or 0) > max_bytes:
                        raise _TooLarge(response.status_code, b"", charset)
                    body = _read_capped(response, max_bytes, deadline, charset)
                    return _Reply(
                        response.status_code,
                        response.reason_phrase,
                        response.headers.get("location"),
                        body,
                        charset,
                    )
            except httpx.ConnectError as exc:
                last_error = exc
    assert last_error is not None  # addresses is never empty (checked by safety)
    raise last_error


def _read_capped(
    response: httpx.Response, max_bytes: int, deadline: float, charset: str | None
) -> bytes:
    body = bytearray()
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise _DeadlinePassed
        if len(body) + len(chunk) > max_bytes:
            body += chunk[: max_bytes - len(body)]
            raise _TooLarge(response.status_code, bytes(body), charset)
        body += chunk
    return bytes(body)


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    # Built once: loading the CA bundle for every keyword would cost more than the call.
    return ssl.create_default_context(cafile=certifi.where())


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _parse_json(text: str) -> tuple[object, str | None]:
    """The parsed body and None, or None and an error quoting where parsing failed."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return None, "the response body is empty, expected JSON"
    try:
        return bounded_json.loads(text), None
    except bounded_json.JsonLimitError as exc:
        return None, f"the response is refused: {exc}"
    except json.JSONDecodeError as exc:
        start = max(0, exc.pos - _EXCERPT_CHARS // 4)
        excerpt = text[start : start + _EXCERPT_CHARS]
        prefix = "..." if start else ""
        return None, (
            f"the response is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}): {prefix}{excerpt!r}"
        )


def _describe_transport_error(exc: httpx.HTTPError) -> tuple[str, bool]:
    """A message and whether retrying could help. A certificate or TLS setup problem
    will fail again, so it is not retried; a dropped connection might not."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return f"TLS failed: {cause}", False
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect: {exc}", True
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.DecodingError):
        return f"the request or response could not be handled: {exc}", False
    if isinstance(exc, httpx.TransportError):
        return f"the connection failed: {exc or type(exc).__name__}", True
    return f"the request failed: {exc or type(exc).__name__}", False
