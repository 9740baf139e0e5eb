"""The evaluation page's keyword table: one page of keywords with their value of every
metric and their grading, searched, filtered and sorted as the query string asks."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, FilteredRelation, OuterRef, Q, QuerySet

from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, UnretrievedJudgement
from apps.scoring.models import KeywordMetric

from .metric_columns import Column

KEYWORDS_PER_PAGE = 50
PAGE_SIZES = (25, 50, 100, 250)
# Sorts besides one per metric column; "-" in front sorts the other way.
PLAIN_SORTS = {"position": "position", "keyword": "text"}
# What the table can be narrowed to.
KEYWORD_FILTERS = {
    "failed": "the search failed",
    "ungraded": "results still to grade",
}


@dataclass(frozen=True)
class KeywordRow:
    keyword: Keyword
    values: list[float | None]
    graded: int
    slots: int
    # judged documents that are not among its results (counted in the trec pool)
    unretrieved: int = 0
    columns: Sequence[Column] = ()

    @property
    def cells(self) -> list[tuple[Column, float | None]]:
        """Each metric's column with the keyword's value: a value links to how it was
        computed (the metric explainer)."""
        return list(zip(self.columns, self.values, strict=True))


@dataclass(frozen=True)
class KeywordTable:
    page: Page
    rows: list[KeywordRow]
    columns: list[Column]


@dataclass(frozen=True)
class Header:
    label: str
    key: str = ""
    sort: str = ""  # the sort its link asks for; empty when it cannot sort
    state: str = ""  # "ascending" or "descending" when the table is sorted by it


def table_headers(columns: Sequence[Column], sort: str) -> list[Header]:
    """The keyword table's headings; a click sorts by one, a second click reverses."""

    def sortable(label: str, key: str) -> Header:
        if sort == key:
            return Header(label, key, f"-{key}", "ascending")
        if sort == f"-{key}":
            return Header(label, key, key, "descending")
        return Header(label, key, key)

    return [
        sortable("#", "position"),
        sortable("Keyword", "keyword"),
        Header("Grades"),
        *(sortable(column.label, column.key) for column in columns),
    ]


def _sorted(keywords: QuerySet[Keyword], sort: str, columns: Sequence[Column]) -> QuerySet:
    name = sort.lstrip("-")
    descending = sort.startswith("-")
    if name in PLAIN_SORTS:
        field_name = PLAIN_SORTS[name]
        return keywords.order_by(f"-{field_name}" if descending else field_name, "position")
    column = next(column for column in columns if column.key == name)
    # A left join on the keyword's value of that metric: keywords never scored keep a
    # row (value NULL), and the database sorts 10,000 keywords in one pass.
    joined = keywords.annotate(
        sort_metric=FilteredRelation(
            "metric_values",
            condition=Q(metric_values__metric=column.metric, metric_values__k=column.k),
        )
    )
    ordered = F("sort_metric__value")
    # Keywords without a value (not graded yet, or undefined) come last either way.
    by_value = ordered.desc(nulls_last=True) if descending else ordered.asc(nulls_last=True)
    return joined.order_by(by_value, "position")


def keyword_table(
    evaluation: Evaluation,
    *,
    columns: Sequence[Column],
    search: str = "",
    sort: str = "position",
    only: str = "",
    page_number: Any = 1,
    per_page: int = KEYWORDS_PER_PAGE,
) -> KeywordTable:
    """One page of keywords with their value of every (metric, k) and their grading.

    Five queries whatever the page size: the count, the page, its values, its slots and
    its judged unretrieved documents.
    `sort` and `only` are checked by the caller (forms.KeywordTableForm).
    """
    keywords = evaluation.keywords.all()
    if search:
        keywords = keywords.filter(text__icontains=search)
    if only == "failed":
        keywords = keywords.filter(failed=True)
    elif only == "ungraded":
        keywords = keywords.filter(
            Exists(FeedbackSlot.objects.filter(keyword_id=OuterRef("pk"), grade__isnull=True))
        )
    page = Paginator(_sorted(keywords, sort, columns), per_page).get_page(page_number)
    page_keywords = list(page.object_list)
    ids = [keyword.id for keyword in page_keywords]
    values = {
        (keyword_id, metric, k): value
        for keyword_id, metric, k, value in KeywordMetric.objects.filter(
            keyword_id__in=ids
        ).values_list("keyword_id", "metric", "k", "value")
    }
    slot_counts = dict(
        FeedbackSlot.objects.filter(keyword_id__in=ids)
        .values_list("keyword_id")
        .annotate(count=Count("id"))
        .order_by()
        .values_list("keyword_id", "count")
    )
    unretrieved = dict(
        UnretrievedJudgement.objects.filter(keyword_id__in=ids)
        .values_list("keyword_id")
        .annotate(count=Count("id"))
        .order_by()
        .values_list("keyword_id", "count")
    )
    rows = [
        KeywordRow(
            keyword,
            [values.get((keyword.id, column.metric, column.k)) for column in columns],
            keyword.graded_slots,
            slot_counts.get(keyword.id, 0),
            unretrieved.get(keyword.id, 0),
            columns,
        )
        for keyword in page_keywords
    ]
    return KeywordTable(page, rows, list(columns))
