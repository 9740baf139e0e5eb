from django.urls import path

from . import rule_views, views

app_name = "sso"

urlpatterns = [
    path("sso/<slug:slug>/login/", views.sso_login, name="login"),
    path("sso/<slug:slug>/callback/", views.sso_callback, name="callback"),
    path("team/sign-on/", rule_views.sign_on, name="sign_on"),
    path(
        "team/sign-on/rules/<int:rule_id>/delete/", rule_views.rule_delete_view, name="rule_delete"
    ),
]
