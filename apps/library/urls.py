"""The judgement library's pages."""

from django.urls import path

from . import views

app_name = "library"

urlpatterns = [
    path("library/", views.library, name="library"),
    path("library/export/", views.library_export, name="library_export"),
    path("library/import/", views.list_import, name="list_import"),
    path("library/lists/<int:list_id>/delete/", views.list_delete, name="list_delete"),
]
