"""Signing in through an identity provider: /sso/<slug>/login/ sends the person there,
/sso/<slug>/callback/ brings them back. A refusal answers a page that says why (and the
log says it too); the person is never half signed in."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from apps.accounts.views import SIGN_OUT_URL_KEY

from .models import Protocol
from .oidc import Pending, SignInRefused, authorization, discovery_of, signed_in_claims
from .oidc import sign_out_url as provider_sign_out_url
from .providers import provider_named
from .provisioning import signed_in

logger = logging.getLogger(__name__)

PENDING_KEY = "sso_pending"
PENDING_SECONDS = 600  # a sign-in left at the provider longer than this starts again
MAX_PENDING = 5  # sign-ins begun in other tabs, the oldest dropped
MAX_PARAMETER = 2048


@require_GET
def sso_login(request: HttpRequest, slug: str) -> HttpResponse:
    provider = provider_named(slug)
    if provider is None:
        return _refused(request, "there is no such identity provider", status=404)
    if provider.protocol == Protocol.SAML:
        query = urlencode({"idp": provider.saml_entity_id, "next": _safe_next(request) or "/"})
        return HttpResponseRedirect(f"{reverse('sso:saml_login')}?{query}")
    try:
        discovery = discovery_of(provider)
    except SignInRefused as error:
        return _refused(request, str(error), provider_name=provider.name, status=502)
    url, pending = authorization(provider, discovery, _callback_url(request, slug))
    kept = [
        entry
        for entry in request.session.get(PENDING_KEY, [])
        if isinstance(entry, dict) and entry.get("started", 0) > time.time() - PENDING_SECONDS
    ][-(MAX_PENDING - 1) :]
    kept.append(
        {**asdict(pending), "provider": slug, "next": _safe_next(request), "started": time.time()}
    )
    request.session[PENDING_KEY] = kept
    return HttpResponseRedirect(url)


@require_GET
def sso_callback(request: HttpRequest, slug: str) -> HttpResponse:
    provider = provider_named(slug)
    if provider is None or provider.protocol != Protocol.OIDC:
        return _refused(request, "there is no such identity provider", status=404)
    entry = _pending_taken(request, slug, request.GET.get("state", "")[:MAX_PARAMETER])
    if entry is None:
        return _refused(
            request,
            "this sign-in is unknown, used already or too old (its state does not match); "
            "start again",
            provider_name=provider.name,
        )
    if "error" in request.GET:
        said = request.GET.get("error_description") or request.GET["error"]
        return _refused(request, f"the provider refused: {said[:300]}", provider_name=provider.name)
    code = request.GET.get("code", "")
    if not code or len(code) > MAX_PARAMETER:
        return _refused(request, "the provider sent no code back", provider_name=provider.name)
    pending = Pending(entry["state"], entry["nonce"], entry["code_verifier"])
    try:
        discovery = discovery_of(provider)
        claims, id_token = signed_in_claims(
            provider,
            discovery,
            code=code,
            pending=pending,
            redirect_uri=_callback_url(request, slug),
        )
        outcome = signed_in(provider, claims)
    except SignInRefused as error:
        return _refused(request, str(error), provider_name=provider.name)
    login(request, outcome.user, backend="apps.accounts.sessions.UserBackend")
    come_back_to = request.build_absolute_uri(reverse(settings.LOGIN_URL))
    at_provider = provider_sign_out_url(discovery, id_token=id_token, come_back_to=come_back_to)
    if at_provider:
        request.session[SIGN_OUT_URL_KEY] = at_provider
    logger.info(
        "single sign-on: %s through %s (joined %s, left %s)",
        outcome.user.email,
        provider.slug,
        outcome.joined or "no team",
        outcome.left or "no team",
    )
    return HttpResponseRedirect(entry.get("next") or reverse(settings.LOGIN_REDIRECT_URL))


def _pending_taken(request: HttpRequest, slug: str, state: str) -> dict[str, Any] | None:
    """The sign-in this state began, taken out of the session: a state works once."""
    entries = request.session.get(PENDING_KEY, [])
    for entry in entries:
        if (
            isinstance(entry, dict)
            and state
            and entry.get("state") == state
            and entry.get("provider") == slug
        ):
            request.session[PENDING_KEY] = [other for other in entries if other is not entry]
            if entry.get("started", 0) < time.time() - PENDING_SECONDS:
                return None
            return entry
    return None


def _safe_next(request: HttpRequest) -> str:
    """`next` when it leads back into Relevo; else nothing (no open redirect)."""
    wanted = request.GET.get("next", "")
    if len(wanted) <= MAX_PARAMETER and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return ""


def _callback_url(request: HttpRequest, slug: str) -> str:
    return request.build_absolute_uri(reverse("sso:callback", args=[slug]))


def _refused(
    request: HttpRequest, why: str, *, provider_name: str = "", status: int = 403
) -> HttpResponse:
    logger.warning("single sign-on refused (%s): %s", provider_name or "unknown provider", why)
    context = {"why": why, "provider_name": provider_name}
    return render(request, "sso/refused.html", context, status=status)
