"""One keyword of a comparison: the evaluations' result lists side by side.

Five queries whatever the lists' lengths: the evaluations, the metrics they report, the
keyword in each of them (matched by its exact text, as the comparison matches keywords),
its metric values, and its results. The baseline comes first; every other list says how
each document moved against the baseline's (``movement``).

How much is shown: each list's first `shown` results, where `shown` is the deepest
cutoff of the metrics compared (a metric over the whole list, or none compared, counts
as MAX_SHOWN), at most MAX_SHOWN. Movements are measured over the first READ_LIMIT
positions, so a document that fell below the part shown is "down", not "new".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.http import Http404

from apps import engine
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation, Keyword, Snapshot
from apps.scoring.models import KeywordMetric

from .movement import Dropped, Move, Ranked, dropped_from, moves_against
from .selectors import MetricKey, reported_metrics, team_evaluations_in_order
from .table import difference_tone

MAX_SHOWN = 100
READ_LIMIT = 1000  # the deepest cutoff a metric can have
KEYWORD_LIMIT = Keyword._meta.get_field("text").max_length or 500


def grade_text(scale: engine.Scale, value: float | None) -> str:
    """A result's stage-1 value as a lead reads it: a level as the scale names it
    ("2 · Good", Scale.label_of), a mean of several grades as the number (1.67), "–" when
    not graded (or a binary tie)."""
    if value is None:
        return "–"
    if value.is_integer():
        return scale.label_of(int(value))
    return f"{value:.2f}"


@dataclass(frozen=True)
class Result:
    position: int
    doc_id: str
    name: str
    grade: str
    move: Move | None  # None in the baseline's list


@dataclass(frozen=True)
class DroppedResult:
    """A result the baseline shows and this list does not, as the baseline has it."""

    dropped: Dropped
    name: str
    grade: str


@dataclass(frozen=True)
class ResultList:
    evaluation: Evaluation
    keyword_id: int
    failed: bool  # the keyword's search failed in this evaluation
    results: list[Result]  # the part shown
    count: int  # results read (up to READ_LIMIT)
    dropped: list[DroppedResult]  # empty for the baseline


@dataclass(frozen=True)
class MetricValue:
    value: float | None
    change: float | None  # against the baseline; None for the baseline itself

    @property
    def tone(self) -> str:
        return difference_tone(self.change)


@dataclass(frozen=True)
class MetricLine:
    label: str
    values: list[MetricValue]  # one per evaluation, baseline first


@dataclass(frozen=True)
class KeywordSideBySide:
    text: str
    evaluations: list[Evaluation]
    metrics: list[MetricLine]
    lists: list[ResultList]
    shown: int  # results shown of each list

    @property
    def cut_by_metrics(self) -> bool:
        """Whether the metrics' deepest cutoff, not MAX_SHOWN, chose how many are shown."""
        return self.shown < MAX_SHOWN


def parse_keyword_text(text: str, *, field: str) -> str:
    """The keyword's exact text as asked; InvalidInput names `field`."""
    if not text.strip():
        raise InvalidInput([f"{field}: choose a keyword"])
    if "\x00" in text:  # no keyword holds one, and PostgreSQL refuses it in a query
        raise InvalidInput([f"{field}: a keyword cannot contain a NUL character"])
    if len(text) > KEYWORD_LIMIT:
        raise InvalidInput([f"{field}: a keyword has at most {KEYWORD_LIMIT} characters"])
    return text


def keyword_side_by_side(
    *, team_id: int, evaluation_ids: Sequence[int], text: str
) -> KeywordSideBySide:
    """The keyword `text` in each evaluation (the first is the baseline); 404 when one of
    them is not the team's or does not have the keyword."""
    evaluations = team_evaluations_in_order(team_id=team_id, ids=evaluation_ids)
    ids = [e.id for e in evaluations]
    compared = _compared_metrics(ids, reported_metrics(ids))
    keywords = {
        evaluation_id: (keyword_id, failed)
        for keyword_id, evaluation_id, failed in Keyword.objects.filter(
            evaluation_id__in=ids, text=text
        ).values_list("id", "evaluation_id", "failed")
    }
    if len(keywords) != len(ids):
        raise Http404("No such keyword in every evaluation compared.")
    in_order = [keywords[evaluation_id] for evaluation_id in ids]
    keyword_ids = [keyword_id for keyword_id, _failed in in_order]
    shown = _depth_shown(compared)
    lists = _lists(evaluations, in_order, _results(keyword_ids), shown)
    return KeywordSideBySide(text, evaluations, _metric_lines(keyword_ids, compared), lists, shown)


def _compared_metrics(ids: list[int], reported: dict[int, list[MetricKey]]) -> list[MetricKey]:
    """What the comparison compares: the baseline's metrics another evaluation reports."""
    others = {key for evaluation_id in ids[1:] for key in reported[evaluation_id]}
    return [key for key in reported[ids[0]] if key in others]


def _depth_shown(compared: list[MetricKey]) -> int:
    deepest = [k if k != engine.WHOLE_LIST else MAX_SHOWN for _metric, k in compared]
    return min(max(deepest, default=MAX_SHOWN), MAX_SHOWN)


def _metric_lines(keyword_ids: list[int], compared: list[MetricKey]) -> list[MetricLine]:
    values = {
        (keyword_id, (metric, k)): value
        for keyword_id, metric, k, value in KeywordMetric.objects.filter(
            keyword_id__in=keyword_ids, value__isnull=False
        )
        .values_list("keyword_id", "metric", "k", "value")
        .order_by()
    }
    lines = []
    for key in compared:
        baseline = values.get((keyword_ids[0], key))
        line = [MetricValue(baseline, None)]
        for keyword_id in keyword_ids[1:]:
            value = values.get((keyword_id, key))
            change = None if value is None or baseline is None else value - baseline
            line.append(MetricValue(value, change))
        lines.append(MetricLine(engine.metric_label(*key), line))
    return lines


# A result as read: (position, doc id, name, stage-1 value).
Row = tuple[int, str, str, float | None]


def _results(keyword_ids: list[int]) -> dict[int, list[Row]]:
    """Keyword id -> its results in position order, down to READ_LIMIT."""
    rows: dict[int, list[Row]] = {keyword_id: [] for keyword_id in keyword_ids}
    for keyword_id, position, doc_id, name, value in (
        Snapshot.objects.filter(keyword_id__in=keyword_ids, position__lte=READ_LIMIT)
        .order_by("keyword_id", "position")
        .values_list("keyword_id", "position", "doc_id", "name", "value")
    ):
        rows[keyword_id].append((position, doc_id, name, value))
    return rows


def _ranked(rows: list[Row]) -> Ranked:
    return [(position, doc_id) for position, doc_id, _name, _value in rows]


def _lists(
    evaluations: list[Evaluation],
    keywords: list[tuple[int, bool]],
    rows: dict[int, list[Row]],
    shown: int,
) -> list[ResultList]:
    """The baseline's list, then each other one with its moves and what it dropped."""
    baseline_rows = rows[keywords[0][0]]
    baseline = _ranked(baseline_rows)
    # A dropped document is shown as the baseline has it (its first time, if repeated).
    baseline_scale = evaluations[0].grading_scale
    as_in_baseline = {}
    for _position, doc_id, name, value in reversed(baseline_rows):
        as_in_baseline[doc_id] = (name, grade_text(baseline_scale, value))
    lists = []
    for index, (evaluation, (keyword_id, failed)) in enumerate(
        zip(evaluations, keywords, strict=True)
    ):
        own = rows[keyword_id]
        moves: list[Move | None] = [None] * len(own)
        dropped = []
        if index > 0:
            moves = list(moves_against(baseline, _ranked(own)))
            dropped = [
                DroppedResult(gone, *as_in_baseline[gone.doc_id])
                for gone in dropped_from(baseline, _ranked(own), shown=shown)
            ]
        scale = evaluation.grading_scale
        results = [
            Result(position, doc_id, name, grade_text(scale, value), move)
            for (position, doc_id, name, value), move in zip(own[:shown], moves, strict=False)
        ]
        lists.append(ResultList(evaluation, keyword_id, failed, results, len(own), dropped))
    return lists
