"""Factories for tests: real rows built through the same services the product uses."""

import io
import json
from collections.abc import Sequence
from itertools import count
from typing import TYPE_CHECKING

from django.test import Client

from apps.accounts.models import Team, User
from apps.accounts.services import member_add, team_create
from apps.evaluations.models import Evaluation, FeedbackSlot
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.interchange.document import import_document
from apps.lifecycle.steps import evaluation_finish_now, evaluation_start

if TYPE_CHECKING:
    from apps.endpoints.models import SearchModel

_sequence = count(1)


def make_team(name: str | None = None, owner: str | None = None) -> Team:
    number = next(_sequence)
    return team_create(
        name=name or f"Team {number}", owner_email=owner or f"owner{number}@example.test"
    )


def make_grader(team: Team, email: str | None = None, role: str = "evaluator") -> User:
    email = email or f"grader{next(_sequence)}@example.test"
    return member_add(team=team, email=email, role=role).user


def make_evaluation(
    *,
    team: Team | None = None,
    scale: str = "graded",
    strategy: int = 1,
    profile: str = "searchtweak",
    metrics: Sequence[tuple[str, int]] = (("ndcg", 10), ("precision", 5)),
    keywords: dict[str, int] | None = None,
    start: bool = True,
    **settings: object,
) -> Evaluation:
    """An evaluation whose keywords each have the given number of results."""
    team = team or make_team()
    evaluation = evaluation_create(
        team=team,
        name=f"Evaluation {next(_sequence)}",
        scale=scale,
        strategy=strategy,
        profile=profile,
        metrics=list(metrics),
        **settings,  # type: ignore[arg-type]
    )
    keywords = keywords if keywords is not None else {"red shoes": 5}
    for keyword in keywords_add(evaluation=evaluation, texts=list(keywords)):
        snapshots_add(
            keyword=keyword,
            documents=[
                Document(f"{keyword.text}-doc-{i}", f"Result {i}")
                for i in range(1, keywords[keyword.text] + 1)
            ],
        )
    if start:
        evaluation_start(evaluation=evaluation)
    evaluation.refresh_from_db()
    return evaluation


def slots_of(evaluation: Evaluation, keyword: str | None = None) -> list[FeedbackSlot]:
    """Slots in keyword order, then position, then slot index."""
    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    if keyword is not None:
        slots = slots.filter(keyword__text=keyword)
    return list(slots.order_by("keyword__position", "snapshot__position", "index"))


def assign(slot: FeedbackSlot, user: User) -> FeedbackSlot:
    """Give a slot to a grader, as the queue would."""
    from django.utils import timezone

    FeedbackSlot.objects.filter(id=slot.id).update(grader=user, assigned_at=timezone.now())
    slot.refresh_from_db()
    return slot


def client_for(user: User | None, **options: object) -> Client:
    """A browser session: logged in as the user, or anonymous for None."""
    client = Client(**options)  # type: ignore[arg-type]
    if user is not None:
        client.force_login(user)
    return client


def make_search_model(
    team: Team,
    base_url: str,
    *,
    path: str = "/search",
    name: str | None = None,
    method: str = "GET",
    timeout_seconds: float = 5.0,
    default_keywords: str = "",
) -> "SearchModel":
    """An endpoint on the test search server (tests/search_server.py) and a model that
    sends the keyword as `q`."""
    from apps.endpoints.models import SearchEndpoint, SearchModel
    from tests.search_server import MAPPER

    number = next(_sequence)
    endpoint = SearchEndpoint.objects.create(
        team=team,
        name=f"Endpoint {number}",
        method=method,
        url=base_url + path,
        timeout_seconds=timeout_seconds,
        mapper=MAPPER,
    )
    return SearchModel.objects.create(
        team=team,
        endpoint=endpoint,
        name=name or f"Model {number}",
        params=[["q", "#query#"]],
        default_keywords=default_keywords,
    )


def start(evaluation: Evaluation) -> Evaluation:
    """Start the evaluation as a lead does (for tests of the apps below the lifecycle)."""
    return evaluation_start(evaluation=evaluation)


def finish(evaluation: Evaluation) -> Evaluation:
    """Finish the evaluation as a lead does by hand."""
    return evaluation_finish_now(evaluation=evaluation)


def import_graded_by(team: Team, grader: str, grades: Sequence[int]) -> Evaluation:
    """An evaluation imported from a file (graded scale, one keyword "boots") whose
    results each carry one grade naming `grader`; the import dates its grades now."""
    snapshots = [
        {"position": n, "doc_id": f"d{n}", "grades": [{"grader": grader, "grade": grade}]}
        for n, grade in enumerate(grades, start=1)
    ]
    document = {
        "format": "relevo.evaluation/1",
        "name": f"Imported {next(_sequence)}",
        "scale": "graded",
        "strategy": 1,
        "metrics": [{"metric": "ndcg", "k": 3}],
        "keywords": [{"keyword": "boots", "snapshots": snapshots}],
    }
    return import_document(team=team, source=io.BytesIO(json.dumps(document).encode()))
