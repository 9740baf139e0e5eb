from django.urls import path

from . import gate_views, views

app_name = "schedules"

urlpatterns = [
    path("schedules/", views.schedule_list, name="schedule_list"),
    path("schedules/time-zone/", views.time_zone_save, name="time_zone_save"),
    path("schedules/cron-words/", views.cron_words, name="cron_words"),
    path("schedules/<int:schedule_id>/", views.schedule_detail, name="schedule_detail"),
    path("schedules/<int:schedule_id>/run/", views.schedule_run_now, name="schedule_run_now"),
    path("schedules/<int:schedule_id>/delete/", views.schedule_delete, name="schedule_delete"),
    path("gate/", gate_views.gate_page, name="gate"),
    path("gate/run/", gate_views.gate_run, name="gate_run"),
]
