"""The demo's key pages, in the order a newcomer meets them.

One list serves two readers: the browser test that checks no page scrolls sideways on a
phone-sized screen, and `scripts/screenshots.py`, which draws the pictures in
`docs/screenshots/`. Both run against a freshly seeded demo (`seed_demo`).
"""

from dataclasses import dataclass

from django.urls import reverse

from apps.accounts.models import Team
from apps.behaviour.models import ClickLog
from apps.endpoints.models import SearchModel
from apps.evaluations.metric_list import metric_text
from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword
from apps.schedules.models import Schedule

from .seed import TEAM_NAME


@dataclass(frozen=True)
class Stop:
    name: str  # a file name for its screenshot
    path: str
    phone: bool = False  # drawn at phone size too in docs/screenshots


def demo_tour() -> list[Stop]:
    """Every page a lead or a grader opens in the demo, resolved to the demo's own ids."""
    team = Team.objects.get(name=TEAM_NAME)
    evaluations = Evaluation.objects.filter(team=team)
    graded = evaluations.get(name__startswith="Catalogue search, graded")
    binary = evaluations.get(name__startswith="Catalogue search, binary")
    live = evaluations.get(name__startswith="Live catalogue search")
    keyword = Keyword.objects.filter(evaluation=graded).order_by("position", "id").first()
    assert keyword is not None, "the demo's graded evaluation has keywords"
    model = SearchModel.objects.get(team=team)
    schedule = Schedule.objects.get(team=team)
    log = ClickLog.objects.get(team=team)
    compare = reverse("insights:evaluation_comparison")
    metric = EvaluationMetric.objects.filter(evaluation=graded).order_by("position", "id")[0]
    metric_query = f"metric={metric.metric}&k={metric.k}"
    planned = f"metric={metric_text(metric.metric, metric.k)}&change=0.05&power=0.8"
    return [
        Stop("dashboard", reverse("insights:dashboard"), phone=True),
        Stop("evaluations", reverse("insights:evaluation_list"), phone=True),
        Stop("evaluation", reverse("insights:evaluation_detail", args=[graded.id]), phone=True),
        Stop("keyword", reverse("insights:keyword_detail", args=[graded.id, keyword.id])),
        Stop(
            "metric-explainer",
            f"{reverse('insights:keyword_explain', args=[graded.id, keyword.id])}?{metric_query}",
            phone=True,
        ),
        Stop("compare", f"{compare}?e={binary.id}&e={graded.id}", phone=True),
        Stop("judge-what-decides", reverse("insights:decisive_order", args=[graded.id])),
        Stop("agreement", reverse("insights:evaluation_agreement", args=[graded.id])),
        Stop("disagreements", reverse("insights:disagreement_queue", args=[graded.id])),
        Stop("leaderboard", reverse("insights:leaderboard")),
        Stop("new-evaluation", reverse("evaluations:evaluation_new")),
        Stop("plan", f"{reverse('insights:evaluation_plan')}?{planned}"),
        Stop("edit-evaluation", reverse("evaluations:evaluation_edit", args=[live.id])),
        Stop("import", reverse("interchange:evaluation_import")),
        Stop("search-models", reverse("endpoints:search_model_list")),
        Stop("search-model", reverse("endpoints:search_model_detail", args=[model.id])),
        Stop("new-search-model", reverse("endpoints:search_model_create")),
        Stop("model-history", reverse("insights:model_history", args=[model.id])),
        Stop("endpoints", reverse("endpoints:endpoint_list")),
        Stop("ai-judges", reverse("judges:judge_list")),
        Stop("calibration", reverse("judges:gold_set_list")),
        Stop("behaviour-logs", reverse("behaviour:log_list")),
        Stop("behaviour-log", reverse("behaviour:log_detail", args=[log.id])),
        Stop("members", reverse("accounts:members")),
        Stop("tags", reverse("accounts:tags")),
        Stop("api-tokens", reverse("accounts:api_tokens")),
        Stop("schedules", reverse("schedules:schedule_list")),
        Stop("schedule", reverse("schedules:schedule_detail", args=[schedule.id]), phone=True),
        Stop("notifications", reverse("notifications:overview"), phone=True),
        Stop("grading", reverse("judging:feedback"), phone=True),
    ]
