"""The regression gate asked from a page: what a lead chose checked as the command and the
API check it (every problem naming its field), the verdict from apps/insights/gate.py, the
rule it applied in words, and the exact CI calls that ask the same (gate_commands.py).
A model run now goes through candidates.py, as `relevance_gate --model` does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.insights.comparison.selectors import parse_metric_filter
from apps.insights.gate import SAME_SOURCES, SOURCE_RULES, GateVerdict, gate

from .candidates import MIN_CHANGE_MAX, candidate_start
from .gate_commands import (
    GateQuestion,
    ModelQuestion,
    api_call,
    command_line,
    model_api_call,
    model_command_line,
)
from .models import ScheduledRun

# What each `sources` rule does, as the page offers it.
SOURCE_RULE_WORDS = {
    SAME_SOURCES: "Leave it undecided: a difference could be the judges'",
    "people": "Compare only the keywords no AI judge or click model graded",
    "any": "Compare them as they are",
}
assert set(SOURCE_RULE_WORDS) == set(SOURCE_RULES)

T = TypeVar("T")


@dataclass(frozen=True)
class GateAnswer:
    question: GateQuestion
    verdict: GateVerdict
    rule: str


def min_change_parse(value: Any, field: str = "min_change") -> float:
    """The smallest change that matters: a number from 0 to MIN_CHANGE_MAX."""
    text = str(value if value is not None else "").strip() or "0"
    try:
        number = float(text) if len(text) <= 40 else -1.0
    except ValueError:
        number = -1.0
    if not 0 <= number <= MIN_CHANGE_MAX:  # NaN fails this too
        raise InvalidInput([f"{field}: {text[:40]!r} is not a number from 0 to 1000"])
    return number


def gate_ask(
    *,
    team: Team,
    baseline: Any,
    candidate: Any,
    metric: str = "",
    min_change: Any = "0",
    sources: str = SAME_SOURCES,
) -> GateAnswer:
    """The gate's verdict for two of the team's evaluations, with its rule in words.
    Another team's evaluation: Http404 (from gate)."""
    problems: list[str] = []
    sources = sources or SAME_SOURCES
    baseline_id = _evaluation_id(baseline, "baseline", problems)
    candidate_id = _evaluation_id(candidate, "candidate", problems)
    if baseline_id is not None and baseline_id == candidate_id:
        problems.append("candidate: choose an evaluation other than the baseline")
    metrics = _checked(lambda: parse_metric_filter(metric, field="metric"), problems)
    change = _checked(lambda: min_change_parse(min_change), problems)
    if sources not in SOURCE_RULES:
        problems.append(f"sources: one of {', '.join(SOURCE_RULES)}")
    if problems:
        raise InvalidInput(problems)
    assert baseline_id is not None and candidate_id is not None and change is not None
    verdict = gate(
        team_id=team.id,
        baseline_id=baseline_id,
        candidate_id=candidate_id,
        metrics=metrics,
        min_change=change,
        sources=sources,
    )
    question = GateQuestion(
        team=team.name,
        baseline=baseline_id,
        candidate=candidate_id,
        metric=metric.strip(),
        min_change=change,
        sources=sources,
    )
    return GateAnswer(question=question, verdict=verdict, rule=rule_in_words(change, sources))


def _evaluation_id(value: Any, field: str, problems: list[str]) -> int | None:
    text = str(value if value is not None else "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:  # within the ids' 64 bits
        problems.append(f"{field}: choose one of the team's evaluations")
        return None
    return int(text)


def _checked(parse: Callable[[], T], problems: list[str]) -> T | None:
    """What `parse` answers, or None with its problems added to `problems`."""
    try:
        return parse()
    except InvalidInput as error:
        problems += error.problems
        return None


def rule_in_words(min_change: float, sources: str) -> str:
    """The gate's rule as a sentence: when it fails, and how it treats different judges."""
    by_how_much = f"by at least {min_change:g}" if min_change else "by any amount"
    judged = {
        SAME_SOURCES: "If people graded one and an AI judge the other, it is undecided.",
        "people": (
            "It compares only the common keywords no AI judge or click model graded on either side."
        ),
        "any": "It compares them as they are, whoever graded them.",
    }[sources]
    return (
        "It fails when the candidate is worse than the baseline on a metric, "
        f"significantly (Holm-adjusted p < 0.05) and {by_how_much}; it is undecided while "
        f"either has results left to grade. {judged}"
    )


def candidate_run_of(team: Team, run_id: Any) -> ScheduledRun | None:
    """A model run now for the gate (no schedule), of the team's, by id; else None."""
    text = str(run_id or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return None
    runs = ScheduledRun.objects.select_related(
        "evaluation__search_model", "attempt__search_model", "judge", "baseline__team"
    )
    return runs.filter(id=int(text), schedule=None, baseline__team=team).first()


def gate_run_start(
    *, team: Team, baseline: Any, model: Any, judge: Any = "", min_change: Any = "0"
) -> ScheduledRun:
    """A search model run now on the baseline's keywords (candidates.candidate_start):
    its try runs on a worker, then its results are graded, the grades still valid reused
    and the rest left to people and the judge."""
    problems: list[str] = []
    baseline_id = _evaluation_id(baseline, "baseline", problems)
    change = _checked(lambda: min_change_parse(min_change), problems)
    if problems:
        raise InvalidInput(problems)
    assert baseline_id is not None and change is not None
    return candidate_start(
        team=team, baseline=baseline_id, model=model, judge=judge or None, min_change=change
    )


@dataclass(frozen=True)
class CiCall:
    title: str
    text: str


def ci_calls(question: GateQuestion, api_url: str) -> list[CiCall]:
    """What a CI job runs to ask the gate this question."""
    return [
        CiCall("Where the job runs beside Relevo: the command", command_line(question)),
        CiCall(
            "From any CI job, with a team API token in RELEVO_TOKEN", api_call(question, api_url)
        ),
    ]


def model_ci_calls(run: ScheduledRun, api_url: str) -> list[CiCall]:
    """What a CI job runs to start this model run itself, against the same baseline."""
    model = run.attempt.search_model if run.attempt else None
    if model is None and run.evaluation is not None:  # a run made before runs were tries
        model = run.evaluation.search_model
    if model is None or run.baseline is None:
        return []
    question = ModelQuestion(
        team=run.baseline.team.name,
        baseline=run.baseline.id,
        model=model.name,
        judge=run.judge.name if run.judge else "",
        min_change=run.min_change,
    )
    return [
        CiCall(
            "The command: runs the model, waits for the grading, then gates",
            model_command_line(question),
        ),
        CiCall(
            "The API: answers the run's URL, to poll while exit_code is 3",
            model_api_call(question, api_url),
        ),
    ]
