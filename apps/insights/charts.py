"""What the pages' charts draw, as plain data (pure: no Django).

A chart is a JSON object the page's script hands to Chart.js: a kind ("line" or "bar"),
the labels along the axis and one or more named series. A line over time also carries
each point's moment ("times"), and its points then stand along a real time axis, spaced
by the time between them, with dates for ticks. Pages also print the same numbers in a
table, so nothing is only readable by hovering.
"""

from collections.abc import Sequence
from datetime import UTC, datetime
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


def wall_clock_ms(moment: datetime) -> int:
    """A moment, already in the time zone pages show, as the x of a time axis: its
    wall-clock reading counted in milliseconds as if it were UTC.

    The browser then needs no time zone: charts.js reads dates and hours straight from
    the number, and a day's tick falls on the local midnight (charts.js steps by whole
    days from the epoch)."""
    return round(moment.replace(tzinfo=UTC).timestamp() * 1000)


def chart(
    kind: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    axis: str = "",
    compact: bool = False,
    times: Sequence[datetime] | None = None,
) -> dict[str, Any]:
    """The JSON a chart canvas is drawn from (see static/js/charts.js). A compact chart
    (a card's sparkline) leaves out the labels along its axis: they show on hover.

    With `times` (a line's moment of each label, in the time zone pages show, oldest
    first) the points stand along a time axis; the labels then title each point's
    tooltip."""
    if kind not in ("line", "bar"):
        raise ValueError(f"unknown chart kind {kind!r}")
    for name, values in series:
        if len(values) != len(labels):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(labels)} labels")
    if times is not None:
        if kind != "line":
            raise ValueError("only a line chart has a time axis")
        if len(times) != len(labels):
            raise ValueError(f"{len(times)} times for {len(labels)} labels")
    drawn: dict[str, Any] = {
        "kind": kind,
        "labels": list(labels),
        "series": [{"name": name, "values": list(values)} for name, values in series],
        "axis": axis,
        "compact": compact,
    }
    if times is not None:
        drawn["times"] = [wall_clock_ms(moment) for moment in times]
    return drawn
