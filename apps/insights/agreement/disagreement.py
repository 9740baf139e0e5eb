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
