"""The lead's list of the team's evaluations: one page of them with their model, headline
metrics, progress and date, searched, filtered and sorted as the query string asks
(forms.EvaluationListForm checks it)."""

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Case, F, FilteredRelation, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber

from apps.accounts.models import Tag
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, EvaluationMetric, Status
from apps.evaluations.source_mix import NO_GRADES, SourceMix, evaluation_mixes

from .keyword_table import Header
from .metric_columns import Column, MetricKey, metric_column

EVALUATIONS_PER_PAGE = 25
PAGE_SIZES = (25, 50, 100)
# How many of an evaluation's metrics (its first ones, in its own order) the list shows.
HEADLINE_METRICS = 3
DEFAULT_SORT = "-created"
# Sorts besides one per metric: their heading, then how each way reads ("-" in front
# sorts the other way).
PLAIN_SORTS = {
    "name": ("Name", "A to Z", "Z to A"),
    "status": ("Status", "pending first", "finished first"),
    "model": ("Model", "A to Z", "Z to A"),
    "progress": ("Progress", "least graded first", "most graded first"),
    "created": ("Created", "oldest first", "newest first"),
}
# Statuses sort in the order an evaluation lives them, not alphabetically.
_LIFECYCLE = Case(
    When(status=Status.PENDING, then=Value(0)),
    When(status=Status.ACTIVE, then=Value(1)),
    default=Value(2),
)
_SORT_FIELDS: dict[str, Any] = {
    "name": F("name"),
    "status": _LIFECYCLE,
    "model": F("search_model__name"),
    "created": F("created_at"),
    "progress": F("progress"),
}


@dataclass(frozen=True)
class MetricValue:
    column: Column
    value: float | None


@dataclass(frozen=True)
class EvaluationRow:
    evaluation: Evaluation
    headline: list[MetricValue]
    # Its value of the metric the list is sorted by (None: it does not measure it).
    sorted_value: MetricValue | None = None
    # Whose grades its numbers rest on (People, AI, Mixed).
    judged_by: SourceMix = NO_GRADES


@dataclass(frozen=True)
class EvaluationList:
    page: Page
    rows: list[EvaluationRow]
    sort_column: Column | None  # the metric the list is sorted by, if any


@dataclass(frozen=True)
class Filters:
    """What the list is narrowed to; every field empty lists every evaluation."""

    search: str = ""  # any part of the name, ignoring case
    status: str = ""
    model_id: int | None = None
    tag_id: int | None = None
    include_archived: bool = False


def _filtered(team_id: int, filters: Filters) -> QuerySet[Evaluation]:
    evaluations = Evaluation.objects.filter(team_id=team_id)
    if not filters.include_archived:
        evaluations = evaluations.filter(archived=False)
    if filters.search:
        evaluations = evaluations.filter(name__icontains=filters.search)
    if filters.status:
        evaluations = evaluations.filter(status=filters.status)
    if filters.model_id is not None:
        evaluations = evaluations.filter(search_model_id=filters.model_id)
    if filters.tag_id is not None:
        evaluations = evaluations.filter(tags__id=filters.tag_id)
    return evaluations


def _sorted(
    evaluations: QuerySet[Evaluation], sort: str, column: Column | None
) -> QuerySet[Evaluation]:
    descending = sort.startswith("-")
    if column is not None:
        # A left join on the evaluation's value of that metric: evaluations that do not
        # measure it (or have no value yet) keep a row and come last either way.
        evaluations = evaluations.annotate(
            sort_metric=FilteredRelation(
                "metrics", condition=Q(metrics__metric=column.metric, metrics__k=column.k)
            )
        )
        by: Any = F("sort_metric__value")
    else:
        by = _SORT_FIELDS[sort.removeprefix("-")]
    ordered = by.desc(nulls_last=True) if descending else by.asc(nulls_last=True)
    return evaluations.order_by(ordered, "-created_at", "-id")


def _metric_values(
    evaluation_ids: list[int], sorted_by: MetricKey | None
) -> dict[int, dict[MetricKey, tuple[int, float | None]]]:
    """Each evaluation's first HEADLINE_METRICS metrics and its value of the metric the
    list is sorted by, as {evaluation: {(metric, k): (rank, value)}}, in one query."""
    ranked = EvaluationMetric.objects.filter(evaluation_id__in=evaluation_ids).annotate(
        rank=Window(
            RowNumber(), partition_by=[F("evaluation_id")], order_by=[F("position"), F("id")]
        )
    )
    wanted = Q(rank__lte=HEADLINE_METRICS)
    if sorted_by is not None:
        wanted |= Q(metric=sorted_by[0], k=sorted_by[1])
    values: dict[int, dict[MetricKey, tuple[int, float | None]]] = {
        evaluation_id: {} for evaluation_id in evaluation_ids
    }
    for evaluation_id, metric, k, value, rank in ranked.filter(wanted).values_list(
        "evaluation_id", "metric", "k", "value", "rank"
    ):
        values[evaluation_id][(metric, k)] = (rank, value)
    return values


def evaluation_list(
    *,
    team_id: int,
    filters: Filters = Filters(),
    sort: str = DEFAULT_SORT,
    sort_column: Column | None = None,
    page_number: Any = 1,
    per_page: int = EVALUATIONS_PER_PAGE,
) -> EvaluationList:
    """One page of the team's evaluations with their model and headline metrics.

    Three queries whatever the page size: the count, the page (with its model) and the
    page's metric values; and one for the sources of those whose grades changed since
    they were last read (source_mix.py). `sort` is one of PLAIN_SORTS, or a metric's key when
    `sort_column` is that metric; both are checked by the caller."""
    evaluations = _sorted(_filtered(team_id, filters), sort, sort_column).select_related(
        "search_model"
    )
    page = Paginator(evaluations, per_page).get_page(page_number)
    page_evaluations = list(page.object_list)
    sorted_by = (sort_column.metric, sort_column.k) if sort_column else None
    values = _metric_values([e.id for e in page_evaluations], sorted_by)
    mixes = evaluation_mixes(page_evaluations)
    rows = []
    for evaluation in page_evaluations:
        measured = values[evaluation.id]
        headline = [
            MetricValue(metric_column(metric, k), value)
            for (metric, k), (rank, value) in sorted(measured.items(), key=lambda item: item[1][0])
            if rank <= HEADLINE_METRICS
        ]
        sorted_value = None
        if sorted_by in measured:
            sorted_value = MetricValue(metric_column(*sorted_by), measured[sorted_by][1])
        rows.append(EvaluationRow(evaluation, headline, sorted_value, mixes[evaluation.id]))
    return EvaluationList(page, rows, sort_column)


def _header(label: str, key: str, sort: str) -> Header:
    """A sortable heading: a click sorts by it, a second click the other way."""
    if sort == key:
        return Header(label, key, f"-{key}", "ascending")
    if sort == f"-{key}":
        return Header(label, key, key, "descending")
    return Header(label, key, key)


def list_headers(sort: str, sort_column: Column | None) -> dict[str, Header]:
    """The list's sortable headings by key, the metric it is sorted by as "metric"."""
    headers = {key: _header(label, key, sort) for key, (label, _, _) in PLAIN_SORTS.items()}
    if sort_column is not None:
        headers["metric"] = _header(sort_column.label, sort_column.key, sort)
    return headers


def sort_options(metrics: list[Column]) -> list[tuple[str, str]]:
    """(sort, label) of every way the list sorts, each descending first."""
    options = []
    for key, (label, ascending, descending) in PLAIN_SORTS.items():
        options += [(f"-{key}", f"{label}, {descending}"), (key, f"{label}, {ascending}")]
    for column in metrics:
        options += [
            (f"-{column.key}", f"{column.label}, highest first"),
            (column.key, f"{column.label}, lowest first"),
        ]
    return options


@dataclass(frozen=True)
class ListChoices:
    """What the list can be narrowed to and sorted by."""

    models: list[SearchModel]
    tags: list[Tag]
    metrics: list[Column]  # every metric the team's evaluations measure


def list_choices(*, team_id: int) -> ListChoices:
    """The team's search models, tags and measured metrics, in three queries."""
    measured = (
        EvaluationMetric.objects.filter(evaluation__team_id=team_id)
        .values_list("metric", "k")
        .order_by("metric", "k")
        .distinct()
    )
    return ListChoices(
        models=list(SearchModel.objects.filter(team_id=team_id).order_by("name", "id")),
        tags=list(Tag.objects.filter(team_id=team_id).order_by("name", "id")),
        metrics=[metric_column(metric, k) for metric, k in measured],
    )
