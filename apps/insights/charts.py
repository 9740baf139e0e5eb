"""What the pages' charts draw, as plain data (pure: no Django).

A chart is a JSON object the page's script hands to Chart.js: a kind ("line" or "bar"),
the labels along the axis and one or more named series. Pages also print the same
numbers in a table, so nothing is only readable by hovering.
"""

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# A history has a point for every minute with grading; a chart shows at most this many.
HISTORY_POINTS = 120


def thin(points: Sequence[T], limit: int = HISTORY_POINTS) -> list[T]:
    """At most `limit` of the points, evenly spread, keeping the first and the last.

    Each history point is the metric's value at that minute, so any subset still draws
    true values; the last one is the current value.
    """
    if limit < 2:
        raise ValueError("a chart needs at least two points")
    count = len(points)
    if count <= limit:
        return list(points)
    picked = sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})
    return [points[index] for index in picked]


def chart(
    kind: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    axis: str = "",
    compact: bool = False,
) -> dict[str, Any]:
    """The JSON a chart canvas is drawn from (see static/js/charts.js). A compact chart
    (a card's sparkline) leaves out the labels along its axis: they show on hover."""
    if kind not in ("line", "bar"):
        raise ValueError(f"unknown chart kind {kind!r}")
    for name, values in series:
        if len(values) != len(labels):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(labels)} labels")
    return {
        "kind": kind,
        "labels": list(labels),
        "series": [{"name": name, "values": list(values)} for name, values in series],
        "axis": axis,
        "compact": compact,
    }
