"""What a provider's answer says of its rate limits, read from its headers (pure).

- OpenAI and compatible servers: `x-ratelimit-limit-requests`, `-remaining-requests`,
  `-reset-requests` (a duration: "1s", "6m0s", "20ms"), the same for `-tokens`;
- Anthropic: `anthropic-ratelimit-requests-limit`, `-remaining`, `-reset` (an RFC 3339
  time), the same for `-tokens`;
- both: `retry-after` (seconds) on a 429.

Values out of range are ignored rather than trusted: a reset is at most MAX_RESET_S away.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

MAX_RESET_S = 3_600.0
MAX_COUNT = 10**9
_DURATION = re.compile(
    r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?"
)


@dataclass(frozen=True)
class Limits:
    """None: the answer did not say."""

    requests_limit: int | None = None
    requests_remaining: int | None = None
    requests_reset_s: float | None = None
    tokens_limit: int | None = None
    tokens_remaining: int | None = None
    tokens_reset_s: float | None = None
    retry_after_s: float | None = None

    @property
    def said_anything(self) -> bool:
        return any(value is not None for value in self.__dict__.values())


def limits_from(headers: Mapping[str, str], now: datetime) -> Limits:
    """The limits an answer's headers state (names compared without case)."""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}

    def count(*names: str) -> int | None:
        for name in names:
            raw = lowered.get(name, "").strip()
            if raw.isdigit() and int(raw) <= MAX_COUNT:
                return int(raw)
        return None

    def reset(openai_name: str, anthropic_name: str) -> float | None:
        if openai_name in lowered:
            return _duration_s(lowered[openai_name])
        if anthropic_name in lowered:
            return _seconds_until(lowered[anthropic_name], now)
        return None

    retry = lowered.get("retry-after", "").strip()
    return Limits(
        requests_limit=count("x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit"),
        requests_remaining=count(
            "x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"
        ),
        requests_reset_s=reset("x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset"),
        tokens_limit=count("x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit"),
        tokens_remaining=count(
            "x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining"
        ),
        tokens_reset_s=reset("x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset"),
        retry_after_s=_bounded(float(retry)) if _number(retry) else None,
    )


def _duration_s(text: str) -> float | None:
    text = text.strip()
    if _number(text):
        return _bounded(float(text))
    match = _DURATION.fullmatch(text)
    if not text or match is None:
        return None
    hours, minutes, seconds, millis = (float(part) if part else 0.0 for part in match.groups())
    return _bounded(hours * 3600 + minutes * 60 + seconds + millis / 1000)


def _seconds_until(text: str, now: datetime) -> float | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return _bounded((moment - now).total_seconds())


def _number(text: str) -> bool:
    return bool(re.fullmatch(r"\d+(?:\.\d+)?", text))


def _bounded(seconds: float) -> float | None:
    return min(max(seconds, 0.0), MAX_RESET_S) if seconds == seconds else None
