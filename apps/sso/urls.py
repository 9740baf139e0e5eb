from django.urls import path

from . import rule_views, saml, views

app_name = "sso"

urlpatterns = [
    # SAML's own addresses first: "saml" is no provider's slug.
    path("sso/saml/login/", saml.SamlLogin.as_view(), name="saml_login"),
    path("sso/saml/acs/", saml.SamlAssertionConsumer.as_view(), name="saml_acs"),
    path("sso/saml/metadata/", saml.SamlMetadata.as_view(), name="saml_metadata"),
    path("sso/saml/ls/", saml.SamlLogoutService.as_view(), name="saml_logout_service"),
    path("sso/saml/sign-out/", saml.saml_sign_out, name="saml_sign_out"),
    path("sso/<slug:slug>/login/", views.sso_login, name="login"),
    path("sso/<slug:slug>/callback/", views.sso_callback, name="callback"),
    path("team/sign-on/", rule_views.sign_on, name="sign_on"),
    path(
        "team/sign-on/rules/<int:rule_id>/delete/", rule_views.rule_delete_view, name="rule_delete"
    ),
]
