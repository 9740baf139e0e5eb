"""Reads for the lead's pages: evaluation lists, metric cards, keyword tables."""

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Keyword
from apps.scoring import engine
from apps.scoring.models import KeywordMetric

KEYWORDS_PER_PAGE = 50


def team_evaluations(*, team_id: int, include_archived: bool = False) -> QuerySet[Evaluation]:
    evaluations = Evaluation.objects.filter(team_id=team_id)
    if not include_archived:
        evaluations = evaluations.filter(archived=False)
    return evaluations.order_by("-pinned", "-created_at", "-id")


@dataclass(frozen=True)
class MetricCard:
    metric: str
    k: int
    label: str
    value: float | None
    keywords_counted: int
    exact: bool


def metric_cards(evaluation: Evaluation) -> list[MetricCard]:
    many = evaluation.keywords.count() > 1
    return [
        MetricCard(
            metric=m.metric,
            k=m.k,
            label=engine.metric_label(m.metric, m.k, many_keywords=many),
            value=m.value,
            keywords_counted=m.value_count,
            exact=m.means_exact,
        )
        for m in EvaluationMetric.objects.filter(evaluation=evaluation).order_by("position", "id")
    ]


@dataclass(frozen=True)
class KeywordRow:
    keyword: Keyword
    values: list[float | None]


def keyword_table(
    evaluation: Evaluation, *, page_number: Any = 1, search: str = ""
) -> tuple[Page, list[KeywordRow], list[tuple[str, int]]]:
    """One page of keywords with their value of every (metric, k), in two queries."""
    columns = list(
        EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("metric", "k")
    )
    keywords = evaluation.keywords.order_by("position")
    if search:
        keywords = keywords.filter(text__icontains=search)
    page = Paginator(keywords, KEYWORDS_PER_PAGE).get_page(page_number)
    ids = [keyword.id for keyword in page.object_list]
    values = {
        (row.keyword_id, row.metric, row.k): row.value
        for row in KeywordMetric.objects.filter(keyword_id__in=ids).only(
            "keyword_id", "metric", "k", "value"
        )
    }
    rows = [
        KeywordRow(keyword, [values.get((keyword.id, metric, k)) for metric, k in columns])
        for keyword in page.object_list
    ]
    labels = [(engine.metric_label(metric, k), metric) for metric, k in columns]
    return page, rows, labels  # type: ignore[return-value]


@dataclass(frozen=True)
class SnapshotRow:
    position: int
    doc_id: str
    name: str
    value: float | None
    slots: list[FeedbackSlot]


def keyword_snapshots(keyword: Keyword) -> list[SnapshotRow]:
    """Every result of a keyword with every slot's grade, grader and reason."""
    slots = (
        FeedbackSlot.objects.filter(keyword=keyword)
        .select_related("snapshot", "grader")
        .order_by("snapshot__position", "index")
    )
    rows: dict[int, SnapshotRow] = {}
    for slot in slots:
        snapshot = slot.snapshot
        if snapshot.id not in rows:
            rows[snapshot.id] = SnapshotRow(
                snapshot.position, snapshot.doc_id, snapshot.name, snapshot.value, []
            )
        rows[snapshot.id].slots.append(slot)
    return list(rows.values())
