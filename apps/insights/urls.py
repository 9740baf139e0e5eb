from django.urls import path

from . import decisive_views, live_views, views
from .agreement import views as agreement_views
from .comparison import views as comparison_views

app_name = "insights"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("evaluations/", views.evaluation_list, name="evaluation_list"),
    path("evaluations/plan/", views.evaluation_plan, name="evaluation_plan"),
    path("evaluations/<int:evaluation_id>/", views.evaluation_detail, name="evaluation_detail"),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/",
        views.keyword_detail,
        name="keyword_detail",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/explain/",
        views.keyword_explain,
        name="keyword_explain",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/notes/",
        views.keyword_notes_save,
        name="keyword_notes_save",
    ),
    path(
        "evaluations/<int:evaluation_id>/metrics/<int:metric_id>/pin/",
        views.metric_pin,
        name="metric_pin",
    ),
    path(
        "evaluations/<int:evaluation_id>/slots/<int:slot_id>/reset/",
        views.slot_reset,
        name="slot_reset",
    ),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
    path("models/<int:model_id>/history/", views.model_history, name="model_history"),
]

# Live pages' answers: /live/<topic kind>/<id>/ (apps.core.live.LIVE_PATH), so that a
# poll that finds nothing changed is answered before Django runs.
urlpatterns += [
    path(
        "live/evaluation/<int:evaluation_id>/", live_views.live_evaluation, name="live_evaluation"
    ),
    path(
        "live/evaluation/<int:evaluation_id>/disagreements/",
        live_views.live_disagreements,
        name="live_disagreements",
    ),
    path("live/team/<int:team_id>/dashboard/", live_views.live_dashboard, name="live_dashboard"),
]

# Agreement between graders and the lead's disagreement queue.
urlpatterns += [
    path(
        "evaluations/<int:evaluation_id>/agreement/",
        agreement_views.evaluation_agreement,
        name="evaluation_agreement",
    ),
    path(
        "evaluations/<int:evaluation_id>/disagreements/",
        agreement_views.disagreement_queue,
        name="disagreement_queue",
    ),
    path(
        "evaluations/<int:evaluation_id>/disagreements/<int:snapshot_id>/decide/",
        agreement_views.disagreement_decide,
        name="disagreement_decide",
    ),
    path(
        "evaluations/<int:evaluation_id>/disagreements/<int:snapshot_id>/clear/",
        agreement_views.disagreement_clear,
        name="disagreement_clear",
    ),
]

# Comparison of evaluations over their common keywords.
urlpatterns += [
    path(
        "evaluations/compare/",
        comparison_views.evaluation_comparison,
        name="evaluation_comparison",
    ),
    path(
        "evaluations/compare/export/",
        comparison_views.evaluation_comparison_export,
        name="evaluation_comparison_export",
    ),
    path(
        "evaluations/compare/keyword/",
        comparison_views.evaluation_comparison_keyword,
        name="evaluation_comparison_keyword",
    ),
]

# Judge what decides: the queue in decision order for a comparison (apps/judging/decisive.py).
urlpatterns += [
    path(
        "evaluations/<int:evaluation_id>/decisive-order/",
        decisive_views.decisive_order_page,
        name="decisive_order",
    ),
    path(
        "evaluations/<int:evaluation_id>/decisive-order/off/",
        decisive_views.decisive_order_off,
        name="decisive_order_off",
    ),
]
