"""One call to a language model, through the provider's official client.

Two protocols cover the providers a team uses:

- `openai`: any OpenAI-compatible chat-completions server by base URL (OpenAI, Azure
  OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter), through the `openai`
  package; with `structured` the answer's JSON schema is sent as response_format (a
  server that does not support it answers 400: turn `structured` off, the tolerant
  reader copes);
- `anthropic`: the Messages API, through the `anthropic` package.

A judge that sees images sends them in the user message after its text, each after a
line naming its result: OpenAI-compatible `image_url` parts and Anthropic image blocks,
both as base64 of the bytes Relevo read (the provider fetches nothing).

Every call goes through the address-safety layer (apps/search/safe_transport.py): the
base URL's host is checked and pinned, the answer is read up to MAX_ANSWER_BYTES. The
clients' own retries are off: the judge's run retries with backoff and honours
`Retry-After` (the outcome carries it). A call never raises for what the provider does;
every outcome is a CallOutcome, its error kind saying whether trying again may help.
The API key is sent to the provider and nowhere else: it is removed from every error
message kept.
"""

from __future__ import annotations

import base64
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import anthropic
import httpx2 as httpx
import openai
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from apps.search.safe_transport import (
    AddressRefused,
    CompressedAnswer,
    ResponseTooLarge,
    safe_http_client,
)

from .limit_headers import Limits, limits_from
from .prompting import ShownImage

MAX_ANSWER_BYTES = 1_000_000
ERROR_MAX_CHARS = 500
# How long a rate-limited call waits when the provider does not say (Retry-After).
DEFAULT_RETRY_AFTER_S = 10.0
MAX_RETRY_AFTER_S = 600.0


class Protocol(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class Failure(StrEnum):
    RATE_LIMITED = "rate_limited"  # 429: wait Retry-After, then again
    TIMEOUT = "timeout"  # no answer in time: again
    UNAVAILABLE = "unavailable"  # 5xx, a dropped connection: again, with backoff
    REFUSED = "refused"  # the address may not be called: fix the base URL
    REJECTED = "rejected"  # 4xx (a wrong key, model or request): fix the judge
    TOO_LARGE = "too_large"  # the answer is longer than MAX_ANSWER_BYTES
    MALFORMED = "malformed"  # an answer that is not the protocol's JSON


RETRYABLE = frozenset({Failure.RATE_LIMITED, Failure.TIMEOUT, Failure.UNAVAILABLE})


@dataclass(frozen=True)
class ModelSettings:
    protocol: Protocol
    base_url: str
    model: str
    api_key: str
    temperature: float | None = None  # None: the provider's default (newer models fix it)
    timeout_s: float = 60.0
    max_output_tokens: int = 2_000
    structured: bool = True
    allow_private: bool = False


@dataclass(frozen=True)
class CallOutcome:
    text: str = ""
    input_tokens: int = 0  # all of the prompt's
    cached_input_tokens: int = 0  # of those, read from the provider's prompt cache
    output_tokens: int = 0
    latency_ms: int = 0
    truncated: bool = False  # the answer stopped at max_output_tokens
    refusal: str = ""  # the model declined (OpenAI's refusal field)
    failure: Failure | None = None
    error: str = ""
    retry_after_s: float | None = None
    # What the answer's headers said of the account's rate limits (rate_limits.py).
    limits: Limits | None = None
    sent: bool = True  # False: held back by the learned limits, never sent nor paid

    @property
    def retryable(self) -> bool:
        return self.failure in RETRYABLE


def endpoint(protocol: Protocol | str, base_url: str) -> str:
    """The address a call is sent to: what a lead checks when the model cannot be reached."""
    path = "/v1/messages" if protocol == Protocol.ANTHROPIC else "/chat/completions"
    return base_url.rstrip("/") + path


def call_model(
    settings: ModelSettings,
    system: str,
    user: str,
    schema: dict[str, Any] | None = None,
    images: Sequence[tuple[str, ShownImage]] = (),
) -> CallOutcome:
    """Ask the model once; what came back, or why nothing did. `images`: (result id,
    image) to show after the user message's text."""
    started = time.monotonic()
    _answer_headers.seen = {}
    try:
        client = _client(settings)
        if isinstance(client, anthropic.Anthropic):
            params = anthropic_params(settings, system, user, schema, images)
            outcome = _call_anthropic(client, params)
        else:
            body = openai_body(settings, system, user, schema, images)
            outcome = _call_openai(client, body)
    except (openai.APIError, anthropic.APIError, httpx.HTTPError, AddressRefused) as error:
        outcome = failed_call(error, settings.api_key)
    except ValueError as error:  # a 200 whose body is not the protocol's JSON
        outcome = failed_call(error, settings.api_key, Failure.MALFORMED)
    latency = round((time.monotonic() - started) * 1000)
    limits = limits_from(_answer_headers.seen, datetime.now(UTC))
    return replace(outcome, latency_ms=latency, limits=limits if limits.said_anything else None)


# The headers of this thread's last answer, kept by the clients' response hook: the SDKs
# read them for themselves and hand back only the body.
_answer_headers = threading.local()


def _keep_headers(response: httpx.Response) -> None:
    _answer_headers.seen = dict(response.headers)


# A client is built once per process for each model a judge calls and kept for the
# calls after (building one costs more CPU than a call to a local model server, and its
# connections are kept alive between calls); the safe transport still checks the
# address of every request. The clients are thread-safe: a run's calls share one.
MAX_CLIENTS = 32
_clients: OrderedDict[tuple[Any, ...], openai.OpenAI | anthropic.Anthropic] = OrderedDict()
_clients_lock = threading.Lock()


def _client(settings: ModelSettings) -> openai.OpenAI | anthropic.Anthropic:
    """This process's client for the settings' provider, address, key and limits."""
    # The process id: a forked worker builds its own (sockets are not shared).
    key = (
        os.getpid(),
        settings.protocol,
        settings.base_url,
        settings.api_key,
        settings.timeout_s,
        settings.allow_private,
        MAX_ANSWER_BYTES,
    )
    with _clients_lock:
        client = _clients.get(key)
        if client is not None:
            _clients.move_to_end(key)
            return client
        client = new_client(settings, MAX_ANSWER_BYTES)
        _clients[key] = client
        if len(_clients) > MAX_CLIENTS:
            # Dropped, not closed: a call of another thread may still be using it.
            _clients.popitem(last=False)
        return client


def new_client(settings: ModelSettings, max_bytes: int) -> openai.OpenAI | anthropic.Anthropic:
    """A client of the settings' provider through the address-safety layer, reading
    answers up to `max_bytes`, its own retries off."""
    http_client = safe_http_client(
        timeout_s=settings.timeout_s,
        allow_private=settings.allow_private,
        max_bytes=max_bytes,
    )
    http_client.event_hooks["response"].append(_keep_headers)
    options: dict[str, Any] = {
        "api_key": settings.api_key or "none",  # local servers take any key
        "base_url": settings.base_url,
        "http_client": http_client,
        "max_retries": 0,  # the run retries, with backoff and Retry-After
        "timeout": settings.timeout_s,
    }
    if settings.protocol == Protocol.ANTHROPIC:
        return anthropic.Anthropic(**options)
    return openai.OpenAI(**options)


def _openai_content(user: str, images: Sequence[tuple[str, ShownImage]]) -> Any:
    """The user message's content: its text alone, or parts with the images."""
    if not images:
        return user
    parts: list[dict[str, Any]] = [{"type": "text", "text": user}]
    for result_id, image in images:
        encoded = base64.b64encode(image.data).decode("ascii")
        parts.append({"type": "text", "text": f"Image of result {result_id}:"})
        parts.append(
            {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{encoded}"}}
        )
    return parts


def _anthropic_content(user: str, images: Sequence[tuple[str, ShownImage]]) -> Any:
    if not images:
        return user
    blocks: list[dict[str, Any]] = [{"type": "text", "text": user}]
    for result_id, image in images:
        blocks.append({"type": "text", "text": f"Image of result {result_id}:"})
        blocks.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image.media_type,
                    "data": base64.b64encode(image.data).decode("ascii"),
                },
            }
        )
    return blocks


def openai_body(
    settings: ModelSettings,
    system: str,
    user: str,
    schema: dict[str, Any] | None = None,
    images: Sequence[tuple[str, ShownImage]] = (),
) -> dict[str, Any]:
    """The JSON body of one chat-completions call (a batch's line carries the same)."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": _openai_content(user, images)},
        ],
        "max_tokens": settings.max_output_tokens,
    }
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.structured and schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "judgements", "schema": schema},
        }
    return body


def _call_openai(client: openai.OpenAI, body: dict[str, Any]) -> CallOutcome:
    typed = dict(body)
    options: dict[str, Any] = {}
    if "response_format" in typed:
        # Sent as it is (extra_body), not as the typed response_format: the client walks
        # a typed parameter against its type hints, which cost a third of a call's CPU
        # with a schema this size; the server receives the same JSON either way.
        options["extra_body"] = {"response_format": typed.pop("response_format")}
    return openai_outcome(client.chat.completions.create(**typed, **options))


def openai_outcome(completion: ChatCompletion) -> CallOutcome:
    """What a chat completion brought: its text, tokens, and whether it was cut off or
    declined."""
    choice = completion.choices[0] if completion.choices else None
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    return CallOutcome(
        text=(choice.message.content or "") if choice else "",
        input_tokens=usage.prompt_tokens if usage else 0,
        cached_input_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
        output_tokens=usage.completion_tokens if usage else 0,
        truncated=bool(choice and choice.finish_reason == "length"),
        refusal=(getattr(choice.message, "refusal", None) or "") if choice else "",
    )


def anthropic_params(
    settings: ModelSettings,
    system: str,
    user: str,
    schema: dict[str, Any] | None = None,
    images: Sequence[tuple[str, ShownImage]] = (),
) -> dict[str, Any]:
    """The parameters of one Messages call (a batch's request carries the same)."""
    params: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": settings.max_output_tokens,
        # The instructions and guidelines, the same in every call of a run, marked for the
        # provider's prompt cache (a prompt too short to cache is simply not cached).
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": _anthropic_content(user, images)}],
    }
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.structured and schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    return params


def _call_anthropic(client: anthropic.Anthropic, params: dict[str, Any]) -> CallOutcome:
    typed = dict(params)
    options: dict[str, Any] = {}
    if "temperature" in typed:  # not a parameter of the client any more
        options["extra_body"] = {"temperature": typed.pop("temperature")}
    return anthropic_outcome(client.messages.create(**typed, **options))


def anthropic_outcome(message: Message) -> CallOutcome:
    """What a message brought: its text, tokens, and whether it was cut off or declined."""
    text = "".join(getattr(block, "text", "") for block in message.content)
    usage = message.usage
    # Anthropic counts the tokens read from and written to its cache apart from the rest.
    cached = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return CallOutcome(
        text=text,
        input_tokens=usage.input_tokens + cached + written,
        cached_input_tokens=cached,
        output_tokens=usage.output_tokens,
        truncated=message.stop_reason == "max_tokens",
        refusal=text if message.stop_reason == "refusal" else "",
    )


def failed_call(error: Exception, api_key: str, failure: Failure | None = None) -> CallOutcome:
    """The outcome of a call that raised: its failure's kind (whether trying again may
    help), and the error's message without the API key."""
    retry_after = None
    if failure is None:
        failure, retry_after = _classify(error)
    message = f"{type(error).__name__}: {error}"
    cause = _root_cause(error)
    if cause is not error and str(cause) and str(cause) not in message:
        # The SDKs say "Connection error."; what the connection met is in their cause.
        message += f" ({type(cause).__name__}: {cause})"
    if api_key:
        message = message.replace(api_key, "[the API key]")
    return CallOutcome(failure=failure, error=message[:ERROR_MAX_CHARS], retry_after_s=retry_after)


def _classify(error: Exception) -> tuple[Failure, float | None]:
    cause = _cause(error)
    if isinstance(cause, AddressRefused):
        return Failure.REFUSED, None
    if isinstance(cause, ResponseTooLarge):
        return Failure.TOO_LARGE, None
    if isinstance(cause, CompressedAnswer):
        return Failure.MALFORMED, None
    if isinstance(error, openai.APITimeoutError | anthropic.APITimeoutError):
        return Failure.TIMEOUT, None
    if isinstance(error, httpx.TimeoutException):
        return Failure.TIMEOUT, None
    status = getattr(error, "status_code", None)
    if status == 429:
        response = getattr(error, "response", None)
        return Failure.RATE_LIMITED, _retry_after(response.headers if response else {})
    if isinstance(status, int) and (status >= 500 or status in (408, 409)):
        return Failure.UNAVAILABLE, None
    if isinstance(status, int):
        return Failure.REJECTED, None
    return Failure.UNAVAILABLE, None  # a connection that failed or dropped


def _cause(error: BaseException) -> BaseException:
    """The safety layer's error in the error's chain (the SDKs wrap it), else the error."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, AddressRefused | ResponseTooLarge | CompressedAnswer):
            return seen
        seen = seen.__cause__ or seen.__context__
    return error


def _root_cause(error: BaseException) -> BaseException:
    """The first error in the chain of causes (at most a few links are followed)."""
    for _ in range(10):
        below = error.__cause__ or error.__context__
        if below is None:
            break
        error = below
    return error


def _retry_after(headers: Any) -> float:
    """Seconds to wait from Retry-After (seconds; an HTTP date counts as the default),
    bounded to MAX_RETRY_AFTER_S."""
    raw = str(headers.get("retry-after", "")).strip()
    try:
        seconds = float(raw)
    except ValueError:
        return DEFAULT_RETRY_AFTER_S
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)
