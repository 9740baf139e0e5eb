"""Judge what decides: which unjudged results can still change a comparison's verdict,
and when none can (docs/comparison.md, "Judge what decides").

Two evaluations are compared on one metric by the mean, over their common keywords, of
this evaluation's value minus its rival's. The verdict is where that mean difference d
ends once every grade is known: this evaluation ahead (d > m), the rival ahead (d < -m),
or no difference that matters (|d| <= m), for the smallest change that matters m >= 0.

For an additive metric (a keyword's value is a sum over its ranks of a weight that
depends on the rank alone times a gain that depends on that result's stage-1 value
alone: P@k under trec, num_rel_ret, RBP, CG, DCG) each result's share of d lies in an
interval we can compute exactly: its known grades are fixed, each grade still to come
can be any grade of the scale, and stage 1 (a vote, or a mean) and every gain only grow
with a grade, so the lowest and highest grades give the interval's ends. Adding the
intervals bounds d: [low, high]. When that interval lies wholly inside one of the three
regions above, no remaining grade can change the verdict. The two evaluations' unknown
grades are independent unknowns: nothing assumes their graders would agree.

Any other metric (AP, nDCG, ERR, RR ...) divides by or stops at something other results
decide; it is refused with EngineError, never given a "decided" that could be wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from .aggregate import binary_vote, mean_grade
from .conventions import TREC, WHOLE_LIST, check_cutoff
from .errors import EngineError
from .metrics import METRICS, MetricDef, get_metric, metric_scale
from .scales import Scale, get_scale
from .shares import Additive
from .transformers import Rules, resolve_rules

# metric -> how its keyword value splits into one share per result (its definition's,
# metrics.py). The formulas in formulas.py are these sums; test_decisive checks each one
# against score_keyword on random lists.
ADDITIVE: dict[str, Additive] = {
    metric.id: metric.additive for metric in METRICS.values() if metric.additive is not None
}


def additive_metrics() -> list[MetricDef]:
    """The metrics a comparison can be bounded on, in the registry's order."""
    return [get_metric(metric) for metric in ADDITIVE]


def check_additive(metric: str, profile: str) -> None:
    """EngineError naming ``metric`` unless its keyword value is a sum of per-result
    shares under ``profile``."""
    definition = get_metric(metric)
    supported = ", ".join(sorted(ADDITIVE))
    if metric not in ADDITIVE:
        raise EngineError(
            f"{definition.name} is not a sum of one share per result, so no bound on it is "
            f"exact; choose one of {supported}"
        )
    if ADDITIVE[metric].trec_only and profile != TREC:
        raise EngineError(
            f"{definition.name} under the {profile} profile divides by the results judged, "
            "so it is not a sum of one share per result; it is under the trec profile"
        )


@dataclass(frozen=True)
class Result:
    """One result of a ranking: its slots' grades on the evaluation's own scale (None:
    not given yet) and a lead's decision, which replaces them when there is one."""

    grades: tuple[int | None, ...]
    decision: int | None = None

    @property
    def open_slots(self) -> int:
        return 0 if self.decision is not None else sum(g is None for g in self.grades)


Ranking = Sequence[Result]


@dataclass(frozen=True)
class Side:
    """How one evaluation's grades make the metric (the two evaluations of a comparison
    may differ in scale, transformer rules and profile): build it with ``side_of``."""

    metric: str
    k: int
    # Each grade of the evaluation's scale -> the grade it counts as on the metric's scale.
    mapping: Mapping[int, int]
    # Stage 1 on the metric's scale: a majority vote (binary) or the mean of the grades.
    vote: bool

    def weight(self, rank: int, listed: int) -> float:
        """The weight of the result at ``rank`` (from 1) of a list of ``listed`` results."""
        if self.k != WHOLE_LIST and rank > self.k:
            return 0.0
        return ADDITIVE[self.metric].weight(rank, self.k, listed)

    def gain_range(self, result: Result) -> tuple[float, float]:
        """The lowest and highest gain ``result`` can end with, whatever grades are still
        to come. Stage 1 and the gain only grow with each grade, so filling every open slot
        with the lowest (highest) grade the metric's scale can receive gives the ends."""
        gain = ADDITIVE[self.metric].gain
        mapping = self.mapping
        aggregate = binary_vote if self.vote else mean_grade
        if result.decision is not None:
            value = gain(aggregate([mapping[result.decision]]))
            return value, value
        known = [mapping[grade] for grade in result.grades if grade is not None]
        open_slots = len(result.grades) - len(known)
        low = gain(aggregate(known + [min(mapping.values())] * open_slots))
        high = gain(aggregate(known + [max(mapping.values())] * open_slots))
        if not known:
            # A result nobody ever grades has no value, which adds gain(None) = 0: the
            # verdict then holds even if some results stay unjudged.
            low, high = min(low, gain(None)), max(high, gain(None))
        return low, high

    def value_range(self, ranking: Ranking) -> tuple[float, float]:
        """The lowest and highest value the keyword's metric can end with."""
        low = high = 0.0
        for rank, result in enumerate(ranking, start=1):
            weight = self.weight(rank, len(ranking))
            if weight:
                gain_low, gain_high = self.gain_range(result)
                low += weight * gain_low
                high += weight * gain_high
        return low, high

    def widths(self, ranking: Ranking) -> list[float]:
        """Per result, how far it can still move the keyword's value: weight x (highest -
        lowest gain); 0 for a result whose grades are all given, or below the cutoff."""
        widths = []
        for rank, result in enumerate(ranking, start=1):
            weight = self.weight(rank, len(ranking))
            low, high = self.gain_range(result) if weight and result.open_slots else (0, 0)
            widths.append(weight * (high - low))
        return widths


def side_of(
    *,
    metric: str,
    k: int,
    scale: str | Scale,
    profile: str,
    rules: Rules | None = None,
) -> Side:
    """The Side of an evaluation on ``scale`` with transformer ``rules`` and ``profile``;
    EngineError when the metric is not additive under that profile, or k is not a cutoff."""
    check_cutoff(k)
    check_additive(metric, profile)
    target = metric_scale(metric, get_scale(scale)).name
    return Side(metric, k, resolve_rules(scale, rules)[target], vote=target == "binary")


class Verdict(Enum):
    THIS_AHEAD = "this evaluation ahead"
    RIVAL_AHEAD = "rival ahead"
    NO_DIFFERENCE = "no difference that matters"


def verdict_of(difference: float, min_change: float) -> Verdict:
    """The verdict of a mean difference (this minus the rival) once every grade is known."""
    if difference > min_change:
        return Verdict.THIS_AHEAD
    if difference < -min_change:
        return Verdict.RIVAL_AHEAD
    return Verdict.NO_DIFFERENCE


@dataclass(frozen=True)
class Standing:
    """Where a comparison stands: the mean difference (this minus the rival) will end
    somewhere in [low, high]; ``verdict`` is set once every point of that interval has
    the same verdict, i.e. no remaining grade can change it."""

    low: float
    high: float
    keywords: int
    # Unjudged results, on either side, that can still move the difference.
    open_results: int
    verdict: Verdict | None


Keyword = tuple[Ranking, Ranking]  # (this evaluation's ranking, the rival's)


def standing(
    keywords: Sequence[Keyword], *, this: Side, rival: Side, min_change: float = 0.0
) -> Standing:
    """Bound the mean difference over ``keywords`` and say whether the verdict is decided."""
    if min_change < 0:
        raise EngineError("the smallest change that matters cannot be negative")
    low = high = 0.0
    open_results = 0
    for ours, theirs in keywords:
        our_low, our_high = this.value_range(ours)
        their_low, their_high = rival.value_range(theirs)
        low += our_low - their_high
        high += our_high - their_low
        open_results += sum(width > 0 for width in this.widths(ours))
        open_results += sum(width > 0 for width in rival.widths(theirs))
    count = len(keywords)
    if count:
        low, high = low / count, high / count
    decided = verdict_of(low, min_change) == verdict_of(high, min_change)
    # The three regions are intervals in order, so the ends agreeing means all agree.
    verdict = verdict_of(low, min_change) if count and decided else None
    return Standing(low, high, count, open_results, verdict)


def priorities(keywords: Sequence[Keyword], *, this: Side) -> list[list[float]]:
    """Per keyword, per result of this evaluation's ranking: how much judging it can
    narrow the interval of the mean difference (its width / the number of keywords).

    The verdict is decided once the interval [low, high] leaves the threshold's
    neighbourhood. Its width is the sum of the open results' widths, and judging a result
    takes its whole width away, whatever grade it gets (the interval shrinks to a part of
    itself). Before the grades are known, judging the widest results first is therefore
    the order that leaves the narrowest interval after any number of judgements: the
    greedy choice, and for additive metrics an exact one, since a result's width does
    not depend on any other result's grade. A result with width 0 cannot change the
    verdict and comes last.
    """
    count = len(keywords)
    return [[width / count for width in this.widths(ours)] for ours, _ in keywords]
