"""Which evaluation a metric's change is measured against (pure: no Django).

The reference of an evaluation is the previous finished evaluation of the same search
model; without one (no model, or the model's first), the team's baseline; without a
baseline, nothing. "Previous" follows the order of finishing, the order model history
shows, so a card's change is the step its chart draws. An evaluation still running has
every finished evaluation of its model before it.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class EvaluationKey:
    """What the choice needs to know of an evaluation."""

    id: int
    search_model_id: int | None
    finished_at: datetime | None  # None while it is not finished


def previous_finished(target: EvaluationKey, finished: Iterable[EvaluationKey]) -> int | None:
    """The id of the last evaluation of the target's model that finished before it."""
    if target.search_model_id is None:
        return None
    earlier = [
        candidate
        for candidate in finished
        if candidate.search_model_id == target.search_model_id
        and candidate.id != target.id
        and candidate.finished_at is not None
        and (
            target.finished_at is None
            or (candidate.finished_at, candidate.id) < (target.finished_at, target.id)
        )
    ]
    if not earlier:
        return None
    return max(earlier, key=lambda candidate: (candidate.finished_at, candidate.id)).id


def reference_for(
    target: EvaluationKey, finished: Iterable[EvaluationKey], baseline_id: int | None
) -> tuple[int | None, str]:
    """(id, why) of the evaluation the target is compared against; (None, "") for none."""
    previous = previous_finished(target, finished)
    if previous is not None:
        return previous, "previous"
    if baseline_id is not None and baseline_id != target.id:
        return baseline_id, "baseline"
    return None, ""


def change(value: float | None, reference: float | None) -> float | None:
    """value - reference, or None when either is missing."""
    if value is None or reference is None:
        return None
    return value - reference
