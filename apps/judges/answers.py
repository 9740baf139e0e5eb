"""Reading an AI judge's answer: a grade and a reason per result, or why there is none.

Pure Python (no Django). The answer is read tolerantly, as models answer: JSON alone, in a
```json fence, after a sentence of preamble, as a bare list, with grades written "2" or
2.0. It is bounded before it is used: at most MAX_ANSWER_CHARS characters and
bounded_json's nesting depth. Whatever cannot be used is a failure with its reason,
result by result, so nothing the judge was asked vanishes:

- no JSON at all (a refusal, prose, an empty answer): every result fails with an
  excerpt of what came back;
- a result the answer leaves out, or judges twice with different grades;
- a grade that is not one of the scale's;
- an id the call did not send is ignored (and counted in `unknown_ids`).

A confidence (0 to 1) beside a grade is kept when it is one; anything else there is
dropped without failing the grade.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apps import engine
from apps.core import bounded_json

from .prompting import REASON_MAX_CHARS

MAX_ANSWER_CHARS = 200_000
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_EXCERPT = 120


@dataclass(frozen=True)
class Judged:
    grade: int
    reason: str
    # How sure the model says it is, 0 to 1; None when it did not say (or said
    # something else: a confidence is advice, never a reason to fail a grade).
    confidence: float | None = None
    # Of a grade combined from several (combining.py): the share of them that gave it,
    # and each one's grade ({"by", "grade"} and, a panel member's, its "judge" id).
    agreement: float | None = None
    votes: tuple[dict[str, object], ...] = ()


@dataclass
class ReadAnswer:
    """Per result id of the call: its judgement, or why it has none."""

    judged: dict[str, Judged] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    unknown_ids: int = 0


def read_answer(text: str, ids: list[str], scale: engine.Scale) -> ReadAnswer:
    """The judgements of the results `ids` in the model's answer `text`."""
    answer = ReadAnswer()
    entries, problem = _entries(text)
    if problem is not None:
        answer.failed = dict.fromkeys(ids, problem)
        return answer
    wanted = set(ids)
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        result_id = str(entry.get("id", "")).strip()
        if result_id not in wanted:
            answer.unknown_ids += 1
            continue
        grade = _whole(entry.get("grade"))
        reason = str(entry.get("reason") or "").strip()[:REASON_MAX_CHARS]
        if grade is None or not scale.is_grade(grade):
            shown = entry.get("grade")
            answer.failed.setdefault(
                result_id,
                f"grade {shown!r} is not a {scale.name} grade {scale.describe_grades()}",
            )
            continue
        earlier = answer.judged.get(result_id)
        if earlier is not None and earlier.grade != grade:
            del answer.judged[result_id]
            answer.failed[result_id] = "the answer judged this result twice, differently"
            continue
        if result_id not in answer.failed:
            answer.judged[result_id] = Judged(grade, reason, _confidence(entry.get("confidence")))
    for result_id in ids:
        if result_id not in answer.judged and result_id not in answer.failed:
            answer.failed[result_id] = "the answer did not judge this result"
    return answer


def _entries(text: str) -> tuple[list[Any], str | None]:
    """The answer's list of judgement entries, or why there is none."""
    if not text or not text.strip():
        return [], "the answer was empty"
    if len(text) > MAX_ANSWER_CHARS:
        return [], f"the answer is longer than {MAX_ANSWER_CHARS} characters"
    for candidate in _candidates(text):
        try:
            parsed = bounded_json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict):
            parsed = parsed.get("judgements", parsed.get("results"))
        if isinstance(parsed, list):
            return parsed, None
    excerpt = " ".join(text.split())[:_EXCERPT]
    return [], f"the answer held no judgements in JSON: {excerpt!r}"


def _candidates(text: str) -> list[str]:
    """Where the JSON may be: the whole text, a fenced block, or the span from the first
    opening bracket to the last closing one."""
    found = [text.strip()]
    found.extend(match.group(1).strip() for match in _FENCE.finditer(text))
    for opening, closing in (("{", "}"), ("[", "]")):
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            found.append(text[start : end + 1])
    return found


def _confidence(value: Any) -> float | None:
    """A confidence of 0 to 1, written 0.8 or "0.8"; None for anything else."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if 0.0 <= number <= 1.0 else None


def _whole(value: Any) -> int | None:
    """A grade written as 2, "2" or 2.0; None for anything else (True is not 1)."""
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None
