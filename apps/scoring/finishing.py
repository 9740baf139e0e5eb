"""Finishing an evaluation: when its last grade is scored (store.py) or when a lead
finishes it by hand (apps.lifecycle.steps). Its means are made exact, the team is
told, and an evaluation set to restart on its own gets a fresh copy.

The restart (the lifecycle's clone and start) and the evaluation's page (insights) sit
above the pipeline, which never imports them: each app registers its part here when it
is ready (restart_register, page_register).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from apps.core import live
from apps.core.errors import InvalidState
from apps.engine.metrics import metric_label
from apps.evaluations import states
from apps.evaluations.models import Evaluation, EvaluationMetric, Status
from apps.notifications.events import announce, audience
from apps.notifications.models import Event

from .means import store_exact_means


def _not_registered(evaluation_id: int) -> NoReturn:
    raise ImproperlyConfigured("an app above the pipeline did not register its part")


@dataclass
class _Above:
    """What the apps above register when they are ready (their AppConfig.ready)."""

    # Called in the finish's transaction: restarts the evaluation once it commits.
    restart: Callable[[int], None] = _not_registered
    # The path of the evaluation's page, linked from the announcement.
    page: Callable[[int], str] = _not_registered


_above = _Above()


def restart_register(restart: Callable[[int], None]) -> None:
    """How a finished evaluation set to restart on its own is restarted (the lifecycle)."""
    _above.restart = restart


def page_register(page: Callable[[int], str]) -> None:
    """The path of an evaluation's page (insights)."""
    _above.page = page


def evaluation_finish(*, evaluation_id: int, event: states.Event = states.Event.COMPLETE) -> None:
    """Finish an active evaluation (states.py: by hand, or complete once no finish
    guard holds it): exact means, the team told, a fresh copy when it auto-restarts.
    Refused with the reason (InvalidState)."""
    with transaction.atomic():
        states.move(evaluation_id=evaluation_id, event=event, finished_at=timezone.now())
        store_exact_means(evaluation_id=evaluation_id)
        team_id, auto_restart = Evaluation.objects.values_list("team_id", "auto_restart").get(
            id=evaluation_id
        )
        live.changed(evaluation_id=evaluation_id, team_id=team_id)
        _announce_finished(evaluation_id, team_id)
        if auto_restart:
            _above.restart(evaluation_id)


def finish_when_complete(evaluation: Evaluation) -> bool:
    """Finish the evaluation (locked by the caller) once every slot is graded and no work
    on it still runs (states.py's finish guards); whether it finished."""
    complete = evaluation.total_slots > 0 and evaluation.graded_slots == evaluation.total_slots
    if not complete or evaluation.status != Status.ACTIVE:
        return False
    try:
        evaluation_finish(evaluation_id=evaluation.id)
    except InvalidState:
        return False  # a judge or a chain still works on it: it finishes when they end
    return True


def finish_if_complete(*, evaluation_id: int) -> bool:
    """The same, for work that ended on the evaluation (a judge's run, a chain): the
    evaluation read under its lock, as the pipeline's store reads it."""
    with transaction.atomic():
        evaluation = Evaluation.objects.select_for_update().filter(id=evaluation_id).first()
        return evaluation is not None and finish_when_complete(evaluation)


def _announce_finished(evaluation_id: int, team_id: int) -> None:
    """Tell the team (its webhooks, the members who asked for e-mail) with the means;
    two reads when nobody listens."""
    heard_by = audience(team_id=team_id, event=Event.EVALUATION_FINISHED)
    if not heard_by:
        return
    name, graded, total = Evaluation.objects.values_list("name", "graded_slots", "total_slots").get(
        id=evaluation_id
    )
    metrics = [
        {"metric": metric_label(metric, k), "value": value}
        for metric, k, value in EvaluationMetric.objects.filter(
            evaluation_id=evaluation_id
        ).values_list("metric", "k", "value")
    ]
    shown = ", ".join(f"{m['metric']} {m['value']:.3f}" for m in metrics if m["value"] is not None)
    announce(
        team_id=team_id,
        event=Event.EVALUATION_FINISHED,
        summary=f"The evaluation {name} finished ({graded} of {total} results graded)"
        + (f": {shown}." if shown else "."),
        path=_above.page(evaluation_id),
        heard_by=heard_by,
        data={
            "evaluation": {"id": evaluation_id, "name": name},
            "graded": graded,
            "results": total,
            "metrics": metrics,
        },
    )
