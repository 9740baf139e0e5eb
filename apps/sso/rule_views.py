"""The team's sign-on page (Team ▸ Single sign-on): the rules that turn a provider's
groups into members, for the owner to write, and whether members must use them."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required
from apps.accounts.models import Role
from apps.accounts.requests import TeamRequest
from apps.core.forms import saved_through

from .forms import RequiredForm, RuleForm
from .models import SignOnRule
from .providers import provider_choices
from .rules import rule_add, rule_delete, rule_members, sso_required_set


@lead_required
def sign_on(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    providers = provider_choices()
    is_owner = request.membership.role == Role.OWNER
    posted = request.POST if request.method == "POST" else None
    if posted is not None and not is_owner:
        raise PermissionDenied
    adding = posted is not None and "rule-group" in posted
    rule_form = RuleForm(posted if adding else None, providers=providers, prefix="rule")
    required_form = RequiredForm(
        posted if posted is not None and not adding else None,
        initial={"sso_required": team.sso_required},
    )
    if adding:
        added = saved_through(
            rule_form, lambda data: rule_add(team=team, user=request.user, **data)
        )
        if added is not None:
            messages.success(
                request, f"Members of {added.group} now join as {added.get_role_display()}."
            )
            return redirect("sso:sign_on")
    elif posted:
        saved = saved_through(
            required_form,
            lambda data: sso_required_set(team=team, required=data["sso_required"]),
        )
        if saved is not None:
            messages.success(request, "Saved.")
            return redirect("sso:sign_on")
    names = dict(providers)
    rules = [
        (rule, names.get(rule.provider, f"{rule.provider} (not set up)"))
        for rule in SignOnRule.objects.filter(team=team)
    ]
    context = {
        "providers": providers,
        "rules": rules,
        "rule_form": rule_form,
        "required_form": required_form,
        "is_owner": is_owner,
        "granted": rule_members(team),
    }
    return render(request, "sso/sign_on.html", context)


@require_POST
@lead_required
def rule_delete_view(request: TeamRequest, rule_id: int) -> HttpResponse:
    if request.membership.role != Role.OWNER:
        raise PermissionDenied
    rule = get_object_or_404(SignOnRule, id=rule_id, team=request.membership.team)
    rule_delete(rule=rule)
    messages.success(
        request, f"The rule for {rule.group} is gone; its members leave at their next sign-in."
    )
    return redirect("sso:sign_on")
