"""Making a try: check what was asked, number it, keep its queries and queue its run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput
from apps.core.lookup import by_id_or_name
from apps.core.queueing import queue_after_commit
from apps.endpoints.models import SearchModel
from apps.engine import EngineError, get_metric
from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Evaluation, Keyword, Profile, Scale

from .drafting import Draft, draft_parse
from .models import SavedQuerySet, Try, TryQuery
from .query_sets import MAX_QUERIES, query_texts_checked, team_query_set
from .tasks import run_try

MAX_NOTES = 10_000
DEFAULT_METRICS = [("ndcg", 10)]
DEFAULT_DEPTH = 20
MAX_DEPTH = 100


@dataclass(frozen=True)
class TryRequest:
    """What a lead or a client asks for; each field as sent, checked by try_start."""

    model: int | str
    evaluation: int | None = None  # the query set: this evaluation's keywords
    queries: Sequence[Any] | None = None  # or these query texts
    query_set: int | str | None = None  # or a saved query set's, by id or name
    params: Any = None
    headers: Any = None
    body: Any = None
    knobs: Any = None
    baseline_evaluation: int | None = None
    baseline_try: int | None = None  # a number among the model's tries
    metrics: str = ""
    depth: int = DEFAULT_DEPTH
    notes: str = ""


def try_check(*, team: Team, asked: TryRequest) -> None:
    """Raise InvalidInput naming every field try_start would refuse; make nothing. A form
    that found problems of its own asks this too, to show them all at once."""
    _checked(team, asked)


def try_start(*, team: Team, user: User | None, asked: TryRequest) -> Try:
    """Check everything at once (InvalidInput names each field that is wrong), then make
    the try with its queries and queue its run after the commit."""
    checked = _checked(team, asked)
    model, draft = checked.model, checked.draft
    baseline_evaluation, baseline_try = checked.baseline_evaluation, checked.baseline_try
    query_evaluation, texts = checked.query_evaluation, checked.texts
    with transaction.atomic():
        # The model's row orders the numbering: two tries made at once get 1 and 2.
        SearchModel.objects.select_for_update().filter(id=model.id).first()
        if baseline_evaluation is None and baseline_try is None:
            baseline_evaluation, baseline_try = _default_baseline(model, query_evaluation)
        setup = query_evaluation or baseline_evaluation
        attempt = Try.objects.create(
            team=team,
            search_model=model,
            number=_next_number(model),
            notes=asked.notes,
            overrides={"params": [list(pair) for pair in draft.params], "body": draft.body},
            header_overrides=[list(pair) for pair in draft.headers],
            knobs=draft.knobs,
            query_evaluation=query_evaluation,
            query_set=checked.query_set,
            baseline_evaluation=baseline_evaluation,
            baseline_try=baseline_try,
            scale=setup.scale if setup else Scale.GRADED,
            scale_levels=setup.scale_levels if setup else None,
            profile=setup.profile if setup else Profile.SEARCHTWEAK,
            metrics=[list(metric) for metric in checked.metrics or _setup_metrics(setup)],
            depth=asked.depth,
            queries_total=len(texts),
            created_by=user,
        )
        TryQuery.objects.bulk_create(
            TryQuery(attempt=attempt, position=position, text=text)
            for position, text in enumerate(texts)
        )
        queue_after_commit(run_try, attempt.id)
    return attempt


@dataclass(frozen=True)
class _Checked:
    model: SearchModel
    draft: Draft
    query_evaluation: Evaluation | None
    query_set: SavedQuerySet | None
    texts: list[str]
    baseline_evaluation: Evaluation | None
    baseline_try: Try | None
    metrics: list[tuple[str, int]]


def _checked(team: Team, asked: TryRequest) -> _Checked:
    problems: list[str] = []
    model = _team_model(team, asked.model, problems)
    query_evaluation = _team_evaluation(team, asked.evaluation, "evaluation", problems)
    texts, query_set = _query_texts(team, asked, query_evaluation, problems)
    draft, draft_problems = draft_parse(asked.params, asked.headers, asked.body, asked.knobs)
    problems += draft_problems
    baseline_evaluation = _team_evaluation(
        team, asked.baseline_evaluation, "baseline_evaluation", problems
    )
    baseline_try = _baseline_try(model, asked.baseline_try, problems) if model else None
    metrics = _metrics(asked.metrics, problems)
    if not 1 <= asked.depth <= MAX_DEPTH:
        problems.append(f"depth: from 1 to {MAX_DEPTH}")
    if len(asked.notes) > MAX_NOTES or "\x00" in asked.notes:
        problems.append(f"notes: at most {MAX_NOTES:,} characters, without NUL")
    if problems:
        raise InvalidInput(problems)
    assert model is not None
    return _Checked(
        model, draft, query_evaluation, query_set, texts, baseline_evaluation, baseline_try, metrics
    )


def _team_model(team: Team, chosen: int | str, problems: list[str]) -> SearchModel | None:
    models = SearchModel.objects.filter(team=team).select_related("endpoint")
    return by_id_or_name(models, chosen, field="model", label="search model", problems=problems)


def _team_evaluation(
    team: Team, evaluation_id: int | None, field: str, problems: list[str]
) -> Evaluation | None:
    if evaluation_id is None:
        return None
    found = None
    if 1 <= evaluation_id < 2**63:
        found = Evaluation.objects.filter(team=team, id=evaluation_id).first()
    if found is None:
        problems.append(f"{field}: the team has no evaluation {evaluation_id}")
    return found


def _query_texts(
    team: Team, asked: TryRequest, evaluation: Evaluation | None, problems: list[str]
) -> tuple[list[str], SavedQuerySet | None]:
    """The try's queries, from exactly one of: an evaluation, a saved set, a list."""
    given = [asked.evaluation, asked.query_set, asked.queries]
    if sum(source is not None for source in given) != 1:
        problems.append("queries: give one of an evaluation, a saved query set or a list")
        return [], None
    if asked.query_set is not None:
        saved = team_query_set(team, asked.query_set, problems)
        return (list(saved.queries) if saved else []), saved
    if asked.queries is not None:
        return query_texts_checked(asked.queries, "queries", problems), None
    if evaluation is None:
        return [], None
    texts = list(
        Keyword.objects.filter(evaluation=evaluation)
        .order_by("position")
        .values_list("text", flat=True)[: MAX_QUERIES + 1]
    )
    if len(texts) > MAX_QUERIES:
        problems.append(f"evaluation: a try runs at most {MAX_QUERIES:,} queries")
    elif not texts:
        problems.append("evaluation: it has no keywords to run")
    return texts, None


def _metrics(text: str, problems: list[str]) -> list[tuple[str, int]]:
    if not text.strip():
        return []
    try:
        metrics = parse_metric_list(text)
        for metric, _k in metrics:
            get_metric(metric)
    except (ValueError, EngineError) as error:
        problems.append(f"metrics: {error}")
        return []
    return metrics


def _setup_metrics(setup: Evaluation | None) -> list[tuple[str, int]]:
    if setup is None:
        return DEFAULT_METRICS
    metrics = list(setup.metrics.order_by("position", "id").values_list("metric", "k"))
    return metrics or DEFAULT_METRICS


def _baseline_try(model: SearchModel, number: int | None, problems: list[str]) -> Try | None:
    if number is None:
        return None
    found = Try.objects.filter(search_model=model, number=number).first()
    if found is None:
        problems.append(f"baseline_try: {model.name} has no try {number}")
    return found


def _default_baseline(
    model: SearchModel, query_evaluation: Evaluation | None
) -> tuple[Evaluation | None, Try | None]:
    """The query set's evaluation when it ran this model, else the model's last
    evaluation, else its last try; none when the model has neither."""
    if query_evaluation is not None and query_evaluation.search_model_id == model.id:
        return query_evaluation, None
    last = Evaluation.objects.filter(search_model=model).order_by("-created_at", "-id").first()
    if last is not None:
        return last, None
    return None, Try.objects.filter(search_model=model).order_by("-number").first()


def _next_number(model: SearchModel) -> int:
    highest = Try.objects.filter(search_model=model).aggregate(highest=Max("number"))["highest"]
    return (highest or 0) + 1
