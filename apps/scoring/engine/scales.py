"""Grading scales (metrics.md section 1).

An evaluation has one native scale and graders always grade on it; every metric is
defined on one of these three scales.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import EngineError


@dataclass(frozen=True)
class Scale:
    """One grading scale.

    ``grades``, ``labels`` and ``keys`` are parallel: ``labels[i]`` is what the grader UI
    shows for ``grades[i]`` and ``keys[i]`` is the keyboard shortcut that gives it.
    """

    name: str
    grades: tuple[int, ...]
    labels: tuple[str, ...]
    keys: tuple[str, ...]

    @property
    def lowest(self) -> int:
        return self.grades[0]

    @property
    def highest(self) -> int:
        return self.grades[-1]

    def describe_grades(self) -> str:
        """The grades as shown in error messages, e.g. ``(0, 1)``."""
        return "(" + ", ".join(str(grade) for grade in self.grades) + ")"

    def is_grade(self, value: object) -> bool:
        # bool is an int subclass; True must not pass for the grade 1.
        return type(value) is int and value in self.grades


BINARY = Scale(
    name="binary",
    grades=(0, 1),
    labels=("Irrelevant", "Relevant"),
    keys=("1", "2"),
)
GRADED = Scale(
    name="graded",
    grades=(0, 1, 2, 3),
    labels=("Poor", "Fair", "Good", "Perfect"),
    keys=("1", "2", "3", "4"),
)
DETAIL = Scale(
    name="detail",
    grades=tuple(range(1, 11)),
    labels=tuple(str(grade) for grade in range(1, 11)),
    # A keyboard has one key per digit, so 10 is typed as 0.
    keys=("1", "2", "3", "4", "5", "6", "7", "8", "9", "0"),
)

SCALES: dict[str, Scale] = {scale.name: scale for scale in (BINARY, GRADED, DETAIL)}


def get_scale(name: str) -> Scale:
    """The scale called ``name``; EngineError if there is none."""
    try:
        return SCALES[name]
    except (KeyError, TypeError):
        raise EngineError(f"unknown scale {name!r}; expected one of {', '.join(SCALES)}") from None


def check_grades(grades: Iterable[int | None], scale: Scale) -> None:
    """Raise EngineError unless every given grade is on ``scale`` (None = empty slot)."""
    for grade in grades:
        if grade is not None and not scale.is_grade(grade):
            raise EngineError(f"{grade!r} is not a {scale.name} grade {scale.describe_grades()}")
