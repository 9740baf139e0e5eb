"""The behaviour pages."""

from django.urls import path

from . import views

app_name = "behaviour"

urlpatterns = [
    path("behaviour/", views.log_list, name="log_list"),
    path("behaviour/<int:log_id>/", views.log_detail, name="log_detail"),
    path("behaviour/<int:log_id>/judgements/", views.judgements_make, name="judgements_make"),
    path(
        "behaviour/<int:log_id>/judgements/progress/",
        views.log_judgements,
        name="log_judgements",
    ),
    path("behaviour/<int:log_id>/delete/", views.log_delete, name="log_delete"),
    path(
        "evaluations/<int:evaluation_id>/clicks/",
        views.evaluation_clicks,
        name="evaluation_clicks",
    ),
]
