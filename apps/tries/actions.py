"""What a lead does with a finished try: promote it to a search model of its own, send
its results to people, or have an AI judge fill the results nobody has judged.

Sending and filling both make an evaluation of the try's results (its lists as they came
back, content and all) that reuses the team's grades: whatever was judged before in an
evaluation or an imported judgement list (people's, and AI judges' the team's
calibration rule lets grade) is copied in, so people or the judge get only the holes.
The try's report reads the library, so the new grades count in it as soon as they are
given.
"""

from __future__ import annotations

from django.db import transaction

from apps.accounts.models import User
from apps.core.errors import InvalidInput, InvalidState
from apps.endpoints.models import SearchModel
from apps.endpoints.name_value_lines import format_lines
from apps.endpoints.services import model_create
from apps.evaluations.models import Evaluation, Reuse
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.judges.controls import run_assign
from apps.judges.models import Judge, JudgeRun
from apps.lifecycle.steps import evaluation_start, free_name

from .drafting import draft_promoted
from .models import Try, TryState

PROMOTED_NAME_ATTEMPTS = 50


def try_promote(*, attempt: Try, user: User | None) -> SearchModel:
    """A new search model on the same endpoint with the draft's settings, named after
    the try; the model tried stays as it was, so its evaluations keep meaning what they
    meant. Promoting twice gives the same model."""
    if attempt.promoted_model_id is not None:
        assert attempt.promoted_model is not None
        return attempt.promoted_model
    model = attempt.search_model
    draft = attempt.draft()
    in_url = [name for name in draft.knobs if f"#{name}#" in model.endpoint.url]
    if in_url:
        raise InvalidInput(
            [
                f"knobs.{name}: it fills the endpoint's URL, which a model cannot change"
                for name in in_url
            ]
        )
    promoted = draft_promoted(model.params, model.headers, model.body, draft)
    with transaction.atomic():
        new_model = model_create(
            team=attempt.team,
            created_by=user,
            endpoint=model.endpoint,
            name=_free_model_name(attempt),
            description=f"Promoted from {attempt}. {attempt.notes}".strip(),
            params=format_lines(promoted.params, separator="="),
            headers=format_lines(promoted.headers, separator=":"),
            body=promoted.body,
            body_type=model.body_type,
            default_keywords=model.default_keywords,
            tags=model.tags.all(),
        )
        Try.objects.filter(id=attempt.id).update(promoted_model=new_model)
    attempt.promoted_model = new_model
    return new_model


def try_send_to_people(*, attempt: Try, user: User | None) -> Evaluation:
    """The try's results as an evaluation, open for grading with the team's earlier
    grades reused; made once, then the same one."""
    return _try_evaluation(attempt, user)


def try_fill_with_judge(*, attempt: Try, judge: Judge, user: User | None) -> JudgeRun:
    """Have `judge` grade the try's results nobody has judged: the same evaluation, with
    the judge assigned (refused, naming why, when the team's calibration rule keeps it
    out). The judge's budget stops it as on any evaluation."""
    if judge.team_id != attempt.team_id:
        raise InvalidInput(["judge: the team has no such AI judge"])
    evaluation = _try_evaluation(attempt, user)
    return run_assign(judge=judge, evaluation=evaluation, created_by=user)


def _try_evaluation(attempt: Try, user: User | None) -> Evaluation:
    if attempt.state != TryState.DONE:
        raise InvalidState("the try has not finished running")
    with transaction.atomic():
        locked = Try.objects.select_for_update().get(id=attempt.id)
        if locked.evaluation_id is not None:
            return Evaluation.objects.get(id=locked.evaluation_id)
        ran = [q for q in attempt.queries.order_by("position") if q.documents]
        if not ran:
            raise InvalidState("the try has no results to grade")
        evaluation = evaluation_create(
            team=attempt.team,
            name=free_name(team_id=attempt.team_id, name=str(attempt)),
            metrics=[(metric, k) for metric, k in attempt.metrics],
            scale=attempt.scale,
            scale_levels=attempt.scale_levels,
            profile=attempt.profile,
            reuse=Reuse.KEYWORD_DOC,
            # The report counts a calibrated judge's grades as judged; so does the copy.
            reuse_judges=True,
            description=f"The results of {attempt}. {attempt.notes}".strip(),
            created_by=user,
            search_model=attempt.promoted_model,
        )
        keywords = keywords_add(evaluation=evaluation, texts=[q.text for q in ran])
        for keyword, query in zip(keywords, ran, strict=True):
            snapshots_add(keyword=keyword, documents=[_document(d) for d in query.documents])
        Try.objects.filter(id=attempt.id).update(evaluation=evaluation)
        attempt.evaluation = evaluation
        return evaluation_start(evaluation=evaluation)


def _document(stored: dict[str, object]) -> Document:
    attributes = stored.get("attributes")
    return Document(
        doc_id=str(stored["doc_id"]),
        name=str(stored.get("name", "")),
        image=str(stored.get("image", "")),
        attributes=dict(attributes) if isinstance(attributes, dict) else {},
    )


def _free_model_name(attempt: Try) -> str:
    taken = set(SearchModel.objects.filter(team_id=attempt.team_id).values_list("name", flat=True))
    base = f"{attempt.search_model.name} (try {attempt.number})"[:200]
    for number in range(1, PROMOTED_NAME_ATTEMPTS + 1):
        name = base if number == 1 else f"{base} {number}"
        if name not in taken:
            return name
    raise InvalidState("no free name for the promoted model; rename some models first")
