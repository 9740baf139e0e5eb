"""Stage 1: one value per snapshot from its feedback slots (metrics.md section 3)."""

from __future__ import annotations

from collections.abc import Sequence

from .scales import check_grades, get_scale


def snapshot_value(grades: Sequence[int | None], scale: str) -> float | None:
    """The stage-1 value of one snapshot whose slot ``grades`` are already on ``scale``.

    Empty slots (None) are ignored. Binary is a majority vote and a tie is null rather
    than a coin flip: two graders who disagree have not told us the result is relevant.
    Graded and detail use the arithmetic mean, which may be fractional. No grade -> None.
    Raises EngineError for an unknown scale or a grade that is not on it.
    """
    scale_def = get_scale(scale)
    check_grades(grades, scale_def)
    if scale_def.name == "binary":
        return binary_vote(grades)
    return mean_grade(grades)


def binary_vote(grades: Sequence[int | None]) -> float | None:
    """Majority of 0/1 grades, None on a tie or when there is no grade (no validation)."""
    relevant = irrelevant = 0
    for grade in grades:
        if grade == 1:
            relevant += 1
        elif grade == 0:
            irrelevant += 1
    if relevant > irrelevant:
        return 1.0
    if irrelevant > relevant:
        return 0.0
    return None


def mean_grade(grades: Sequence[int | None]) -> float | None:
    """Arithmetic mean of the given grades, None when there is none (no validation)."""
    given = [grade for grade in grades if grade is not None]
    if not given:
        return None
    return sum(given) / len(given)
