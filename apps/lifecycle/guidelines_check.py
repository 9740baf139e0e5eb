"""Grades an evaluation's scoring guidelines name that its scale does not have.

Guidelines written for one scale ("3 · Perfect: exactly what was asked") and kept for an
evaluation on another (binary: 0 and 1) tell graders of grades they cannot give. The
lead's form warns of it; the grades are read from the text alone, so this module is
pure: no Django, the engine's scale only.

A grade is named as every page labels one, its number before a middle dot ("3 · Perfect",
"**3** · Perfect"), or after the word grade ("grade 4", "Grades: 2"). Other numbers
(counts, positions, "top 10") are not grades and are left alone.
"""

import re

from apps import engine

_LABELLED = re.compile(r"(?<![\w.\-])(-?\d+)\**\s*·")
_AFTER_WORD = re.compile(r"\bgrades?\b\**\s*[:=]?\s*\**(-?\d+)(?![\d.,]\d)", re.IGNORECASE)


def grades_named(text: str) -> list[int]:
    """Every grade the text names, each once, in order of value."""
    found = {int(match.group(1)) for match in _LABELLED.finditer(text or "")}
    found |= {int(match.group(1)) for match in _AFTER_WORD.finditer(text or "")}
    return sorted(found)


def grades_named_off_scale(text: str, scale: engine.Scale) -> list[int]:
    """The grades the text names that the scale does not have, in order of value."""
    return [grade for grade in grades_named(text) if grade not in scale.grades]


def off_scale_warning(text: str, scale: engine.Scale) -> str:
    """The lead's warning, as a sentence; "" when the text names no grade off the scale."""
    missing = grades_named_off_scale(text, scale)
    if not missing:
        return ""
    named = ", ".join(str(grade) for grade in missing)
    noun = "grade" if len(missing) == 1 else "grades"
    return (
        f"The scoring guidelines name {noun} {named}, which the {scale.name} scale "
        f"{scale.describe_grades()} does not have: graders read them beside buttons that "
        "cannot give them."
    )
