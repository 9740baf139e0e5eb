"""The regression gate's model run, as a try: the baseline's keywords asked of a search
model as it is (running.py runs them, as any try's), then the answers copied into an
evaluation the gate can compare with the baseline.

The evaluation is a copy of the baseline's setup (its metrics, scale, strategy and
guidelines) holding every keyword, with the results the try got, a keyword that failed
or found nothing included, so a ranking that loses a query's results is scored for it.
It reuses the still-valid grades of earlier evaluations and lists (never one given on
content that has changed since: a changed document is graded again) and does not restart
on its own; people or an AI judge grade the rest.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, Keyword, Snapshot
from apps.evaluations.result_rows import ResultRow, insert_results
from apps.evaluations.services import add_to_total_slots
from apps.lifecycle.steps import evaluation_start, run_copy

from .models import Try, TryState
from .starting import DEFAULT_DEPTH, MAX_DEPTH, TryRequest, try_start


def gate_try_start(
    *, team: Team, user: User | None, model: SearchModel, baseline: Evaluation
) -> Try:
    """A try of `model` as it is on the baseline's keywords, against the baseline, keeping
    as many results per keyword as the baseline's longest list (up to a try's most)."""
    asked = TryRequest(
        model=model.id,
        evaluation=baseline.id,
        baseline_evaluation=baseline.id,
        depth=_baseline_depth(baseline),
        notes=f"The regression gate's candidate against {baseline.name}.",
    )
    return try_start(team=team, user=user, asked=asked)


def gate_candidate_make(*, attempt: Try, baseline: Evaluation) -> Evaluation:
    """The finished try's results in a started copy of the baseline's setup."""
    assert attempt.state == TryState.DONE, "the try has not finished"
    name = f"{attempt.search_model.name} against {baseline.name}"
    with transaction.atomic():
        copy = run_copy(evaluation=baseline, name=name, search_model=attempt.search_model)
        _results_store(copy, attempt)
        Try.objects.filter(id=attempt.id).update(evaluation=copy)
        copy.refresh_from_db()
        # Every keyword has run: it opens now, and reuse fills what was graded before.
        return evaluation_start(evaluation=copy)


def _results_store(evaluation: Evaluation, attempt: Try) -> None:
    """Each keyword's results as the try got them, and the keyword marked run (failed,
    with the try's message, where the search did not answer)."""
    ran = {query.text: query for query in attempt.queries.all()}
    rows: list[ResultRow] = []
    now = timezone.now()
    keywords = list(Keyword.objects.filter(evaluation=evaluation).order_by("position"))
    for keyword in keywords:
        query = ran.get(keyword.text)
        documents = query.documents if query else []
        rows += [
            ResultRow(
                keyword.id,
                keyword.position,
                rank,
                str(document["doc_id"]),
                str(document.get("name", "")),
                str(document.get("image", "")),
                dict(document.get("attributes") or {}),
            )
            for rank, document in enumerate(documents, start=1)
        ]
        keyword.executed_at = now
        keyword.failed = query is None or bool(query.error)
        keyword.execution_message = (
            "not run" if query is None else query.error or ("" if documents else "no results")
        )
    Keyword.objects.bulk_update(keywords, ["executed_at", "failed", "execution_message"])
    added = insert_results(evaluation_id=evaluation.id, strategy=evaluation.strategy, rows=rows)
    add_to_total_slots(evaluation_id=evaluation.id, added=added)


def _baseline_depth(baseline: Evaluation) -> int:
    longest = (
        Snapshot.objects.filter(keyword__evaluation=baseline)
        .values("keyword_id")
        .annotate(results=Count("id"))
        .aggregate(longest=Max("results"))["longest"]
    )
    return min(max(longest or DEFAULT_DEPTH, 1), MAX_DEPTH)
