from django.urls import path

from . import views

app_name = "endpoints"

urlpatterns = [
    path("endpoints/", views.endpoint_list, name="endpoint_list"),
    path("endpoints/new/", views.endpoint_create, name="endpoint_create"),
    path("endpoints/<int:endpoint_id>/", views.endpoint_detail, name="endpoint_detail"),
    path("endpoints/<int:endpoint_id>/edit/", views.endpoint_edit, name="endpoint_edit"),
    path("endpoints/<int:endpoint_id>/delete/", views.endpoint_delete, name="endpoint_delete"),
    path("models/", views.model_list, name="search_model_list"),
    path("models/new/", views.model_create, name="search_model_create"),
    path("models/<int:model_id>/", views.model_detail, name="search_model_detail"),
    path("models/<int:model_id>/edit/", views.model_edit, name="search_model_edit"),
    path("models/<int:model_id>/delete/", views.model_delete, name="search_model_delete"),
    path("models/<int:model_id>/test/", views.model_test, name="search_model_test"),
]
