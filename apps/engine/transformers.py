"""Transformer rules: mapping raw grades from one scale to another (metrics.md section 2).

A metric is defined on one scale. For an evaluation on another scale every raw grade is
mapped first and only then aggregated, so that e.g. graded slots [1, 0, 2] become binary
[1, 0, 1] and vote 1 (mapping the stage-1 mean 1.0 afterwards could give another answer).

Rules are keyed by destination scale, then by source grade. They arrive from JSON, so
source grades may be strings ("2") as well as ints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import EngineError
from .scales import SCALES, Scale, get_scale

# A grade written as a JSON key: ASCII digits only ("²" is a digit to str.isdigit, not to
# int), within a grade's column; the engine is pure, so apps/core/typed.py's rule is
# spelled here.
_GRADE_KEY = re.compile(r"\s*-?[0-9]{1,5}\s*")

# Destination scale -> source grade (int, or str from JSON) -> destination grade. The
# inner key type is Any because Mapping is invariant in its keys: a dict[int, int] and a
# dict[str, int] must both be accepted.
Rules = Mapping[str, Mapping[Any, int]]

DEFAULT_RULES: dict[tuple[str, str], dict[int, int]] = {
    ("binary", "graded"): {0: 0, 1: 3},
    ("binary", "detail"): {0: 1, 1: 10},
    ("graded", "binary"): {0: 0, 1: 1, 2: 1, 3: 1},
    ("graded", "detail"): {0: 1, 1: 4, 2: 7, 3: 10},
    ("detail", "binary"): {1: 0, **{grade: 1 for grade in range(2, 11)}},
    ("detail", "graded"): {
        1: 0,
        **{grade: 1 for grade in range(2, 5)},
        **{grade: 2 for grade in range(5, 8)},
        **{grade: 3 for grade in range(8, 11)},
    },
}


def default_rules(source: str | Scale, target: str | Scale) -> dict[int, int]:
    """The default mapping from ``source`` grades to ``target`` grades (a fresh dict).

    Identity when both are the same scale: grades on the native scale are used as given.
    A custom scale maps to binary by its relevance threshold (trec_eval's relevance
    level); its other metrics use its own levels (engine.metrics.metric_scale).
    """
    source_scale, target_scale = get_scale(source), get_scale(target)
    if source_scale == target_scale:
        return {grade: grade for grade in source_scale.grades}
    if source_scale.custom:
        if target_scale.name != "binary":
            raise EngineError(f"a custom scale maps to binary only, not to {target_scale.name}")
        threshold = source_scale.relevant_from
        return {grade: int(grade >= threshold) for grade in source_scale.grades}
    return dict(DEFAULT_RULES[(source_scale.name, target_scale.name)])


def targets_of(native: Scale) -> tuple[str, ...]:
    """The scales a native scale's grades are mapped to: every built-in one, or for a
    custom scale binary and itself."""
    return ("binary", native.name) if native.custom else tuple(SCALES)


def validate_rules(native_scale: str | Scale, rules: Rules | None) -> list[str]:
    """Every problem with ``rules`` for an evaluation on ``native_scale``, as
    ``"transformers.<scale>.<grade>: <problem>"`` lines; an empty list means valid.

    Rules may leave out a destination scale (its defaults apply) but a destination that is
    given must map every native grade to a grade of that destination. A rule for the
    native scale itself is tolerated only as the identity, so the output of
    ``resolve_rules`` can be validated again.
    """
    native = get_scale(native_scale)
    if rules is None:
        return []
    if not isinstance(rules, Mapping):
        return ["transformers: must be an object keyed by destination scale"]

    problems: list[str] = []
    for target_name, mapping in rules.items():
        location = f"transformers.{target_name}"
        target = SCALES.get(target_name) if isinstance(target_name, str) else None
        if target_name == native.name:
            target = native
        if target is None:
            problems.append(f"{location}: unknown scale")
        elif native.custom and target.name not in targets_of(native):
            problems.append(
                f"{location}: a custom scale's graded and detail metrics take its levels as "
                "gains; only binary rules apply"
            )
        elif not isinstance(mapping, Mapping):
            problems.append(
                f"{location}: must map each {native.name} grade to a {target.name} grade"
            )
        else:
            problems.extend(_mapping_problems(location, native, target, mapping))
    return problems


def resolve_rules(native_scale: str | Scale, rules: Rules | None) -> dict[str, dict[int, int]]:
    """Complete rules for every scale, keyed by destination scale name: the given rules
    where present, the defaults elsewhere, the identity for the native scale itself.

    Raises EngineError listing every problem when ``rules`` are invalid.
    """
    problems = validate_rules(native_scale, rules)
    if problems:
        raise EngineError("invalid transformer rules: " + "; ".join(problems))
    native = get_scale(native_scale)
    resolved = {
        target: default_rules(native, native if target == native.name else target)
        for target in targets_of(native)
    }
    for target, mapping in (rules or {}).items():
        if target != native.name:
            resolved[target] = {_source_grade(key): value for key, value in mapping.items()}
    return resolved


def _mapping_problems(
    location: str, native: Scale, target: Scale, mapping: Mapping[str | int, int]
) -> list[str]:
    problems: list[str] = []
    key_problems: list[str] = []  # reported after the grades, in the order given
    targets_by_source: dict[int, int] = {}
    for key, value in mapping.items():
        source = _parse_grade_key(key)
        if source is None or not native.is_grade(source):
            key_problems.append(
                f"{location}.{key}: there is no {native.name} grade {key!s} to map "
                f"({native.name} grades are {native.describe_grades()[1:-1]})"
            )
        elif source in targets_by_source:
            key_problems.append(f"{location}.{key}: given twice")
        else:
            targets_by_source[source] = value

    for source in native.grades:
        item = f"{location}.{source}"
        if source not in targets_by_source:
            problems.append(f"{item}: missing")
            continue
        value = targets_by_source[source]
        if not target.is_grade(value):
            problems.append(
                f"{item}: {value!r} is not a {target.name} grade {target.describe_grades()}"
            )
        elif target is native and value != source:
            problems.append(
                f"{item}: {native.name} is the evaluation's own scale, "
                f"so {source} must stay {source}"
            )
    return problems + key_problems


def _source_grade(key: object) -> int:
    """The source grade of a key that validation has accepted."""
    grade = _parse_grade_key(key)
    assert grade is not None, key
    return grade


def _parse_grade_key(key: object) -> int | None:
    """A source grade from a JSON object key ("2") or an int key; None if it is neither."""
    if type(key) is int:
        return key
    if isinstance(key, str) and _GRADE_KEY.fullmatch(key):
        return int(key)
    return None
