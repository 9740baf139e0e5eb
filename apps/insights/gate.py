"""The regression gate: may a candidate ranking ship, compared with a baseline? What a CI
job asks before a release, answered with an exit code.

- 0, pass: the candidate is better, or not significantly different, or worse by less
  than the smallest change that matters;
- 1, fail: on at least one metric the candidate is worse, significantly (the
  comparison's paired randomisation test, Holm-adjusted over the metrics compared, p <
  0.05) and by at least the smallest change that matters;
- 3, undecided: grading is not complete (an evaluation has ungraded results, or metrics
  still being computed), so the verdict could still change; or the two were judged by
  different sources (people against an AI judge, or other judges) and the caller did
  not say how to compare them (`sources`): a difference could be the judges'.

`sources`: "same" (the default: different sources are undecided), "people" (compare on
the common keywords no AI judge or click model graded on either side) or "any" (compare as they are;
the reason says the sources differ).

2 is left to the command line's own usage errors (argparse's code). The numbers are
Compare's (comparison/selectors.py); a count or a residual never fails a release.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation, Keyword

from .comparison.selectors import Comparison, MetricComparison, MetricKey, comparison_build

PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
EXIT_CODES = {PASS: 0, FAIL: 1, UNDECIDED: 3}
# How the gate compares evaluations judged by different sources (module doc).
SAME_SOURCES, PEOPLE_ONLY, ANY_SOURCES = "same", "people", "any"
SOURCE_RULES = (SAME_SOURCES, PEOPLE_ONLY, ANY_SOURCES)


@dataclass(frozen=True)
class GateMetric:
    label: str
    baseline: float | None
    candidate: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_adjusted: float | None
    regression: bool  # worse, significantly, by at least the smallest change that matters


@dataclass(frozen=True)
class GateVerdict:
    outcome: str
    baseline: str
    candidate: str
    min_change: float
    reason: str
    metrics: list[GateMetric] = field(default_factory=list)
    # Whose grades each side rests on ("People", "AI", "Mixed"), and whether they differ.
    baseline_judged_by: str = ""
    candidate_judged_by: str = ""
    sources_differ: bool = False

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def report(self) -> str:
        """The short report a CI log shows."""
        lines = [
            f"{self.outcome.upper()}: {self.candidate} against {self.baseline} "
            f"(smallest change that matters: {self.min_change:g})",
            self.reason,
            f"Judged by: {self.baseline} {self.baseline_judged_by or 'nobody yet'}, "
            f"{self.candidate} {self.candidate_judged_by or 'nobody yet'}",
        ]
        for metric in self.metrics:
            lines.append(
                f"  {metric.label}: {_number(metric.baseline)} -> {_number(metric.candidate)} "
                f"(difference {_signed(metric.difference)}, 95% CI "
                f"[{_signed(metric.ci_low)}, {_signed(metric.ci_high)}], p (Holm) "
                f"{_number(metric.p_adjusted, 3)})" + ("  REGRESSION" if metric.regression else "")
            )
        return "\n".join(lines)


def gate(
    *,
    team_id: int,
    baseline_id: int,
    candidate_id: int,
    metrics: Sequence[MetricKey] | None = None,
    min_change: float = 0.0,
    sources: str = SAME_SOURCES,
) -> GateVerdict:
    """The gate's verdict for two of the team's evaluations (another team's: Http404;
    a metric neither reports: InvalidInput naming `metric`; a `sources` rule not one of
    SOURCE_RULES: InvalidInput naming `sources`)."""
    if sources not in SOURCE_RULES:
        raise InvalidInput([f"sources: {sources[:40]!r} is not one of {', '.join(SOURCE_RULES)}"])
    comparison = comparison_build(
        team_id=team_id,
        evaluation_ids=[baseline_id, candidate_id],
        metrics=metrics,
        people_only=sources == PEOPLE_ONLY,
    )
    baseline, candidate = comparison.evaluations
    mixes = comparison.mixes
    told = partial(
        GateVerdict,
        baseline=baseline.name,
        candidate=candidate.name,
        min_change=min_change,
        baseline_judged_by=mixes[baseline.id].badge,
        candidate_judged_by=mixes[candidate.id].badge,
        sources_differ=comparison.sources_differ,
    )
    unfinished = [e for e in (baseline, candidate) if _still_grading(e)]
    if unfinished:
        shown = ", ".join(f"{e.name} is {e.progress * 100:.1f}% graded" for e in unfinished)
        return told(outcome=UNDECIDED, reason=f"Not decided yet: {shown}.")
    if comparison.sources_differ and sources == SAME_SOURCES:
        return told(outcome=UNDECIDED, reason=_different_sources(comparison, baseline, candidate))
    [pair] = comparison.pairs
    if not comparison.keywords:
        return told(outcome=UNDECIDED, reason="No keyword in common to compare.")
    found = [_gate_metric(metric, min_change) for metric in pair.metrics]
    regressions = [metric.label for metric in found if metric.regression]
    compared = f"{len(comparison.keywords)} common keywords" + (
        " no AI judge or click model graded" if comparison.people_only else ""
    )
    if comparison.sources_differ and sources == ANY_SOURCES:
        compared += " (judged by different sources, compared as they are)"
    if regressions:
        reason = (
            f"Worse on {', '.join(regressions)}, significantly and by at least {min_change:g}, "
            f"over {compared}."
        )
        return told(outcome=FAIL, reason=reason, metrics=found)
    reason = f"No significant regression over {compared}."
    return told(outcome=PASS, reason=reason, metrics=found)


def _different_sources(comparison: Comparison, baseline: Evaluation, candidate: Evaluation) -> str:
    mixes = comparison.mixes
    return (
        f"Not decided: judged by different sources ({baseline.name}: "
        f"{mixes[baseline.id].text} {candidate.name}: {mixes[candidate.id].text}) A "
        "difference could be the judges'. Ask sources=people to compare on the "
        f"{comparison.people_keywords} common keywords no AI judge or click model graded, "
        "or sources=any to compare as they are."
    )


def _still_grading(evaluation: Evaluation) -> bool:
    if evaluation.progress < 1.0:
        return True
    return Keyword.objects.filter(evaluation=evaluation, needs_scoring=True).exists()


def _gate_metric(metric: MetricComparison, min_change: float) -> GateMetric:
    result = metric.result
    difference = result.difference
    regression = bool(
        metric.ranks
        and result.significant
        and difference is not None
        and difference < 0
        and -difference >= min_change
    )
    return GateMetric(
        metric.label,
        result.baseline_mean,
        result.candidate_mean,
        difference,
        result.ci_low,
        result.ci_high,
        result.p_adjusted,
        regression,
    )


def _number(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"
