"""Which snapshots go to the lead's disagreement queue. Pure; the database query in
selectors.py applies the same rule in SQL (a test checks they agree).

Only graded slots count (empty ones are ignored), and a snapshot needs two grades or
more to disagree:

- binary: a tie, as many 1s as 0s (1 vs 1, or 2 vs 2). Its stage-1 value is null, so
  the snapshot counts in no metric until someone decides. With three slots and only two
  graded, 1 vs 0 is a tie *now*: it is listed, and the page says that a slot is still
  open, so a lead may wait for the third grade instead of deciding.
- graded and detail: a spread of two grades or more between the highest and the lowest
  grade (Poor next to Good; 3 next to 5 on the detail scale). Neighbouring grades are
  ordinary judgement noise and are not listed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# A spread of this many grades or more is a disagreement on the graded and detail scales.
MIN_SPREAD = 2

TIE = "tie"
SPREAD = "spread"


def disagreement_kind(grades: Sequence[int | None], scale: str) -> str | None:
    """TIE, SPREAD, or None when the snapshot's graders do not disagree."""
    given = [grade for grade in grades if grade is not None]
    if len(given) < 2:
        return None
    if scale == "binary":
        ones = sum(given)
        return TIE if 2 * ones == len(given) else None
    return SPREAD if max(given) - min(given) >= MIN_SPREAD else None


def disagreeing_items(items: np.ndarray, grades: np.ndarray, *, binary: bool) -> np.ndarray:
    """``disagreement_kind(...) is not None`` for every item at once, from parallel arrays
    of item codes (0 .. n-1) and grades, one entry per graded slot."""
    item_codes = np.asarray(items, dtype=np.int64)
    given = np.asarray(grades, dtype=np.int64)
    count = int(item_codes.max()) + 1 if item_codes.size else 0
    graded = np.bincount(item_codes, minlength=count)
    enough = graded >= 2
    if binary:
        ones = np.bincount(item_codes, weights=given, minlength=count)
        return enough & (2 * ones == graded)
    highest = np.full(count, np.iinfo(np.int64).min)
    lowest = np.full(count, np.iinfo(np.int64).max)
    np.maximum.at(highest, item_codes, given)
    np.minimum.at(lowest, item_codes, given)
    return enough & (highest - lowest >= MIN_SPREAD)
