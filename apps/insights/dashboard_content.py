"""What the home dashboard shows a person, read for the page and for its live answer
(views.dashboard, live_views.live_dashboard)."""

from typing import Any

from django.utils import timezone

from apps.accounts.requests import TeamRequest
from apps.accounts.selectors import is_lead
from apps.evaluations.models import Evaluation, Status
from apps.judging import selectors as judging_selectors
from apps.judging import services as judging_services

from .dashboard_pins import dashboard_pins
from .leaderboard import judge_leaderboard


def dashboard_context(request: TeamRequest) -> dict[str, Any]:
    """What the dashboard shows the person, for the page and its live answer."""
    membership = request.membership
    mine = list(judging_selectors.evaluations_open_to(membership))
    team_active = list(
        Evaluation.objects.filter(
            team_id=membership.team_id, status=Status.ACTIVE, archived=False
        ).order_by("-pinned", "started_at")
    )
    waiting = (
        judging_services.results_waiting_for(membership) if mine else judging_services.Waiting(0)
    )
    pins: list = []
    ai_graded_today = 0
    if is_lead(membership):
        pins = dashboard_pins(
            team_id=membership.team_id, baseline_id=membership.team.baseline_evaluation_id
        )
        # The team's AI judges, counted apart from people's grades.
        today = timezone.localdate()
        judges = judge_leaderboard(team_id=membership.team_id, start=today, end=today)
        ai_graded_today = sum(judge.graded for judge in judges)
    return {
        "waiting": waiting,
        "my_evaluations": mine,
        "team_active": team_active,
        "grades_today": judging_selectors.grades_today(user=request.user),
        "ai_graded_today": ai_graded_today,
        "pins": pins,
    }
