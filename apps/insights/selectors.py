"""Reads for the lead's pages: evaluation lists, metric cards, keyword tables, the
dashboard's pins. Every read here costs a fixed number of queries, whatever the number
of keywords, metrics or rows shown."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, FilteredRelation, OuterRef, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils.timezone import get_current_timezone, localtime

from apps import engine
from apps.accounts.models import Membership
from apps.evaluations.metric_list import metric_text
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    EvaluationMetricPoint,
    FeedbackSlot,
    Keyword,
    Status,
    UnretrievedJudgement,
)
from apps.scoring.models import KeywordMetric

from . import charts
from .reference import EvaluationKey, change, reference_for

MetricKey = tuple[str, int]


def team_evaluations(*, team_id: int, include_archived: bool = False) -> QuerySet[Evaluation]:
    evaluations = Evaluation.objects.filter(team_id=team_id)
    if not include_archived:
        evaluations = evaluations.filter(archived=False)
    return evaluations.order_by("-pinned", "-created_at", "-id")


def metric_key_text(metric: str, k: int) -> str:
    """How a (metric, k) is written in query strings and data attributes: ndcg@10, and
    ap for the whole list."""
    return metric_text(metric, k)


def keyword_counts(evaluation_ids: Sequence[int]) -> dict[int, int]:
    """How many keywords each evaluation has, in one query."""
    return dict(
        Keyword.objects.filter(evaluation_id__in=evaluation_ids)
        .values_list("evaluation_id")
        .annotate(count=Count("id"))
        .order_by()
        .values_list("evaluation_id", "count")
    )


# --- What a change is measured against ---------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """The evaluation a change is measured against, and its metric values."""

    evaluation_id: int
    name: str
    why: str  # "previous": the model's previous finished evaluation; "baseline": the team's
    values: dict[MetricKey, float | None]


def _key(evaluation: Any) -> EvaluationKey:
    return EvaluationKey(
        id=evaluation.id,
        search_model_id=evaluation.search_model_id,
        finished_at=evaluation.finished_at if evaluation.status == Status.FINISHED else None,
    )


def references_for(
    evaluations: Sequence[Evaluation], *, baseline_id: int | None
) -> dict[int, Reference | None]:
    """Each evaluation's reference (see reference.py), in at most two queries."""
    if not evaluations:
        return {}
    team_id = evaluations[0].team_id
    model_ids = {e.search_model_id for e in evaluations if e.search_model_id is not None}
    wanted = Q(status=Status.FINISHED, search_model_id__in=model_ids)
    if baseline_id is not None:
        wanted |= Q(id=baseline_id)
    candidates = (
        list(
            Evaluation.objects.filter(wanted, team_id=team_id).values_list(
                "id", "name", "status", "search_model_id", "finished_at"
            )
        )
        if model_ids or baseline_id is not None
        else []
    )
    names = {row[0]: row[1] for row in candidates}
    finished = [
        EvaluationKey(id=row[0], search_model_id=row[3], finished_at=row[4])
        for row in candidates
        if row[2] == Status.FINISHED
    ]
    # A baseline of another team (or deleted) is no reference.
    baseline = baseline_id if baseline_id in names else None
    chosen = {e.id: reference_for(_key(e), finished, baseline) for e in evaluations}
    values: dict[int, dict[MetricKey, float | None]] = defaultdict(dict)
    reference_ids = {reference_id for reference_id, _why in chosen.values() if reference_id}
    for evaluation_id, metric, k, value in EvaluationMetric.objects.filter(
        evaluation_id__in=reference_ids
    ).values_list("evaluation_id", "metric", "k", "value"):
        values[evaluation_id][(metric, k)] = value
    return {
        evaluation_id: None
        if reference_id is None
        else Reference(reference_id, names[reference_id], why, values[reference_id])
        for evaluation_id, (reference_id, why) in chosen.items()
    }


# --- Metric cards ------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryPoint:
    label: str  # the minute, in local time
    value: float | None
    progress: float


@dataclass(frozen=True)
class MetricCard:
    id: int
    metric: str
    k: int
    label: str
    value: float | None
    keywords_counted: int
    exact: bool
    pinned: bool
    reference_value: float | None = None
    change: float | None = None
    history: list[HistoryPoint] = field(default_factory=list)

    @property
    def key(self) -> str:
        return metric_key_text(self.metric, self.k)

    @property
    def chart_id(self) -> str:
        return f"history-{self.id}"

    def chart(self) -> dict[str, Any]:
        return charts.chart(
            "line",
            [point.label for point in self.history],
            [(self.label, [point.value for point in self.history])],
            compact=True,
        )


def _cards(
    metrics: Sequence[EvaluationMetric],
    *,
    many_keywords: bool,
    reference: Reference | None,
    histories: dict[int, list[HistoryPoint]] | None = None,
) -> list[MetricCard]:
    cards = []
    for m in metrics:
        reference_value = reference.values.get((m.metric, m.k)) if reference else None
        cards.append(
            MetricCard(
                id=m.id,
                metric=m.metric,
                k=m.k,
                label=engine.metric_label(m.metric, m.k, many_keywords=many_keywords),
                value=m.value,
                keywords_counted=m.value_count,
                exact=m.means_exact,
                pinned=m.pinned,
                reference_value=reference_value,
                change=change(m.value, reference_value),
                history=(histories or {}).get(m.id, []),
            )
        )
    return cards


def metric_histories(evaluation: Evaluation) -> dict[int, list[HistoryPoint]]:
    """Each metric's history points (thinned for a chart), oldest first, in one query."""
    rows: dict[int, list[tuple[Any, float | None, float]]] = defaultdict(list)
    for metric_id, minute, value, progress in (
        EvaluationMetricPoint.objects.filter(evaluation_metric__evaluation=evaluation)
        .order_by("evaluation_metric_id", "minute")
        .values_list("evaluation_metric_id", "minute", "value", "progress")
    ):
        rows[metric_id].append((minute, value, progress))
    # Thinned first: formatting the time of thousands of points is most of the cost.
    return {
        metric_id: [
            HistoryPoint(f"{localtime(minute):%Y-%m-%d %H:%M}", value, progress)
            for minute, value, progress in charts.thin(series)
        ]
        for metric_id, series in rows.items()
    }


@dataclass(frozen=True)
class MetricCards:
    cards: list[MetricCard]
    reference: Reference | None


def metric_cards(
    evaluation: Evaluation, *, baseline_id: int | None, with_history: bool = True
) -> MetricCards:
    """The evaluation's metrics with their change against its reference and history."""
    many = keyword_counts([evaluation.id]).get(evaluation.id, 0) > 1
    reference = references_for([evaluation], baseline_id=baseline_id)[evaluation.id]
    metrics = list(
        EvaluationMetric.objects.filter(evaluation=evaluation).order_by("position", "id")
    )
    histories = metric_histories(evaluation) if with_history else None
    return MetricCards(
        _cards(metrics, many_keywords=many, reference=reference, histories=histories), reference
    )


def metric_values(evaluation: Evaluation) -> list[tuple[int, float | None]]:
    """(id, value) of each of the evaluation's metrics, for the page's live update."""
    return list(
        EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("id", "value")
    )


def evaluation_metric_in_team(*, metric_id: int, evaluation_id: int, team_id: int) -> Any:
    return (
        EvaluationMetric.objects.select_related("evaluation")
        .filter(id=metric_id, evaluation_id=evaluation_id, evaluation__team_id=team_id)
        .first()
    )


# --- The dashboard -----------------------------------------------------------------------


@dataclass(frozen=True)
class PinnedEvaluation:
    evaluation: Evaluation
    metrics: list[MetricCard]
    reference: Reference | None


def dashboard_pins(*, team_id: int, baseline_id: int | None) -> list[PinnedEvaluation]:
    """The team's pinned evaluations, and those with a pinned metric, with those metrics.

    A metric pinned on an evaluation that is not itself pinned still shows: the lead
    pinned it to see it here. Archived evaluations are left out. Five queries at most.
    """
    evaluations = list(
        Evaluation.objects.filter(team_id=team_id, archived=False)
        .filter(
            Q(pinned=True)
            | Exists(EvaluationMetric.objects.filter(evaluation_id=OuterRef("pk"), pinned=True))
        )
        .order_by("-pinned", "-created_at", "-id")
    )
    if not evaluations:
        return []
    ids = [e.id for e in evaluations]
    counts = keyword_counts(ids)
    references = references_for(evaluations, baseline_id=baseline_id)
    pinned: dict[int, list[EvaluationMetric]] = defaultdict(list)
    for metric in EvaluationMetric.objects.filter(evaluation_id__in=ids, pinned=True).order_by(
        "position", "id"
    ):
        pinned[metric.evaluation_id].append(metric)
    return [
        PinnedEvaluation(
            e,
            _cards(pinned[e.id], many_keywords=counts.get(e.id, 0) > 1, reference=references[e.id]),
            references[e.id],
        )
        for e in evaluations
    ]


# --- The keyword table -------------------------------------------------------------------

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
class Column:
    metric: str
    k: int
    label: str

    @property
    def key(self) -> str:
        return metric_key_text(self.metric, self.k)


def keyword_columns(evaluation: Evaluation) -> list[Column]:
    return [
        Column(metric, k, engine.metric_label(metric, k))
        for metric, k in EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("metric", "k")
    ]


@dataclass(frozen=True)
class KeywordRow:
    keyword: Keyword
    values: list[float | None]
    graded: int
    slots: int
    # judged documents that are not among its results (counted in the trec pool)
    unretrieved: int = 0


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
        )
        for keyword in page_keywords
    ]
    return KeywordTable(page, rows, list(columns))


# --- A keyword's results -----------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotRow:
    id: int
    position: int
    doc_id: str
    name: str
    value: float | None
    slots: list[FeedbackSlot]


def keyword_snapshots(keyword: Keyword, *, snapshot_id: int | None = None) -> list[SnapshotRow]:
    """Every result of a keyword (or one of them) with every slot's grade, grader and
    reason, in one query."""
    slots = FeedbackSlot.objects.filter(keyword=keyword)
    if snapshot_id is not None:
        slots = slots.filter(snapshot_id=snapshot_id)
    rows: dict[int, SnapshotRow] = {}
    for slot in slots.select_related("snapshot", "grader").order_by("snapshot__position", "index"):
        snapshot = slot.snapshot
        if snapshot.id not in rows:
            rows[snapshot.id] = SnapshotRow(
                snapshot.id, snapshot.position, snapshot.doc_id, snapshot.name, snapshot.value, []
            )
        rows[snapshot.id].slots.append(slot)
    return list(rows.values())


def keyword_values(keyword: Keyword) -> list[tuple[Column, float | None]]:
    """The keyword's value of each of its evaluation's metrics, in two queries."""
    values = dict(
        ((metric, k), value)
        for metric, k, value in KeywordMetric.objects.filter(keyword=keyword).values_list(
            "metric", "k", "value"
        )
    )
    return [
        (column, values.get((column.metric, column.k)))
        for column in keyword_columns(keyword.evaluation)
    ]


def slot_in_team(*, slot_id: int, evaluation_id: int, team_id: int) -> FeedbackSlot | None:
    return (
        FeedbackSlot.objects.select_related("evaluation", "keyword")
        .filter(id=slot_id, evaluation_id=evaluation_id, evaluation__team_id=team_id)
        .first()
    )


# --- The leaderboard ---------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardRow:
    user_id: int
    email: str
    role: str
    graded: int
    share: float | None  # of every grade the listed members gave in the range
    active_days: int  # days (local time) with at least one grade


def leaderboard(
    *, team_id: int, start: date, end: date, tag_id: int | None = None
) -> list[LeaderboardRow]:
    """The team's members (holding the tag, if one is given) with the slots they graded
    in the team's evaluations from `start` to `end`, both days included, in local time.

    Two queries. A slot counts once, on the day of its latest grade; a reset slot no
    longer counts, nor a grade a reuse strategy copied from an earlier evaluation. Most
    grades first; members with none are listed too.
    """
    members = Membership.objects.filter(team_id=team_id)
    if tag_id is not None:
        members = members.filter(tags=tag_id)
    people = list(members.values_list("user_id", "user__email", "role").order_by("user__email"))
    zone = get_current_timezone()
    graded = (
        FeedbackSlot.objects.filter(
            grader_id__in=[user_id for user_id, _email, _role in people],
            evaluation__team_id=team_id,
            # Grades copied by a reuse strategy were counted where they were given.
            reused=False,
            graded_at__gte=datetime.combine(start, time.min, tzinfo=zone),
            graded_at__lt=datetime.combine(end + timedelta(days=1), time.min, tzinfo=zone),
        )
        .values_list("grader_id")
        .annotate(
            graded=Count("id"),
            days=Count(TruncDate("graded_at", tzinfo=zone), distinct=True),
        )
        .order_by()
        .values_list("grader_id", "graded", "days")
    )
    counts = {grader_id: (count, days) for grader_id, count, days in graded}
    total = sum(count for count, _days in counts.values())
    rows = [
        LeaderboardRow(
            user_id=user_id,
            email=email,
            role=role,
            graded=counts.get(user_id, (0, 0))[0],
            share=counts.get(user_id, (0, 0))[0] / total if total else None,
            active_days=counts.get(user_id, (0, 0))[1],
        )
        for user_id, email, role in people
    ]
    rows.sort(key=lambda row: (-row.graded, -row.active_days))  # stable: by email within
    return rows


def leaderboard_chart(rows: Sequence[LeaderboardRow], *, limit: int = 25) -> dict[str, Any]:
    """A bar per grader with grades (the first `limit`; the table lists everyone)."""
    shown = [row for row in rows if row.graded][:limit]
    return charts.chart(
        "bar",
        [row.email for row in shown],
        [("graded slots", [row.graded for row in shown])],
        axis="graded slots",
    )


# --- Model history -----------------------------------------------------------------------

# The most finished evaluations a model history shows (the latest ones).
MODEL_HISTORY_LIMIT = 200


@dataclass(frozen=True)
class HistoryRow:
    evaluation: Evaluation
    values: list[float | None]


@dataclass(frozen=True)
class ModelHistory:
    columns: list[Column]
    rows: list[HistoryRow]  # oldest to newest
    more: bool  # older finished evaluations were left out

    def charts(self) -> list[tuple[Column, str, dict[str, Any]]]:
        """(column, element id, chart) of each metric: its value per evaluation."""
        labels = [row.evaluation.name for row in self.rows]
        return [
            (
                column,
                f"model-history-{index}",
                charts.chart(
                    "line", labels, [(column.label, [row.values[index] for row in self.rows])]
                ),
            )
            for index, column in enumerate(self.columns)
        ]


def model_history(*, search_model_id: int) -> ModelHistory:
    """Every metric across the model's finished evaluations, oldest to newest, in three
    queries. A metric appears in the order of first use; an evaluation without it has no
    value there."""
    latest = list(
        Evaluation.objects.filter(search_model_id=search_model_id, status=Status.FINISHED).order_by(
            "-finished_at", "-id"
        )[: MODEL_HISTORY_LIMIT + 1]
    )
    more = len(latest) > MODEL_HISTORY_LIMIT
    evaluations = list(reversed(latest[:MODEL_HISTORY_LIMIT]))
    ids = [e.id for e in evaluations]
    values: dict[int, dict[MetricKey, float | None]] = defaultdict(dict)
    order: dict[MetricKey, tuple[int, int]] = {}
    rank = {evaluation_id: index for index, evaluation_id in enumerate(ids)}
    for evaluation_id, metric, k, value, position in EvaluationMetric.objects.filter(
        evaluation_id__in=ids
    ).values_list("evaluation_id", "metric", "k", "value", "position"):
        values[evaluation_id][(metric, k)] = value
        first_use = (rank[evaluation_id], position)
        order[(metric, k)] = min(order.get((metric, k), first_use), first_use)
    many = any(count > 1 for count in keyword_counts(ids).values())
    keys = sorted(order, key=order.__getitem__)
    columns = [
        Column(metric, k, engine.metric_label(metric, k, many_keywords=many)) for metric, k in keys
    ]
    rows = [HistoryRow(e, [values[e.id].get(key) for key in keys]) for e in evaluations]
    return ModelHistory(columns, rows, more)
