"""Grading scales (metrics.md section 1), and the integer scales a team defines.

An evaluation has one native scale and graders always grade on it; every metric is
defined on one of the three built-in scales. A custom scale (``custom_scale``) is a run
of whole levels, such as TREC's -2..4: its binary metrics count the levels from
``relevant_from`` up as relevant, and its graded and detail metrics take the level
itself as the gain (trec_eval's semantics).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import EngineError


@dataclass(frozen=True)
class Scale:
    """One grading scale.

    ``grades``, ``labels`` and ``keys`` are parallel: ``labels[i]`` is what the grader UI
    shows for ``grades[i]`` and ``keys[i]`` is the keyboard shortcut that gives it ("" for
    a grade with no key: a level of a team's scale outside 0..9 that its lead gave none).
    """

    name: str
    grades: tuple[int, ...]
    labels: tuple[str, ...]
    keys: tuple[str, ...]
    # Custom scales: the lowest level that is relevant for the binary metrics.
    relevant_from: int = 1
    custom: bool = False

    @property
    def lowest(self) -> int:
        return self.grades[0]

    @property
    def highest(self) -> int:
        return self.grades[-1]

    def describe_grades(self) -> str:
        """The grades as shown in error messages, e.g. ``(0, 1)``."""
        return "(" + ", ".join(str(grade) for grade in self.grades) + ")"

    def label_of(self, grade: int) -> str:
        """The one way every page and export names a grade: its value and its name,
        "2 · Good". A level named by its own number ("7" on the detail scale) is just
        "7"; a value off the scale (a grade stored before its scale changed) is shown
        as the bare number, never hidden."""
        if grade not in self.grades:
            return str(grade)
        name = self.labels[self.grades.index(grade)]
        return str(grade) if name == str(grade) else f"{grade} · {name}"

    def is_grade(self, value: object) -> bool:
        # bool is an int subclass; True must not pass for the grade 1.
        return type(value) is int and value in self.grades


BINARY = Scale(
    name="binary",
    grades=(0, 1),
    labels=("Irrelevant", "Relevant"),
    keys=("0", "1"),
)
GRADED = Scale(
    name="graded",
    grades=(0, 1, 2, 3),
    labels=("Poor", "Fair", "Good", "Perfect"),
    keys=("0", "1", "2", "3"),
)
DETAIL = Scale(
    name="detail",
    grades=tuple(range(1, 11)),
    labels=tuple(str(grade) for grade in range(1, 11)),
    # A keyboard has one key per digit, so 10 is typed as 0 (no grade of this scale is 0).
    keys=("1", "2", "3", "4", "5", "6", "7", "8", "9", "0"),
)

SCALES: dict[str, Scale] = {scale.name: scale for scale in (BINARY, GRADED, DETAIL)}


# The bounds of a custom scale: ten levels fit the keyboard's ten digits.
MAX_LEVELS = 10
LOWEST_LEVEL, HIGHEST_LEVEL = -100, 100
LABEL_LIMIT = 40
RESERVED_KEYS = {"s", "S", "g", "G"}


def grade_keys(grades: Iterable[int]) -> tuple[str, ...]:
    """Each grade's key, unless a lead chose others: the grade's own number where that is
    one digit, so a grader types the number the button's label starts with; 10 on a scale
    without 0 is typed as 0, as on the detail scale. Any other level (below 0, above 9)
    has no key ("") and is given by a click."""
    grades = tuple(grades)
    keys = []
    for grade in grades:
        if 0 <= grade <= 9:
            keys.append(str(grade))
        elif grade == 10 and 0 not in grades:
            keys.append("0")
        else:
            keys.append("")
    return tuple(keys)


def custom_scale_problems(
    lowest: object,
    highest: object,
    *,
    labels: object = None,
    relevant_from: object = 1,
    keys: object = None,
) -> list[str]:
    """Every problem with a custom scale's definition, as "<field>: <problem>"."""
    problems: list[str] = []
    for field, value in (("lowest", lowest), ("highest", highest)):
        if type(value) is not int or not LOWEST_LEVEL <= value <= HIGHEST_LEVEL:
            problems.append(
                f"{field}: must be a whole number from {LOWEST_LEVEL} to {HIGHEST_LEVEL}"
            )
    if problems:
        return problems
    assert isinstance(lowest, int) and isinstance(highest, int)
    count = highest - lowest + 1
    if not 2 <= count <= MAX_LEVELS:
        return [f"highest: from lowest to highest must be 2 to {MAX_LEVELS} levels, got {count}"]
    if type(relevant_from) is not int or not lowest < relevant_from <= highest:
        problems.append(
            f"relevant_from: must be a level above the lowest ({lowest + 1} to {highest})"
        )
    if labels is not None:
        if not isinstance(labels, list | tuple) or len(labels) != count:
            problems.append(f"labels: one per level, {count} in all")
        elif not all(isinstance(x, str) and 0 < len(x.strip()) <= LABEL_LIMIT for x in labels):
            problems.append(f"labels: each a text of 1 to {LABEL_LIMIT} characters")
    if keys is not None:
        if not isinstance(keys, list | tuple) or len(keys) != count:
            problems.append(f"keys: one per level, {count} in all")
        elif not all(isinstance(x, str) and len(x) == 1 and x.isprintable() for x in keys):
            problems.append("keys: each one printable character")
        elif len(set(keys)) != count:
            problems.append("keys: each level needs a key of its own")
        elif RESERVED_KEYS & set(keys):
            problems.append("keys: s and g are the grading page's Skip and Guidelines")
    return problems


def custom_scale(
    lowest: int,
    highest: int,
    *,
    labels: Iterable[str] | None = None,
    relevant_from: int = 1,
    keys: Iterable[str] | None = None,
    name: str = "custom",
) -> Scale:
    """A team's integer scale from ``lowest`` to ``highest``; EngineError listing every
    problem. Labels default to the levels themselves, keys to those of grade_keys."""
    labels = None if labels is None else tuple(labels)
    keys = None if keys is None else tuple(keys)
    problems = custom_scale_problems(
        lowest, highest, labels=labels, relevant_from=relevant_from, keys=keys
    )
    if problems:
        raise EngineError("invalid scale: " + "; ".join(problems))
    grades = tuple(range(lowest, highest + 1))
    return Scale(
        name=name,
        grades=grades,
        labels=tuple(label.strip() for label in labels) if labels else tuple(map(str, grades)),
        keys=keys or grade_keys(grades),
        relevant_from=relevant_from,
        custom=True,
    )


def get_scale(name: str | Scale) -> Scale:
    """The scale called ``name`` (a custom scale is passed as itself); EngineError if
    there is none."""
    if isinstance(name, Scale):
        return name
    try:
        return SCALES[name]
    except (KeyError, TypeError):
        raise EngineError(f"unknown scale {name!r}; expected one of {', '.join(SCALES)}") from None


def check_grades(grades: Iterable[int | None], scale: Scale) -> None:
    """Raise EngineError unless every given grade is on ``scale`` (None = empty slot)."""
    for grade in grades:
        if grade is not None and not scale.is_grade(grade):
            raise EngineError(f"{grade!r} is not a {scale.name} grade {scale.describe_grades()}")
