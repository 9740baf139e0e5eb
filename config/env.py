"""Strict readers for environment variables.

Every setting comes from the environment with a safe default for a developer's machine.
A value that cannot be understood stops start-up with a message that names the variable,
instead of running with a silently wrong configuration.
"""

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no).")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# A rate is "<count>/<period>": "5/hour", "3000/min", "10/second", "100/day"; the period
# may also be written s, sec, m, min, h or d. DRF reads the same texts, so one spelling
# serves the API throttles and Relevo's own.
_RATE = re.compile(r"(\d+)/(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?)", re.IGNORECASE)
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(text: str) -> tuple[int, int]:
    """(count, seconds) of a rate such as "5/hour"; ValueError when it is not one."""
    match = _RATE.fullmatch(text.strip().replace(" ", ""))
    if match is None or int(match[1]) < 1:
        raise ValueError(f"{text!r} is not a rate like 5/hour or 3000/min")
    return int(match[1]), _PERIOD_SECONDS[match[2][0].lower()]


def env_rate(name: str, default: str) -> str:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        parse_rate(raw)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate (write it as count/period: 5/hour, 3000/min)."
        ) from None
    return raw.strip()
