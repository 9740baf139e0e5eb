"""A rate is "<count>/<period>": "5/hour", "3000/min", "10/second", "100/day"; the period
may also be written s, sec, m, min, h or d. DRF reads the same texts, so one spelling
serves the API throttles and Relevo's own (ratelimit.py), and settings check them."""

import re

_RATE = re.compile(r"(\d+)/(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?)", re.IGNORECASE)
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(text: str) -> tuple[int, int]:
    """(count, seconds) of a rate such as "5/hour"; ValueError when it is not one."""
    match = _RATE.fullmatch(text.strip().replace(" ", ""))
    if match is None or int(match[1]) < 1:
        raise ValueError(f"{text!r} is not a rate like 5/hour or 3000/min")
    return int(match[1]), _PERIOD_SECONDS[match[2][0].lower()]
