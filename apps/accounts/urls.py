from django.contrib.auth import views as auth_views
from django.urls import path

from apps.core.favicon import favicon

from . import views
from .forms import LoginForm

app_name = "accounts"

urlpatterns = [
    # Browsers ask for it at the site's root whatever a page links.
    path("favicon.ico", favicon, name="favicon"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=LoginForm),
        name="login",
    ),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password-reset/",
        views.PasswordResetView.as_view(),
        name="password_reset",
    ),
    path(
        "accounts/password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("invitations/<str:token>/", views.accept_invitation, name="accept_invitation"),
    path("team/switch/", views.switch_team, name="switch_team"),
    path("team/members/", views.members, name="members"),
    path("team/members/<int:membership_id>/", views.member_edit, name="member_edit"),
    path("team/members/<int:membership_id>/remove/", views.member_remove, name="member_remove"),
    path("team/api-tokens/", views.api_tokens, name="api_tokens"),
    path(
        "team/api-tokens/<int:token_id>/revoke/",
        views.api_token_revoke_view,
        name="api_token_revoke",
    ),
    path("team/tags/", views.tags, name="tags"),
    path("team/tags/<int:tag_id>/", views.tag_edit, name="tag_edit"),
    path("team/tags/<int:tag_id>/delete/", views.tag_delete, name="tag_delete"),
]
