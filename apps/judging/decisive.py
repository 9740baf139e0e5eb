"""Judge what decides: a lead orders an evaluation's queue by what
decides its comparison with a rival evaluation on one metric, and reads when the verdict
can no longer change (the bounds and priorities are apps/engine/decisive.py's).

The queue walks FeedbackSlot.keyword_position (after "started snapshots first"), for
people (judging/sql.py) and AI judges (judges/sql.py) alike. Switching the option on
writes the rank of each open result in decision order into its open slots'
keyword_position; switching it off writes the keyword's position back into every slot.
Once is enough: a result's priority depends on its own grades alone, and a graded slot
leaves the queue. The pages and listings that order graded slots read the keyword's own
position instead (Keyword.position), so they keep keyword order either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from apps import engine
from apps.core.bulk import bulk_set
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id
from apps.engine.decisive import Result, Side, Standing, Verdict, priorities, side_of, standing
from apps.evaluations.metric_list import metric_text, parse_metric_list
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword

from .models import DecisiveOrder

MAX_MIN_CHANGE = 1000.0


@dataclass(frozen=True)
class Ranking:
    """One keyword's results in rank order, with the ids of each result's open slots."""

    keyword_position: int
    results: list[Result]
    open_slots: list[list[int]]


def decisive_order_set(
    *, evaluation: Evaluation, rival_id: Any, metric: str, min_change: Any = 0.0, lead: Any
) -> DecisiveOrder:
    """Order `evaluation`'s queue by what decides its comparison with `rival_id` on
    `metric` ("dcg@10"). InvalidInput naming the field for a rival that is not another
    evaluation of the team, a metric that is not one additive metric@k under both
    evaluations' profiles, or a smallest change that is not a number from 0 to 1000."""
    rival = _rival(evaluation, rival_id)
    metric_name, k = _metric(metric)
    change = _min_change(min_change)
    for side in (evaluation, rival):
        _side(side, metric_name, k)
    with transaction.atomic():
        option, _ = DecisiveOrder.objects.update_or_create(
            evaluation=evaluation,
            defaults={
                "rival": rival,
                "metric": metric_name,
                "k": k,
                "min_change": change,
                "set_by": lead,
                "set_at": timezone.now(),
            },
        )
        _write_decision_order(evaluation, option)
    return option


def decisive_order_clear(*, evaluation: Evaluation) -> None:
    """Back to keyword order: every slot's keyword_position is its keyword's again."""
    with transaction.atomic():
        DecisiveOrder.objects.filter(evaluation=evaluation).delete()
        FeedbackSlot.objects.filter(evaluation=evaluation).update(
            keyword_position=Subquery(
                Keyword.objects.filter(id=OuterRef("keyword_id")).values("position")[:1]
            )
        )


def decisive_order_refresh(*, evaluation: Evaluation) -> None:
    """Write the decision order again, if the option is on: when an evaluation opens,
    keywords added while it was pending take their place and reuse's grades leave."""
    option = DecisiveOrder.objects.filter(evaluation=evaluation).select_related("rival").first()
    if option is not None:
        _write_decision_order(evaluation, option)


@dataclass(frozen=True)
class DecisiveStatus:
    """The option and where the comparison stands, as the pages and the API show it."""

    evaluation: Evaluation
    option: DecisiveOrder
    label: str
    standing: Standing
    remaining_grades: int  # open slots on the common keywords, both evaluations

    @property
    def metric_text(self) -> str:
        """The metric as the option's form takes it: "dcg@10", "rbp_80" for the whole list."""
        return metric_text(self.option.metric, self.option.k)

    @property
    def sentence(self) -> str:
        now = self.standing
        if now.verdict is None:
            return (
                f"Still open: {now.open_results} results could change the verdict on "
                f"{self.label} (the mean difference is between {now.low:.4g} and "
                f"{now.high:.4g})."
            )
        whatever = f"whatever the {self.remaining_grades} remaining grades are; judging can stop"
        if now.verdict == Verdict.NO_DIFFERENCE:
            return (
                f"The verdict can no longer change: no difference that matters on "
                f"{self.label} (within ±{self.option.min_change:g}), {whatever}."
            )
        ahead = self.evaluation if now.verdict == Verdict.THIS_AHEAD else self.option.rival
        return (
            f"The verdict can no longer change: {ahead.name} is ahead on {self.label}, {whatever}."
        )


def decisive_status(*, evaluation: Evaluation) -> DecisiveStatus | None:
    """Where the comparison the queue is ordered by stands; None while the option is off.
    The option is read through `evaluation.decisive_order`: a page that selects it with
    the evaluation (select_related("decisive_order__rival")) pays no query for it."""
    try:
        option = evaluation.decisive_order
    except DecisiveOrder.DoesNotExist:
        return None
    ours, theirs = _rankings(evaluation), _rankings(option.rival)
    common = [text for text in ours if text in theirs]
    now = standing(
        [(ours[text].results, theirs[text].results) for text in common],
        this=_side(evaluation, option.metric, option.k),
        rival=_side(option.rival, option.metric, option.k),
        min_change=option.min_change,
    )
    remaining = sum(
        len(slots) for text in common for side in (ours, theirs) for slots in side[text].open_slots
    )
    label = engine.metric_label(option.metric, option.k, many_keywords=True)
    return DecisiveStatus(
        evaluation=evaluation, option=option, label=label, standing=now, remaining_grades=remaining
    )


def rival_choices(*, evaluation: Evaluation) -> list[tuple[int, str]]:
    """(id, name) of the team's other evaluations, newest first: the rivals to choose."""
    others = Evaluation.objects.filter(team_id=evaluation.team_id).exclude(id=evaluation.id)
    return list(others.order_by("-created_at", "-id").values_list("id", "name")[:500])


def _write_decision_order(evaluation: Evaluation, option: DecisiveOrder) -> None:
    """Number the open results from 1 in decision order (priority, highest first; ties in
    keyword order) and write each number into its open slots' keyword_position. Results
    that cannot change the verdict, and keywords the rival does not have, follow in
    keyword order."""
    ours, theirs = _rankings(evaluation), _rankings(option.rival)
    common = [text for text in ours if text in theirs]
    widths = priorities(
        [(ours[text].results, theirs[text].results) for text in common],
        this=_side(evaluation, option.metric, option.k),
    )
    priority = {
        (text, rank): width
        for text, keyword_widths in zip(common, widths, strict=True)
        for rank, width in enumerate(keyword_widths)
    }
    places = [
        (-priority.get((text, rank), 0.0), ranking.keyword_position, rank, slots)
        for text, ranking in ours.items()
        for rank, slots in enumerate(ranking.open_slots)
        if slots
    ]
    places.sort(key=lambda place: place[:3])
    ids = [slot for *_, slots in places for slot in slots]
    numbers = [number for number, (*_, slots) in enumerate(places, start=1) for _ in slots]
    bulk_set(FeedbackSlot, ids, {"keyword_position": numbers})


def _rankings(evaluation: Evaluation) -> dict[str, Ranking]:
    """Keyword text -> its results in rank order (keywords without results left out: the
    comparison leaves out a keyword with no value). A grade or decision off the scale (a
    pending evaluation's scale changed after it) counts as not given, as scoring leaves
    it out."""
    on_scale = evaluation.grading_scale.is_grade
    rows = (
        FeedbackSlot.objects.filter(evaluation_id=evaluation.id)
        .order_by("keyword__position", "snapshot__position", "index")
        # The decision through the snapshot's reverse one-to-one, a LEFT JOIN.
        .values_list(
            "keyword__text",
            "keyword__position",
            "snapshot_id",
            "id",
            "grade",
            "snapshot__decision__grade",
        )
    )
    rankings: dict[str, Ranking] = {}
    for (text, position), keyword_rows in groupby(rows, key=lambda row: (row[0], row[1])):
        results, open_slots = [], []
        for _, snapshot_rows in groupby(keyword_rows, key=lambda row: row[2]):
            slots = list(snapshot_rows)
            grades = tuple(row[4] if on_scale(row[4]) else None for row in slots)
            decision = slots[0][5] if on_scale(slots[0][5]) else None
            results.append(Result(grades, decision=decision))
            open_slots.append([row[3] for row in slots if row[4] is None])
        rankings[text] = Ranking(position, results, open_slots)
    return rankings


def _side(evaluation: Evaluation, metric: str, k: int) -> Side:
    try:
        return side_of(
            metric=metric,
            k=k,
            scale=evaluation.grading_scale,
            profile=evaluation.profile,
            rules=evaluation.transformers or None,
        )
    except engine.EngineError as error:
        raise InvalidInput([f"metric: {error} (in {evaluation.name})"], field="metric") from None


def _rival(evaluation: Evaluation, rival_id: Any) -> Evaluation:
    text = str(rival_id).strip()
    rival_number = parse_id(text)
    rival = None
    if rival_number is not None:
        rival = Evaluation.objects.filter(team_id=evaluation.team_id, id=rival_number).first()
    if rival is None:
        raise InvalidInput(
            [f"rival: {text[:40]!r} is not an evaluation of this team"], field="rival"
        )
    if rival.id == evaluation.id:
        raise InvalidInput(["rival: choose another evaluation than this one"], field="rival")
    return rival


def _metric(text: Any) -> tuple[str, int]:
    try:
        metrics = parse_metric_list(str(text))
    except ValueError as error:
        raise InvalidInput([f"metric: {error}"], field="metric") from None
    if len(metrics) != 1 or metrics[0][0] not in engine.METRICS:
        problem = f"metric: name one metric@k, e.g. dcg@10, not {str(text)[:40]!r}"
        raise InvalidInput([problem], field="metric")
    if metrics[0][1] > engine.MAX_CUTOFF:
        problem = f"metric: k is at most {engine.MAX_CUTOFF}, not {metrics[0][1]}"
        raise InvalidInput([problem], field="metric")
    return metrics[0]


def _min_change(value: Any) -> float:
    text = str(value).strip() or "0"
    try:
        change = float(text) if len(text) <= 40 else -1.0
    except ValueError:
        change = -1.0
    if not 0 <= change <= MAX_MIN_CHANGE:
        raise InvalidInput(
            [f"min_change: {text[:40]!r} is not a number from 0 to {MAX_MIN_CHANGE:g}"],
            field="min_change",
        )
    return change
