"""A lead's decision for a snapshot stands in for its graders' grades in stage 1.

When graders disagree, a team lead may settle the snapshot with one grade on the
evaluation's native scale. The decision is passed in as data, one entry per snapshot
(None = not decided), and the decided snapshot is then aggregated as if that grade were
its only one: its stage-1 value is the decision on the native scale, and on another
scale the decision is mapped with the transformer rules exactly like a grade would be.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import EngineError
from .scales import Scale, check_grades

Decisions = Sequence[int | None]


def with_decisions(
    snapshot_grades: Sequence[Sequence[int | None]], decisions: Decisions | None, native: Scale
) -> Sequence[Sequence[int | None]]:
    """``snapshot_grades`` with every decided snapshot's slots replaced by the decision
    followed by empty slots (so each snapshot keeps its number of slots).

    Raises EngineError when ``decisions`` does not have one entry per snapshot or holds a
    grade that is not on the ``native`` scale.
    """
    if decisions is None:
        return snapshot_grades
    if len(decisions) != len(snapshot_grades):
        raise EngineError(
            f"decisions: expected one per snapshot ({len(snapshot_grades)}), got {len(decisions)}"
        )
    check_grades(decisions, native)
    return [
        slots if decision is None else [decision, *([None] * (len(slots) - 1))]
        for slots, decision in zip(snapshot_grades, decisions, strict=True)
    ]
