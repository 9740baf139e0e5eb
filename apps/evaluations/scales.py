"""An evaluation's grading scale: a built-in one by name, or whole levels of its own.

A custom scale is stored with the evaluation (`Evaluation.scale_levels`), not looked up
elsewhere, so the meaning of the grades it holds can never change under them:

    {"lowest": -2, "highest": 4, "relevant_from": 1,
     "labels": ["Spam", "Junk", ...] (optional), "keys": ["1", ...] (optional)}

`relevant_from` is the lowest level the binary metrics count as relevant (trec_eval's
relevance level); graded and detail metrics take the level itself as the gain.
"""

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from apps import engine

LEVEL_FIELDS = ("lowest", "highest", "relevant_from", "labels", "keys")


def scale_levels_problems(levels: Any) -> list[str]:
    """Every problem with a custom scale's definition, as "scale_levels.<field>: ..."."""
    if not isinstance(levels, Mapping):
        return ['scale_levels: required for a custom scale: {"lowest", "highest", ...}']
    problems = [f"scale_levels.{key}: unknown field" for key in levels if key not in LEVEL_FIELDS]
    problems += [
        f"scale_levels.{problem}"
        for problem in engine.custom_scale_problems(
            levels.get("lowest"),
            levels.get("highest"),
            labels=levels.get("labels"),
            relevant_from=levels.get("relevant_from", 1),
            keys=levels.get("keys"),
        )
    ]
    return problems


def scale_of(name: str, levels: Mapping[str, Any] | None) -> engine.Scale:
    """The engine's scale for a stored (scale, scale_levels) pair."""
    if name != "custom":
        return engine.get_scale(name)
    if levels is None:
        raise engine.EngineError("a custom scale needs its levels")
    return _custom(
        levels["lowest"],
        levels["highest"],
        levels.get("relevant_from", 1),
        tuple(levels["labels"]) if levels.get("labels") else None,
        tuple(levels["keys"]) if levels.get("keys") else None,
    )


@lru_cache(maxsize=256)
def _custom(
    lowest: int,
    highest: int,
    relevant_from: int,
    labels: tuple[str, ...] | None,
    keys: tuple[str, ...] | None,
) -> engine.Scale:
    # Grading reads the scale on every grade; the same levels give the same object.
    return engine.custom_scale(
        lowest, highest, labels=labels, relevant_from=relevant_from, keys=keys
    )


def levels_found(grades: list[int], *, relevant_from: int = 1) -> dict[str, Any]:
    """A custom scale for the grades a file holds: from the lowest (or 0) to the highest
    level found, relevant from `relevant_from` (trec_eval's default relevance level 1)."""
    lowest = min([0, *grades])
    highest = max([relevant_from, *grades])
    return {"lowest": lowest, "highest": highest, "relevant_from": relevant_from}
