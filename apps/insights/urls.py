from django.urls import path

from . import views

urlpatterns = [
    path("evaluations/", views.evaluation_list, name="evaluation_list"),
    path("evaluations/import/", views.evaluation_import, name="evaluation_import"),
    path("evaluations/<int:evaluation_id>/", views.evaluation_detail, name="evaluation_detail"),
    path(
        "evaluations/<int:evaluation_id>/export/",
        views.evaluation_export,
        name="evaluation_export",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/",
        views.keyword_detail,
        name="keyword_detail",
    ),
]
