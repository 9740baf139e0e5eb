"""The providers' batch interfaces: a not-urgent run's calls sent together, answered
within 24 hours at half the price (batch_runs.py is the run's side).

- OpenAI-compatible: the Batch API. The calls go up as a JSON Lines file (POST /files,
  purpose "batch"), a line a call whose body is the synchronous call's
  (providers.openai_body); POST /batches makes the batch (window 24h); GET /batches/{id}
  says how it goes; once it ended, its output file and error file hold a line for each
  call that ran.
- Anthropic: Message Batches. POST /v1/messages/batches with each call's parameters
  (providers.anthropic_params); GET /v1/messages/batches/{id} until its
  processing_status is "ended"; its results (JSON Lines at results_url) hold a line a call.

Each answer is read by the synchronous call's rules (providers.openai_outcome,
anthropic_outcome). A call the provider never ran (the batch expired or was cancelled
first) has no outcome: its results are claimed again. Every request goes through the
address-safety layer; a batch's results are read up to BYTES_PER_REQUEST a call (6.4 MB
for 100 calls), anything else up to providers.MAX_ANSWER_BYTES. A call never raises for
what the provider does: a failure comes back as a CallOutcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, TypeVar

import anthropic
import httpx2 as httpx
import openai
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from apps.search.safe_transport import AddressRefused

from .prompting import ShownImage
from .providers import (
    MAX_ANSWER_BYTES,
    CallOutcome,
    Failure,
    ModelSettings,
    Protocol,
    anthropic_outcome,
    anthropic_params,
    failed_call,
    new_client,
    openai_body,
    openai_outcome,
)

# Both providers price work sent through their batch interfaces at half their prices
# (OpenAI's Batch API, Anthropic's Message Batches): a call's cost at the judge's prices
# is multiplied by this.
BATCH_PRICE_FACTOR = Decimal("0.5")
# What a batch's results are read up to, a call: an answer of a few thousand tokens and
# the line around it fit many times over.
BYTES_PER_REQUEST = 64_000
COMPLETION_WINDOW: Final = "24h"
CHAT_COMPLETIONS: Final = "/v1/chat/completions"
# OpenAI's statuses of a batch that will not change any more.
OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# A call the provider did not run: its results are claimed again.
OPENAI_NOT_RUN = frozenset({"batch_expired", "batch_cancelled"})
ANTHROPIC_RETRYABLE = {
    "rate_limit_error": Failure.RATE_LIMITED,
    "overloaded_error": Failure.UNAVAILABLE,
    "api_error": Failure.UNAVAILABLE,
    "timeout_error": Failure.TIMEOUT,
}


@dataclass(frozen=True)
class BatchLine:
    """One call of a batch: its id in the batch and what the synchronous call sends."""

    custom_id: str
    system: str
    user: str
    schema: dict[str, Any] | None = None
    images: Sequence[tuple[str, ShownImage]] = ()


@dataclass(frozen=True)
class Sent:
    """A batch the provider accepted (its id), or why it did not (`failure`)."""

    batch_id: str = ""
    input_file_id: str = ""
    status: str = ""
    failure: CallOutcome | None = None


@dataclass(frozen=True)
class Polled:
    """How a batch goes: the provider's status, whether it ended, and, when the provider
    refused it whole (OpenAI's "failed": its input was not valid), why. `failure`: the
    poll itself failed."""

    status: str = ""
    ended: bool = False
    refused: str = ""
    output_file_id: str = ""
    error_file_id: str = ""
    failure: CallOutcome | None = None


@dataclass(frozen=True)
class BatchResults:
    """The outcome of each call that ran, by custom_id; or why they could not be read."""

    outcomes: dict[str, CallOutcome]
    failure: CallOutcome | None = None


def request_line(settings: ModelSettings, line: BatchLine) -> dict[str, Any]:
    """The call as the provider's batch takes it: OpenAI's input file line, Anthropic's
    request, each carrying the synchronous call's body."""
    if settings.protocol == Protocol.ANTHROPIC:
        params = anthropic_params(settings, line.system, line.user, line.schema, line.images)
        return {"custom_id": line.custom_id, "params": params}
    body = openai_body(settings, line.system, line.user, line.schema, line.images)
    return {"custom_id": line.custom_id, "method": "POST", "url": CHAT_COMPLETIONS, "body": body}


def batch_submit(settings: ModelSettings, lines: list[dict[str, Any]]) -> Sent:
    """Send the calls (request_line's) as one batch."""

    def send(client: openai.OpenAI | anthropic.Anthropic) -> Sent:
        if isinstance(client, anthropic.Anthropic):
            made = client.messages.batches.create(requests=lines)  # type: ignore[arg-type]
            return Sent(batch_id=made.id, status=made.processing_status)
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        uploaded = client.files.create(
            file=("relevo-batch.jsonl", data, "application/jsonl"), purpose="batch"
        )
        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint=CHAT_COMPLETIONS,
            completion_window=COMPLETION_WINDOW,
        )
        return Sent(batch_id=batch.id, input_file_id=uploaded.id, status=batch.status)

    return _calling(settings, MAX_ANSWER_BYTES, send, lambda failure: Sent(failure=failure))


def batch_poll(settings: ModelSettings, batch_id: str) -> Polled:
    """The batch's status as the provider tells it now."""

    def poll(client: openai.OpenAI | anthropic.Anthropic) -> Polled:
        if isinstance(client, anthropic.Anthropic):
            made = client.messages.batches.retrieve(batch_id)
            status = made.processing_status
            return Polled(status=status, ended=status == "ended")
        batch = client.batches.retrieve(batch_id)
        refused = ""
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors and batch.errors.data else []
            said = "; ".join(e.message or e.code or "" for e in errors) or "no reason given"
            refused = f"the provider refused the batch: {said}"[:1000]
        return Polled(
            status=batch.status,
            ended=batch.status in OPENAI_ENDED,
            refused=refused,
            output_file_id=batch.output_file_id or "",
            error_file_id=batch.error_file_id or "",
        )

    return _calling(settings, MAX_ANSWER_BYTES, poll, lambda failure: Polled(failure=failure))


def batch_results(
    settings: ModelSettings, batch_id: str, polled: Polled, requests: int
) -> BatchResults:
    """The outcome of each call of an ended batch that ran, read up to BYTES_PER_REQUEST
    a call of the batch's `requests`."""
    limit = max(MAX_ANSWER_BYTES, BYTES_PER_REQUEST * requests)

    def read(client: openai.OpenAI | anthropic.Anthropic) -> BatchResults:
        if isinstance(client, anthropic.Anthropic):
            outcomes = {}
            for item in client.messages.batches.results(batch_id):
                outcome = _anthropic_result(item.result)
                if outcome is not None:
                    outcomes[item.custom_id] = outcome
            return BatchResults(outcomes)
        outcomes = {}
        for file_id in (polled.output_file_id, polled.error_file_id):
            if file_id:
                text = client.files.content(file_id).text
                outcomes.update(_openai_lines(text))
        return BatchResults(outcomes)

    def failed(failure: CallOutcome) -> BatchResults:
        return BatchResults({}, failure)

    return _calling(settings, limit, read, failed)


def batch_cancel(settings: ModelSettings, batch_id: str) -> CallOutcome | None:
    """Ask the provider to cancel the batch; None when it took the request."""

    def cancel(client: openai.OpenAI | anthropic.Anthropic) -> CallOutcome | None:
        if isinstance(client, anthropic.Anthropic):
            client.messages.batches.cancel(batch_id)
        else:
            client.batches.cancel(batch_id)
        return None

    return _calling(settings, MAX_ANSWER_BYTES, cancel, lambda failure: failure)


_T = TypeVar("_T")


def _calling(
    settings: ModelSettings,
    max_bytes: int,
    call: Callable[[openai.OpenAI | anthropic.Anthropic], _T],
    on_failure: Callable[[CallOutcome], _T],
) -> _T:
    """`call` with a client of its own (a batch's reads have their own size bound), or
    what `on_failure` makes of why it failed, as providers.call_model classifies it."""
    try:
        with _client(settings, max_bytes) as client:
            return call(client)
    except (openai.APIError, anthropic.APIError, httpx.HTTPError, AddressRefused) as error:
        return on_failure(failed_call(error, settings.api_key))
    except ValueError as error:  # an answer that is not the protocol's JSON
        return on_failure(failed_call(error, settings.api_key, Failure.MALFORMED))


@contextmanager
def _client(
    settings: ModelSettings, max_bytes: int
) -> Iterator[openai.OpenAI | anthropic.Anthropic]:
    client = new_client(settings, max_bytes)
    try:
        yield client
    finally:
        client.close()


def _openai_lines(text: str) -> dict[str, CallOutcome]:
    """The outcomes of an output or error file's lines, by custom_id; a call the
    provider did not run has none."""
    outcomes = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            raise ValueError("a batch output line without a custom_id")
        outcome = _openai_line(line)
        if outcome is not None:
            outcomes[line["custom_id"]] = outcome
    return outcomes


def _openai_line(line: dict[str, Any]) -> CallOutcome | None:
    response = line.get("response") or {}
    error = line.get("error") or {}
    if not response:
        if error.get("code") in OPENAI_NOT_RUN:
            return None
        why = f"{error.get('code') or 'error'}: {error.get('message') or ''}"
        return CallOutcome(failure=Failure.REJECTED, error=why[:500])
    status = int(response.get("status_code") or 0)
    body = response.get("body") or {}
    if status != 200:
        said = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
        return CallOutcome(
            failure=_failure_of_status(status),
            error=f"HTTP {status}: {said or json.dumps(body)[:300]}"[:500],
        )
    return openai_outcome(ChatCompletion.model_validate(body))


def _failure_of_status(status: int) -> Failure:
    """A call's failure by its answer's status, as providers classifies a raised one."""
    if status == 429:
        return Failure.RATE_LIMITED
    if status >= 500 or status in (408, 409):
        return Failure.UNAVAILABLE
    return Failure.REJECTED


def _anthropic_result(result: Any) -> CallOutcome | None:
    kind = getattr(result, "type", "")
    if kind == "succeeded":
        message = result.message
        if isinstance(message, Message):
            return anthropic_outcome(message)
        return anthropic_outcome(Message.model_validate(message))
    if kind == "errored":
        inner = getattr(result.error, "error", None)
        error_type = getattr(inner, "type", "") or "error"
        said = getattr(inner, "message", "") or ""
        failure = ANTHROPIC_RETRYABLE.get(error_type, Failure.REJECTED)
        return CallOutcome(failure=failure, error=f"{error_type}: {said}"[:500])
    return None  # canceled or expired: not run
