from django.urls import path

from . import calibration_views, call_log_views, panel_views, views

app_name = "judges"

urlpatterns = [
    path("judges/", views.judge_list, name="judge_list"),
    path("judges/new/", views.judge_create, name="judge_create"),
    path("judges/<int:judge_id>/edit/", views.judge_edit, name="judge_edit"),
    path("judges/<int:judge_id>/delete/", views.judge_delete, name="judge_delete"),
    path(
        "judges/<int:judge_id>/test-connection/",
        views.judge_test_connection,
        name="judge_test_connection",
    ),
    path("judges/panels/new/", panel_views.panel_create, name="panel_create"),
    path("judges/panels/<int:panel_id>/edit/", panel_views.panel_edit, name="panel_edit"),
    path("judges/prompts/", views.prompt_list, name="prompt_list"),
    path("judges/prompts/new/", views.prompt_create, name="prompt_create"),
    path("judges/prompts/<int:prompt_id>/", views.prompt_edit, name="prompt_edit"),
    path("judges/prompts/<int:prompt_id>/delete/", views.prompt_delete, name="prompt_delete"),
    path("judges/calibration/", calibration_views.gold_set_list, name="gold_set_list"),
    path("judges/calibration/gate/", calibration_views.gate_save, name="gate_save"),
    path(
        "judges/calibration/<int:gold_set_id>/",
        calibration_views.gold_set_detail,
        name="gold_set_detail",
    ),
    path(
        "judges/calibration/<int:gold_set_id>/delete/",
        calibration_views.gold_set_remove,
        name="gold_set_delete",
    ),
    path(
        "judges/calibration/<int:gold_set_id>/calibrate/",
        calibration_views.calibration_start,
        name="calibration_start",
    ),
    path("judges/runs/<int:run_id>/log/", call_log_views.run_calls, name="run_calls"),
    path(
        "judges/calibrations/<int:run_id>/log/",
        call_log_views.calibration_calls,
        name="calibration_calls",
    ),
    path(
        "judges/calibrations/<int:run_id>/calls/",
        calibration_views.calibration_call_log,
        name="calibration_call_log",
    ),
    path(
        "judges/calibrations/<int:run_id>/fit-weights/",
        calibration_views.calibration_fit_weights,
        name="calibration_fit_weights",
    ),
    path(
        "judges/calibrations/<int:run_id>/<slug:action>/",
        calibration_views.calibration_control,
        name="calibration_control",
    ),
    path(
        "evaluations/<int:evaluation_id>/judges/",
        views.judge_assign,
        name="judge_assign",
    ),
    path(
        "evaluations/<int:evaluation_id>/judges/chain/",
        views.chain_start,
        name="chain_start",
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
