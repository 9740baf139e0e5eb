"""Negative levels under the trec profile: a document in the pool that nobody judged.

trec_eval reads a qrels level below 0 as "pooled, not judged" (its README: -1 is a pool
document that was not judged). Such a document is not relevant and has no gain, which is
what an empty slot already means, so under `trec` a negative grade is taken out before
stage 1, and bpref, the condensed lists, unjudged@k and the RBP residual count the
result as unjudged. Two things still need to know it was pooled: infAP, which tells a
pooled unjudged document from one outside the pool, and whether the keyword is judged at
all (trec_eval evaluates a query whose qrels hold only negative levels). Under
`searchtweak` a negative level is a grade like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .conventions import TREC
from .scales import Scale

SnapshotGrades = Sequence[Sequence[int | None]]


@dataclass(frozen=True)
class PooledUnjudged:
    """A keyword's grades with the negative levels taken out, and where they were.

    ``unjudged_in_pool``: per result, whether it is in the pool but unjudged (it had a
    negative grade and no other); ``unjudged_elsewhere``: how many documents the run did
    not retrieve are in the pool but unjudged."""

    snapshot_grades: SnapshotGrades
    unretrieved: Sequence[int]
    unjudged_in_pool: Sequence[bool] = ()
    unjudged_elsewhere: int = 0


def take_out_unjudged_levels(
    snapshot_grades: SnapshotGrades, unretrieved: Sequence[int], native: Scale, profile: str
) -> PooledUnjudged:
    """The keyword as the profile reads it: unchanged unless `trec` on a scale with
    levels below 0 (only a custom scale has them)."""
    if profile != TREC or native.lowest >= 0:
        return PooledUnjudged(snapshot_grades, unretrieved)
    return PooledUnjudged(
        snapshot_grades=[
            [None if grade is not None and grade < 0 else grade for grade in slots]
            for slots in snapshot_grades
        ],
        unretrieved=[grade for grade in unretrieved if grade >= 0],
        unjudged_in_pool=[_only_unjudged_levels(slots) for slots in snapshot_grades],
        unjudged_elsewhere=sum(1 for grade in unretrieved if grade < 0),
    )


def _only_unjudged_levels(slots: Sequence[int | None]) -> bool:
    given = [grade for grade in slots if grade is not None]
    return bool(given) and all(grade < 0 for grade in given)


@dataclass(frozen=True, eq=False)
class PooledUnjudgedMatrix:
    """``take_out_unjudged_levels`` for the batch path: grades as keywords x positions x
    slots and unretrieved grades as keywords x documents (NaN = empty or padding), with
    the negative levels taken out; ``unjudged_in_pool`` per keyword and position, and
    ``pooled_anywhere`` per keyword (a result or an unretrieved document of the pool that
    nobody judged)."""

    grades: np.ndarray
    unretrieved: np.ndarray
    unjudged_in_pool: np.ndarray
    pooled_anywhere: np.ndarray


def take_out_unjudged_level_arrays(
    grades: np.ndarray, unretrieved: np.ndarray, native: Scale, profile: str
) -> PooledUnjudgedMatrix:
    nothing_pooled = np.zeros(grades.shape[:2], dtype=bool)
    if profile != TREC or native.lowest >= 0:
        nothing_anywhere = np.zeros(grades.shape[0], dtype=bool)
        return PooledUnjudgedMatrix(grades, unretrieved, nothing_pooled, nothing_anywhere)
    # NaN (an empty slot, padding) compares false both ways.
    negative = grades < 0
    unjudged_in_pool = np.asarray(negative.any(axis=2) & ~(grades >= 0).any(axis=2))
    negative_elsewhere = np.asarray(unretrieved < 0)
    return PooledUnjudgedMatrix(
        grades=np.where(negative, np.nan, grades),
        unretrieved=np.where(negative_elsewhere, np.nan, unretrieved),
        unjudged_in_pool=unjudged_in_pool,
        pooled_anywhere=np.asarray(unjudged_in_pool.any(axis=1) | negative_elsewhere.any(axis=1)),
    )
