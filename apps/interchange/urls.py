"""The import and export pages, mounted at the site's root beside the evaluation pages."""

from django.urls import path

from . import views

app_name = "interchange"

urlpatterns = [
    path("evaluations/import/", views.evaluation_import, name="evaluation_import"),
    path(
        "evaluations/<int:evaluation_id>/export/",
        views.evaluation_export,
        name="evaluation_export",
    ),
]
