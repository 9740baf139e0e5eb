"""The tries' pages: a search model's tries and the form that starts one, a try's page
with what a lead does with it, a try against any other try of the team, and query sets
sampled from a behaviour log."""

from django.urls import path

from . import sampling_views, views

app_name = "tries"

urlpatterns = [
    path("models/<int:model_id>/tries/", views.model_tries, name="model_tries"),
    path("tries/<int:try_id>/", views.try_detail, name="try_detail"),
    path("tries/<int:try_id>/progress/", views.try_progress, name="try_progress"),
    path("tries/<int:try_id>/notes/", views.try_notes, name="try_notes"),
    path("tries/<int:try_id>/fill/", views.try_fill, name="try_fill"),
    path("tries/<int:try_id>/send/", views.try_send, name="try_send"),
    path("tries/<int:try_id>/promote/", views.try_promote_view, name="try_promote"),
    path("tries/<int:try_id>/compare/", views.try_compare, name="try_compare"),
    path("tries/<int:try_id>/against/<int:other_id>/", views.try_against, name="try_against"),
    path("query-sets/sample/", sampling_views.sample_queries, name="sample_queries"),
    path("query-sets/<int:set_id>/sampled/", sampling_views.sampled_set, name="sampled_set"),
    path(
        "query-sets/<int:set_id>/new-evaluation/",
        sampling_views.query_set_evaluation_new,
        name="query_set_evaluation_new",
    ),
]
