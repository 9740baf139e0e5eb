"""Each grader's agreement with the consensus of the other graders. Pure numpy.

The definition, for one grader G:

- A grade g that G gave to a snapshot is *compared* when at least one other grader
  graded the same snapshot. G's own grade never counts towards the consensus it is
  compared with.
- The consensus is stage 1 of the other graders' grades on the evaluation's native
  scale (metrics.md section 3): on the binary scale their majority vote, where a tie
  means there is no consensus and the grade is not compared; on the graded and detail
  scales the mean of their grades.
- The grade *agrees* when it lies within half a grade of the consensus: on the binary
  scale that is equality with the majority; on the other scales g is the grade nearest
  to the others' mean, or one of the two nearest when the mean lies exactly between two
  grades (others 1 and 2: both 1 and 2 agree).
- G's agreement = agreeing grades / compared grades (None when nothing was compared),
  reported with the mean distance |g - consensus| on the native scale.

The test is done in integers (2 * |g * m - s| <= m, with s the sum and m the number of
the other grades), so no rounding decides whether a grade is halfway.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

IntArray = np.ndarray


@dataclass(frozen=True)
class GraderAgreement:
    """``grader``: the code the caller gave the grader's ratings."""

    grader: int
    graded: int
    compared: int
    agreeing: int
    mean_distance: float | None = None

    @property
    def agreement(self) -> float | None:
        return self.agreeing / self.compared if self.compared else None


def grader_agreement(
    items: IntArray, graders: IntArray, grades: IntArray, *, binary: bool
) -> list[GraderAgreement]:
    """One entry per grader code present in ``graders``, in code order. ``items``,
    ``graders`` and ``grades`` are parallel arrays, one entry per graded slot."""
    item_codes = np.asarray(items, dtype=np.int64)
    grader_codes = np.asarray(graders, dtype=np.int64)
    given = np.asarray(grades, dtype=np.int64)
    if item_codes.size == 0:
        return []
    item_count = int(item_codes.max()) + 1
    per_item_count = np.bincount(item_codes, minlength=item_count)
    per_item_sum = np.bincount(item_codes, weights=given, minlength=item_count).astype(np.int64)

    others = per_item_count[item_codes] - 1
    others_sum = per_item_sum[item_codes] - given
    compared = others > 0
    if binary:
        # The others' ones and zeros; a tie leaves no consensus to compare with.
        compared &= 2 * others_sum != others
    gap = np.abs(given * others - others_sum)  # |g - mean| * m, an integer
    agrees = compared & (2 * gap <= others)
    if binary:  # the consensus is the majority, 0 or 1, not the others' mean
        distance = (compared & ~agrees).astype(np.float64)
    else:
        distance = np.divide(gap, others, out=np.zeros(len(gap)), where=compared)

    grader_count = int(grader_codes.max()) + 1
    graded_by = np.bincount(grader_codes, minlength=grader_count)
    compared_by = np.bincount(grader_codes, weights=compared, minlength=grader_count)
    agreeing_by = np.bincount(grader_codes, weights=agrees, minlength=grader_count)
    distance_by = np.bincount(grader_codes, weights=distance, minlength=grader_count)
    return [
        GraderAgreement(
            grader=code,
            graded=int(graded_by[code]),
            compared=int(compared_by[code]),
            agreeing=int(agreeing_by[code]),
            mean_distance=(
                float(distance_by[code] / compared_by[code]) if compared_by[code] else None
            ),
        )
        for code in range(grader_count)
        if graded_by[code]
    ]
