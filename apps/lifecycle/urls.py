"""The lead's evaluation lifecycle pages, mounted under /evaluations/ (the evaluation
page itself, its keywords and metrics are apps.insights')."""

from django.urls import path

from . import keyword_views, views

app_name = "evaluations"

urlpatterns = [
    path("new/", views.evaluation_new, name="evaluation_new"),
    path("<int:evaluation_id>/edit/", views.evaluation_edit, name="evaluation_edit"),
    path("<int:evaluation_id>/keywords/add/", keyword_views.keywords_add_page, name="keywords_add"),
    path(
        "<int:evaluation_id>/keywords/<int:keyword_id>/edit/",
        keyword_views.keyword_edit_page,
        name="keyword_edit",
    ),
    path(
        "<int:evaluation_id>/keywords/<int:keyword_id>/remove/",
        keyword_views.keyword_remove_page,
        name="keyword_remove",
    ),
    path("<int:evaluation_id>/lifecycle/", views.evaluation_lifecycle, name="evaluation_lifecycle"),
    path("<int:evaluation_id>/start/", views.evaluation_start, name="evaluation_start"),
    path("<int:evaluation_id>/pause/", views.evaluation_pause, name="evaluation_pause"),
    path("<int:evaluation_id>/finish/", views.evaluation_finish, name="evaluation_finish"),
    path("<int:evaluation_id>/clone/", views.evaluation_clone, name="evaluation_clone"),
    path("<int:evaluation_id>/archive/", views.evaluation_archive, name="evaluation_archive"),
    path(
        "<int:evaluation_id>/stale/requeue/",
        views.evaluation_stale_requeue,
        name="evaluation_stale_requeue",
    ),
    path("<int:evaluation_id>/pin/", views.evaluation_pin, name="evaluation_pin"),
    path("<int:evaluation_id>/baseline/", views.evaluation_baseline, name="evaluation_baseline"),
    path("<int:evaluation_id>/delete/", views.evaluation_delete, name="evaluation_delete"),
]
