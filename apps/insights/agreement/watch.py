"""Watching the disagreement queues: a team that listens is told once when an active
evaluation's queue grows past the team's level, and again only after it has fallen back
to the level or below. Beat runs it every minute (apps.insights.tasks)."""

from django.urls import reverse

from apps.evaluations.models import Evaluation, Status
from apps.notifications.events import announce_once, condition_cleared, teams_listening
from apps.notifications.models import Event
from apps.notifications.services import disagreement_level_of

from .selectors import open_disagreement_count


def disagreements_watch() -> int:
    """Look at every active evaluation of the teams that listen; returns how many
    evaluations the teams were told about now."""
    told = 0
    teams = teams_listening(Event.DISAGREEMENTS_ABOVE_LEVEL)
    levels = {team_id: disagreement_level_of(team_id) for team_id in teams}
    for evaluation in Evaluation.objects.filter(team_id__in=teams, status=Status.ACTIVE):
        told += _watch(evaluation, levels[evaluation.team_id])
    return told


def _watch(evaluation: Evaluation, level: int) -> bool:
    key = f"disagreements:{evaluation.id}"
    count = open_disagreement_count(evaluation)
    if count <= level:
        condition_cleared(key=key, team_id=evaluation.team_id)
        return False
    return announce_once(
        key=key,
        team_id=evaluation.team_id,
        event=Event.DISAGREEMENTS_ABOVE_LEVEL,
        summary=f"{count} results of {evaluation.name} have graders who disagree, more than "
        f"the team's level of {level}: a lead's decision settles each.",
        path=reverse("insights:disagreement_queue", args=[evaluation.id]),
        data={
            "evaluation": {"id": evaluation.id, "name": evaluation.name},
            "disagreements": count,
            "level": level,
        },
    )
