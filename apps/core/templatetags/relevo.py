"""Template filters shared by every page."""

import json
import math
from typing import Any

from django import template

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """0.6667 -> '66.7' (for display only; stored values keep full precision)."""
    if value is None:
        return "–"
    return f"{value * 100:.{int(digits)}f}"


@register.filter
def render_value(value: Any) -> str:
    """An attribute value as text: lists joined, objects as compact JSON."""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@register.filter
def exp(value: float | None) -> float | None:
    """e to the value (GMAP from a mean of log AP); None stays None."""
    return None if value is None else math.exp(value)


@register.filter
def decimal(value: float | None, digits: int = 4) -> str:
    """A metric value rounded for display; the full value stays in the title attribute."""
    if value is None:
        return "–"
    return f"{value:.{int(digits)}f}"
