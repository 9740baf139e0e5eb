"""Geometry of one metric's difference with its interval, drawn as a small SVG.

Each metric gets its own symmetric axis around zero (nDCG differences live in [-1, 1],
DCG differences can be much larger), so a bar shows where zero lies against the
interval rather than comparing sizes across metrics; the axis end is printed beside it.
"""

from dataclasses import dataclass

WIDTH = 150.0
HEIGHT = 26.0
MARGIN = 8.0


@dataclass(frozen=True)
class DifferenceBar:
    zero: float  # x of the zero line
    low: float  # x of the interval's ends
    high: float
    mean: float  # x of the mean difference
    extent: float  # the axis runs from -extent to +extent
    tone: str  # "better", "worse" or "neutral": the interval's side of zero
    width: float = WIDTH
    height: float = HEIGHT

    @property
    def middle(self) -> float:
        return self.height / 2


def difference_bar(difference: float, low: float, high: float) -> DifferenceBar:
    extent = max(abs(low), abs(high), abs(difference)) * 1.1 or 1.0
    half = WIDTH / 2 - MARGIN

    def x(value: float) -> float:
        return round(WIDTH / 2 + value / extent * half, 2)

    tone = "better" if low > 0 else "worse" if high < 0 else "neutral"
    return DifferenceBar(x(0.0), x(low), x(high), x(difference), extent, tone)
