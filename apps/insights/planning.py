"""Planning an evaluation's size: how many keywords it needs to detect a change in a
metric, from how much that metric's per-keyword differences spread between the team's
earlier evaluations (apps/stats/power.py does the arithmetic).

The spread comes from pairs of the team's finished evaluations that follow each other
(finished one after the other, the most recent first) and report the metric: each pair's
differences over the keywords both have (matched by text), pooled about each pair's own
mean, so a real change between two rankings does not count as noise. Like is pooled with
like: only evaluations judged by the kind of source the plan is for (people's grades
alone, or AI judges' alone: source_mix.py), since a change of judge is not noise of the
ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.core.errors import InvalidInput
from apps.engine import MAX_CUTOFF, METRICS, WHOLE_LIST, metric_label
from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Evaluation, EvaluationMetric, Status
from apps.evaluations.source_mix import MixKind, evaluation_mixes
from apps.scoring.models import KeywordMetric
from apps.stats.power import Spread, keywords_needed, pooled_spread

# The earlier evaluations a plan reads (the most recently finished), which bounds its cost.
EVALUATIONS_READ = 12
# What a plan may be asked: a change above 0 and at most this (DCG and CG are not
# bounded by 1), a power between these.
MAX_CHANGE = 1000.0
POWERS = (0.5, 0.99)
DEFAULT_POWER = 0.8
ALPHA = 0.05
# Whose grades the evaluations a plan learns from rest on: people's or AI judges' alone.
JUDGED_BY = {MixKind.PEOPLE: "people", MixKind.AI: "AI judges"}
# The finished evaluations looked through for EVALUATIONS_READ of the kind asked.
EVALUATIONS_LOOKED_AT = 4 * EVALUATIONS_READ


@dataclass(frozen=True)
class Plan:
    metric: str
    k: int
    label: str
    change: float
    power: float
    spread: Spread | None  # None: no earlier pair of evaluations to learn it from
    keywords: int | None  # None without a spread, or past a million keywords
    pairs: list[tuple[str, str, int]]  # (earlier, later, common keywords) read
    judged_by: str = MixKind.PEOPLE  # the kind of source it learned from (JUDGED_BY)

    @property
    def judged_by_text(self) -> str:
        return JUDGED_BY[self.judged_by]


def plan_keywords(
    *, team_id: int, metric: str, change: str, power: str, judged_by: str = MixKind.PEOPLE
) -> Plan:
    """The plan for the text a lead typed (metric as in a metric list, "ndcg@10"), from
    evaluations judged by `judged_by` (JUDGED_BY); each problem names its field
    (InvalidInput)."""
    problems = []
    if judged_by not in JUDGED_BY:
        problems.append(f"judged_by: {judged_by[:40]!r} is not one of {', '.join(JUDGED_BY)}")
    chosen: tuple[str, int] | None = None
    try:
        [chosen] = parse_metric_list(metric)
    except ValueError as error:
        problems.append(f"metric: {error}")
    if chosen is not None and (
        chosen[0] not in METRICS or not (chosen[1] == WHOLE_LIST or 1 <= chosen[1] <= MAX_CUTOFF)
    ):
        problems.append(f"metric: {metric.strip()[:40]!r} is not a metric Relevo computes")
    wanted_change = _number(change, "change", problems, low=0.0, high=MAX_CHANGE)
    wanted_power = _number(power, "power", problems, low=POWERS[0], high=POWERS[1])
    if problems or chosen is None or wanted_change is None or wanted_power is None:
        raise InvalidInput(problems)
    return plan_for(
        team_id=team_id,
        metric=chosen[0],
        k=chosen[1],
        change=wanted_change,
        power=wanted_power,
        judged_by=judged_by,
    )


def plan_for(
    *,
    team_id: int,
    metric: str,
    k: int,
    change: float,
    power: float,
    judged_by: str = MixKind.PEOPLE,
) -> Plan:
    spread, pairs = team_spread(team_id=team_id, metric=metric, k=k, judged_by=judged_by)
    needed = None
    if spread is not None:
        needed = keywords_needed(change=change, sd=spread.sd, power=power, alpha=ALPHA)
    label = metric_label(metric, k)
    return Plan(metric, k, label, change, power, spread, needed, pairs, judged_by)


def team_spread(
    *, team_id: int, metric: str, k: int, judged_by: str = MixKind.PEOPLE
) -> tuple[Spread | None, list[tuple[str, str, int]]]:
    """The pooled spread of (metric, k)'s per-keyword differences between the team's
    consecutive finished evaluations judged by `judged_by` alone, and the pairs it read;
    three queries."""
    reporting = EvaluationMetric.objects.filter(metric=metric, k=k).values("evaluation_id")
    finished = list(
        Evaluation.objects.filter(
            team_id=team_id, status=Status.FINISHED, id__in=reporting, finished_at__isnull=False
        ).order_by("-finished_at", "-id")[:EVALUATIONS_LOOKED_AT]
    )
    mixes = evaluation_mixes(finished)
    evaluations = [
        (evaluation.id, evaluation.name)
        for evaluation in finished
        if mixes[evaluation.id].kind == judged_by
    ][:EVALUATIONS_READ]
    values: dict[int, dict[str, float]] = {evaluation_id: {} for evaluation_id, _ in evaluations}
    for evaluation_id, text, value in KeywordMetric.objects.filter(
        evaluation_id__in=list(values), metric=metric, k=k, value__isnull=False
    ).values_list("evaluation_id", "keyword__text", "value"):
        if value is not None:  # always (the filter); it tells the type checker so
            values[evaluation_id][text] = value
    groups, pairs = [], []
    # Most recent first: each evaluation against the one that finished before it.
    for (later, later_name), (earlier, earlier_name) in zip(
        evaluations, evaluations[1:], strict=False
    ):
        common = values[later].keys() & values[earlier].keys()
        if len(common) < 2:
            continue
        groups.append([values[later][text] - values[earlier][text] for text in sorted(common)])
        pairs.append((earlier_name, later_name, len(common)))
    return pooled_spread(groups), pairs


def _number(text: str, field: str, problems: list[str], *, low: float, high: float) -> float | None:
    try:
        value = float(text.strip()) if len(text) <= 40 else None
    except ValueError:
        value = None
    if value is None or not low < value <= high or value != value:
        problems.append(f"{field}: a number above {low:g} and at most {high:g}")
        return None
    return value
