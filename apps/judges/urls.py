from django.urls import path

from . import views

app_name = "judges"

urlpatterns = [
    path("judges/", views.judge_list, name="judge_list"),
    path("judges/new/", views.judge_create, name="judge_create"),
    path("judges/<int:judge_id>/edit/", views.judge_edit, name="judge_edit"),
    path("judges/<int:judge_id>/delete/", views.judge_delete, name="judge_delete"),
    path("judges/prompts/", views.prompt_list, name="prompt_list"),
    path("judges/prompts/new/", views.prompt_create, name="prompt_create"),
    path("judges/prompts/<int:prompt_id>/", views.prompt_edit, name="prompt_edit"),
    path("judges/prompts/<int:prompt_id>/delete/", views.prompt_delete, name="prompt_delete"),
    path(
        "evaluations/<int:evaluation_id>/judges/",
        views.judge_assign,
        name="judge_assign",
    ),
    path(
        "evaluations/<int:evaluation_id>/judges/panel/",
        views.evaluation_panel,
        name="evaluation_panel",
    ),
    path("judges/runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("judges/runs/<int:run_id>/calls/", views.run_call_log, name="run_call_log"),
    path("judges/runs/<int:run_id>/<slug:action>/", views.run_control, name="run_control"),
]
