from django.urls import path

from . import views

app_name = "notifications"

urlpatterns = [
    path("notifications/", views.overview, name="overview"),
    path("notifications/level/", views.level_save, name="level_save"),
    path("notifications/webhooks/new/", views.webhook_create, name="webhook_create"),
    path("notifications/webhooks/<int:webhook_id>/", views.webhook_detail, name="webhook_detail"),
    path("notifications/webhooks/<int:webhook_id>/test/", views.webhook_test, name="webhook_test"),
    path(
        "notifications/webhooks/<int:webhook_id>/secret/", views.secret_renew, name="secret_renew"
    ),
    path(
        "notifications/webhooks/<int:webhook_id>/delete/",
        views.webhook_delete,
        name="webhook_delete",
    ),
]
