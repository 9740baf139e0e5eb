"""What the tries' pages show, read from a try's report: each query's two lists with how
every result moved, whose grades the numbers rest on, what filling the holes would ask
of an AI judge; and the one write the services leave to the pages, a try's notes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from apps.core.errors import InvalidInput
from apps.evaluations.models import Source
from apps.judges.money import in_dollars
from apps.judges.selectors import judge_rows
from apps.library.entries import BASIS_LABELS
from apps.library.models import JudgementList

from .drafting import Draft, settings_diff, unused_knobs
from .models import Try
from .report import MetricLine, QueryRow, Result, TryReport
from .running import model_settings
from .starting import MAX_NOTES
from .verdict import MIN_JUDGED, Verdict


def try_notes_set(*, attempt: Try, notes: str) -> None:
    """Change what the lead wrote about the try; nothing else of it changes."""
    if len(notes) > MAX_NOTES or "\x00" in notes:
        raise InvalidInput([f"notes: at most {MAX_NOTES:,} characters, without NUL"])
    Try.objects.filter(id=attempt.id).update(notes=notes)
    attempt.notes = notes


@dataclass(frozen=True)
class Shown:
    """A result as a list shows it: its rank, and where it stands in the other list."""

    rank: int
    result: Result
    move: str  # "up", "down", "same", "new", "dropped"; "" when there is no other list
    marker: str  # ↑3, ↓2, =, new, dropped, "now 4"
    title: str


@dataclass(frozen=True)
class QueryPanel:
    row: QueryRow
    tried: list[Shown]
    baseline: list[Shown]
    value: float | None  # the first metric's, the try's
    baseline_value: float | None
    difference: float | None


def _tried_shown(rank: int, result: Result, has_other: bool) -> Shown:
    if not has_other:
        return Shown(rank, result, "", "", "")
    if result.other_rank is None:
        return Shown(rank, result, "new", "new", "not in the baseline's list")
    places = result.other_rank - rank
    if places > 0:
        return Shown(rank, result, "up", f"↑{places}", f"up {places} (was {result.other_rank})")
    if places < 0:
        return Shown(
            rank, result, "down", f"↓{-places}", f"down {-places} (was {result.other_rank})"
        )
    return Shown(rank, result, "same", "=", "at the same rank")


def _baseline_shown(rank: int, result: Result) -> Shown:
    if result.other_rank is None:
        return Shown(rank, result, "dropped", "dropped", "not in the try's list")
    if result.other_rank == rank:
        return Shown(rank, result, "same", "=", "at the same rank in the try")
    move = "up" if result.other_rank < rank else "down"
    return Shown(
        rank, result, move, f"now {result.other_rank}", f"at {result.other_rank} in the try"
    )


def query_panels(report: TryReport) -> list[QueryPanel]:
    first = report.metrics[0] if report.metrics else None
    key = (first.metric, first.k) if first else None
    panels = []
    for row in report.queries:
        tried = row.tried.results if row.tried else []
        value = row.tried.values.get(key) if row.tried and key else None
        baseline_value = row.baseline.values.get(key) if row.baseline and key else None
        difference = None
        if value is not None and baseline_value is not None:
            difference = value - baseline_value
        panels.append(
            QueryPanel(
                row=row,
                tried=[
                    _tried_shown(rank, result, row.baseline is not None)
                    for rank, result in enumerate(tried, 1)
                ],
                baseline=[
                    _baseline_shown(rank, result)
                    for rank, result in enumerate(row.baseline.results if row.baseline else [], 1)
                ],
                value=value,
                baseline_value=baseline_value,
                difference=difference,
            )
        )
    return panels


@dataclass(frozen=True)
class Basis:
    words: str  # "people", "AI judges", "a lead's decision"
    count: int
    stale: bool


def judged_by(report: TryReport) -> list[Basis]:
    """Whose grades the try's graded top-k results rest on: a lead's decisions, people,
    AI judges, then those resting on stale judgements alone."""
    bases = []
    for stale in (False, True):
        for key, words in BASIS_LABELS.items():
            count = report.bases.get(f"{key} (stale)" if stale else key, 0)
            if count:
                bases.append(Basis(words, count, stale))
    return bases


def unjudged_results(report: TryReport) -> int:
    """The try's results the library has no grade for, at every rank it kept: what an
    AI judge filling the holes would be asked to grade, at most."""
    return sum(
        1 for row in report.queries if row.tried for r in row.tried.results if r.grade is None
    )


def cutoff(line: MetricLine, attempt: Try) -> int:
    """The k of judged@k: the metric's cutoff, or the try's depth for the whole list."""
    return line.k or attempt.depth


@dataclass(frozen=True)
class JudgeOffer:
    """An AI judge the lead may ask to fill the holes, with its budget as the judges'
    pages write it and what the holes would take of it."""

    judge_id: int
    name: str
    model_name: str
    budget: str  # "100 calls, 50,000 tokens, US$2.00 a run", or no budget
    prices: str
    calls: int  # the calls the holes take at its results per call
    below_rule: str  # why the team's rule keeps it out ("" when it does not)


def judge_offers(team_id: int, holes: int) -> list[JudgeOffer]:
    offers = []
    for row in judge_rows(team_id):
        judge = row.judge
        limits = []
        if judge.budget_calls is not None:
            limits.append(f"{judge.budget_calls:,} calls")
        if judge.budget_tokens is not None:
            limits.append(f"{judge.budget_tokens:,} tokens")
        if judge.budget_cost is not None:
            limits.append(in_dollars(judge.budget_cost, 2))
        offers.append(
            JudgeOffer(
                judge_id=judge.id,
                name=judge.name,
                model_name=judge.model_name,
                budget=f"{', '.join(limits)} a run" if limits else "no budget set",
                prices=f"{in_dollars(judge.price_input_per_million)} in, "
                f"{in_dollars(judge.price_output_per_million)} out per million tokens",
                calls=math.ceil(holes / max(judge.results_per_call, 1)),
                below_rule=row.below_rule,
            )
        )
    return offers


@dataclass(frozen=True)
class Changes:
    """What the try changes: against the model, and against the try it is measured
    against when that is a try of the same model."""

    from_model: list[str]
    against: str  # the baseline try's name; "" when the baseline is not such a try
    from_baseline: list[str]
    unused_knobs: list[str]


def changes(attempt: Try, baseline: Try | None) -> Changes:
    draft = attempt.draft()
    same_model = baseline is not None and baseline.search_model_id == attempt.search_model_id
    return Changes(
        from_model=settings_diff(Draft(), draft),
        against=str(baseline) if same_model and baseline else "",
        from_baseline=settings_diff(baseline.draft(), draft) if same_model and baseline else [],
        unused_knobs=unused_knobs(model_settings(attempt), draft),
    )


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _value(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def verdict_sentence(report: TryReport) -> str:
    """The verdict in words: what the first metric did against the baseline, and why
    nothing is read from the numbers when too little is judged."""
    baseline = report.baseline_label or "the baseline"
    if not report.metrics or report.verdict == Verdict.NO_BASELINE:
        return (
            "There is nothing to compare this try with: the model had no evaluation and "
            "no earlier try when it was made. Compare it with another try below."
        )
    line = report.metrics[0]
    k = cutoff(line, report.attempt)
    paired = line.paired
    p = _value(paired.p_adjusted) if paired else "–"
    if report.verdict == Verdict.NOT_ENOUGH_JUDGED:
        return (
            f"Not enough judged to tell: the library grades {_share(line.judged_tried)} of "
            f"the try's top {k} and {_share(line.judged_baseline)} of {baseline}'s. Below "
            f"{MIN_JUDGED:.0%} on either side the numbers are not read, as a result nobody "
            "graded counts as not relevant. Grade the unjudged results (an AI judge or "
            "people, below) and the verdict follows at once."
        )
    if report.verdict == Verdict.NO_CHANGE:
        return f"Every query scores the same {line.label} as in {baseline}."
    moved = (
        f"{line.label} {_value(line.tried_mean)} against {_value(line.baseline_mean)} in {baseline}"
    )
    if report.verdict == Verdict.NOT_SIGNIFICANT:
        return f"{moved}: some queries moved, but not significantly (p {p}, Holm-adjusted)."
    direction = "higher" if report.verdict == Verdict.BETTER else "lower"
    return f"{moved}: significantly {direction} (p {p}, Holm-adjusted)."


def has_click_judgements(attempt: Try) -> bool:
    """Whether the team's library holds click models' judgements on the try's scale,
    which the report counts only when the lead asks."""
    return JudgementList.objects.filter(
        team_id=attempt.team_id, scale=attempt.scale, source__kind=Source.CLICKS
    ).exists()
