"""An evaluation's life after it is built: start (its keywords run on a worker, then it
opens), pause, finish, clone, auto-restart, delete, archive, pin, the team's baseline.

Finishing is the pipeline's (apps.scoring.finishing): an evaluation also finishes on its
own when its last grade is scored.
"""

import re

from django.db import transaction

from apps.accounts.models import Team
from apps.core import live
from apps.core.errors import InvalidInput, InvalidState
from apps.core.image_sources import image_source
from apps.core.queueing import queue_after_commit
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, Reuse, Status
from apps.evaluations.services import (
    NAME_LIMIT,
    Document,
    NameTaken,
    evaluation_create,
    keywords_add,
    snapshots_add,
)
from apps.evaluations.states import Event, move
from apps.scoring.finishing import evaluation_finish

from .fetching import keywords_to_run
from .opening import evaluation_open
from .tasks import fetch_evaluation

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)\s*$")


def evaluation_start(*, evaluation: Evaluation) -> Evaluation:
    """Start (or resume) a pending evaluation.

    With a search model and keywords not yet run, the keywords run first on a worker
    (apps.lifecycle.fetching), which then opens the evaluation; otherwise it opens now.
    """
    if evaluation.search_model_id is not None and not evaluation.keywords.exists():
        raise InvalidState("add keywords before starting: the search model has none to run")
    if evaluation.search_model_id is not None and keywords_to_run(evaluation.id):
        with transaction.atomic():
            move(evaluation_id=evaluation.id, event=Event.FETCH)
            # With the broker down the start is saved all the same: the keywords run when
            # resume_stalled_fetches finds the evaluation fetching with no runner.
            queue_after_commit(fetch_evaluation, evaluation.id)
    else:
        evaluation_open(evaluation=evaluation)
    evaluation.refresh_from_db()
    return evaluation


def next_name(name: str) -> str:
    """'Holiday set 4' -> 'Holiday set 5'; a name without a trailing number gets ' 2'.

    The text before the number is shortened when the result would not fit the column.
    """
    match = _TRAILING_NUMBER.match(name)
    base, number = (match.group(1), int(match.group(2)) + 1) if match else (f"{name} ", 2)
    suffix = str(number)
    return f"{base[: NAME_LIMIT - len(suffix)]}{suffix}"


def free_name(*, team_id: int, name: str) -> str:
    """`name`, or the first of next_name's numbers after it that the team has not used
    (names compared trimmed and in any case, as the team's unique index compares them)."""
    taken = {
        used.strip().lower()
        for used in Evaluation.objects.filter(team_id=team_id).values_list("name", flat=True)
    }
    while name.strip().lower() in taken:
        name = next_name(name)
    return name


# A copy named by next_name can lose its name to another copy made at the same moment;
# it takes the next free one, this many times at most.
COPY_NAME_ATTEMPTS = 3


@transaction.atomic
def evaluation_clone(
    *, evaluation: Evaluation, name: str | None = None, search_model: SearchModel | None = None
) -> Evaluation:
    """A pending copy with the same settings and keywords, and no grades.

    Named `name` (refused when the team has it), or else the name's trailing number + 1,
    or the next one the team has not used. With a search model (the evaluation's, or
    `search_model`: the same keywords asked of another ranking) the copy's keywords will
    run again when it starts (fresh results); without one, the results are copied.
    """
    model = search_model or evaluation.search_model
    if name:
        copy = _copy_settings(evaluation, name, model)
    else:
        copy = _copy_settings_under_a_free_name(evaluation, model)
    if model is not None:
        keywords_add(
            evaluation=copy,
            texts=evaluation.keywords.order_by("position").values_list("text", flat=True),
        )
        return copy
    for keyword in evaluation.keywords.prefetch_related("snapshots"):
        [new_keyword] = keywords_add(evaluation=copy, texts=[keyword.text])
        snapshots_add(
            keyword=new_keyword,
            documents=[
                # image_source: an image stored before the rule is not copied on
                Document(s.doc_id, s.name, image_source(s.image), s.attributes)
                for s in keyword.snapshots.all()
            ],
        )
    copy.refresh_from_db()
    return copy


def run_copy(
    *, evaluation: Evaluation, name: str, search_model: SearchModel | None = None
) -> Evaluation:
    """A copy made to be compared with what it was copied from (a schedule's run, the
    gate's candidate), under `name` or the next free one: it reuses earlier grades by
    keyword and document at least, but never one given on content that has changed
    since (a changed document is graded again), and never restarts on its own."""
    copy = evaluation_clone(
        evaluation=evaluation,
        name=free_name(team_id=evaluation.team_id, name=name[:NAME_LIMIT]),
        search_model=search_model,
    )
    reuse = evaluation.reuse if evaluation.reuse != Reuse.NONE else Reuse.KEYWORD_DOC
    Evaluation.objects.filter(id=copy.id).update(
        reuse=reuse, reuse_fresh_only=True, auto_restart=False
    )
    copy.refresh_from_db()
    return copy


def _copy_settings_under_a_free_name(
    evaluation: Evaluation, model: SearchModel | None
) -> Evaluation:
    attempts_left = COPY_NAME_ATTEMPTS
    while True:
        free = free_name(team_id=evaluation.team_id, name=next_name(evaluation.name))
        try:
            return _copy_settings(evaluation, free, model)
        except NameTaken:
            # Another copy took the name between the read and the write: read again.
            attempts_left -= 1
            if not attempts_left:
                raise


def _copy_settings(evaluation: Evaluation, name: str, model: SearchModel | None) -> Evaluation:
    """A new pending evaluation of the team with the evaluation's settings."""
    return evaluation_create(
        team=evaluation.team,
        name=name,
        metrics=list(evaluation.metrics.values_list("metric", "k")),
        scale=evaluation.scale,
        scale_levels=evaluation.scale_levels,
        strategy=evaluation.strategy,
        profile=evaluation.profile,
        transformers=evaluation.transformers,
        description=evaluation.description,
        show_position=evaluation.show_position,
        scoring_guidelines=evaluation.scoring_guidelines,
        reuse=evaluation.reuse,
        reuse_judges=evaluation.reuse_judges,
        auto_restart=evaluation.auto_restart,
        zero_without_results=evaluation.zero_without_results,
        tags=evaluation.tags.all(),
        created_by=evaluation.created_by,
        search_model=model,
    )


def evaluation_restart(*, evaluation_id: int) -> Evaluation:
    """Auto-restart: a copy named as a clone is (the next number the team has not used),
    started at once.
    (Queued by auto_restart.py when apps.scoring.finishing finishes one set to restart.)"""
    move(evaluation_id=evaluation_id, event=Event.RESTART)
    evaluation = Evaluation.objects.get(id=evaluation_id)
    return evaluation_start(evaluation=evaluation_clone(evaluation=evaluation))


def evaluation_stop(*, evaluation: Evaluation) -> Evaluation:
    """Pause: an active evaluation goes back to pending (grades are kept); one whose
    keywords are running stops running them (those already run are kept)."""
    move(evaluation_id=evaluation.id, event=Event.PAUSE)
    live.changed(evaluation_id=evaluation.id, team_id=evaluation.team_id)
    evaluation.refresh_from_db()
    return evaluation


def evaluation_finish_now(*, evaluation: Evaluation) -> Evaluation:
    """A lead finishes an active evaluation by hand, whatever its progress."""
    evaluation_finish(evaluation_id=evaluation.id, event=Event.FINISH)
    evaluation.refresh_from_db()
    return evaluation


def evaluation_delete(*, evaluation: Evaluation) -> None:
    """Delete an evaluation and everything in it; refused while graders are at work."""
    move(evaluation_id=evaluation.id, event=Event.DELETE)
    # A team whose baseline this was keeps no baseline (the foreign key sets null).
    evaluation.delete()


def evaluation_archive(*, evaluation: Evaluation, archived: bool = True) -> Evaluation:
    """Archive (hide from lists and the work pool) or bring back; not while active."""
    move(evaluation_id=evaluation.id, event=Event.ARCHIVE if archived else Event.UNARCHIVE)
    live.changed(team_id=evaluation.team_id)  # the dashboard leaves archived ones out
    evaluation.refresh_from_db(fields=["archived"])
    return evaluation


def evaluation_pin(*, evaluation: Evaluation, pinned: bool = True) -> Evaluation:
    """Pin to (or unpin from) the team's dashboard."""
    Evaluation.objects.filter(id=evaluation.id).update(pinned=pinned)
    live.changed(team_id=evaluation.team_id)  # the dashboard shows the pinned
    evaluation.refresh_from_db(fields=["pinned"])
    return evaluation


def team_set_baseline(*, team: Team, evaluation: Evaluation | None) -> None:
    """The evaluation others are compared against: a finished one of the team, or none."""
    if evaluation is not None:
        if evaluation.team_id != team.id:
            raise InvalidInput(["evaluation: not an evaluation of this team"])
        if evaluation.status != Status.FINISHED:
            raise InvalidState(
                f"only a finished evaluation can be the baseline; this one is {evaluation.status}"
            )
    Team.objects.filter(id=team.id).update(baseline_evaluation=evaluation)
    live.changed(team_id=team.id)  # the dashboard's changes are measured against it
    team.baseline_evaluation = evaluation
