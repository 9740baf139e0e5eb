"""Pages for people and teams: switcher, members, invitations, tags."""

from typing import Any

from django.contrib import messages
from django.contrib.auth import authenticate, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.core.mail import send_mail
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.core.errors import InvalidInput, RateLimited
from apps.core.ratelimit import client_address

from . import limits, lockout, services
from .api_tokens import api_token_create, api_token_revoke
from .decorators import lead_required, team_member_required
from .forms import (
    AcceptInvitationForm,
    ApiTokenForm,
    InviteForm,
    MembershipForm,
    PasswordResetForm,
    TagForm,
)
from .models import ApiToken, Invitation, Membership, Tag, User
from .requests import TeamRequest
from .selectors import SESSION_TEAM_KEY, evaluations_restricted_by, memberships_of


@require_POST
@team_member_required
def switch_team(request: TeamRequest) -> HttpResponse:
    team_id = request.POST.get("team")
    membership = next((m for m in memberships_of(request.user) if str(m.team_id) == team_id), None)
    if membership is None:
        raise Http404("Not one of your teams.")
    request.session[SESSION_TEAM_KEY] = membership.team_id
    return redirect("insights:dashboard")


def _form_errors(form: Form, error: InvalidInput) -> None:
    form.add_error(error.field if error.field in form.fields else None, error.message)


@lead_required
def members(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    form = InviteForm(request.POST or None, team=team)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            invitation, token = services.invitation_create(
                team=team,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                tags=form.cleaned_data["tags"],
                invited_by=request.user,
            )
        except InvalidInput as error:
            _form_errors(form, error)
        except RateLimited as error:
            form.add_error(None, error.message)
            status = 429
        else:
            link = request.build_absolute_uri(reverse("accounts:accept_invitation", args=[token]))
            send_mail(
                subject=f"You are invited to {team.name} on Relevo",
                message=f"{request.user} invited you to judge search results for {team.name}.\n\n"
                f"Join here: {link}\n\nThe link works for {services.INVITATION_DAYS} days.",
                from_email=None,
                recipient_list=[invitation.email],
            )
            messages.success(request, f"Invitation sent to {invitation.email}.")
            return redirect("accounts:members")
    memberships = (
        Membership.objects.filter(team=team)
        .select_related("user")
        .prefetch_related("tags")
        .order_by("user__email")
    )
    pending = Invitation.objects.filter(
        team=team, accepted_at__isnull=True, expires_at__gt=timezone.now()
    ).order_by("email")
    return render(
        request,
        "accounts/members.html",
        {"form": form, "team_memberships": memberships, "pending": pending},
        status=status,
    )


@lead_required
def member_edit(request: TeamRequest, membership_id: int) -> HttpResponse:
    team = request.membership.team
    membership = get_object_or_404(
        Membership.objects.select_related("user"), id=membership_id, team=team
    )
    initial = {"role": membership.role, "tags": membership.tags.all()}
    form = MembershipForm(request.POST or None, team=team, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.membership_update(
                membership=membership,
                role=form.cleaned_data["role"],
                tags=form.cleaned_data["tags"],
            )
        except InvalidInput as error:
            _form_errors(form, error)
        else:
            messages.success(request, f"Saved {membership.user.email}.")
            return redirect("accounts:members")
    return render(request, "accounts/member_edit.html", {"form": form, "member": membership})


@require_POST
@lead_required
def member_remove(request: TeamRequest, membership_id: int) -> HttpResponse:
    team = request.membership.team
    membership = get_object_or_404(
        Membership.objects.select_related("user"), id=membership_id, team=team
    )
    try:
        services.membership_remove(membership=membership)
    except InvalidInput as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Removed {membership.user.email} from the team.")
    return redirect("accounts:members")


@lead_required
def tags(request: TeamRequest) -> HttpResponse:
    team = request.membership.team
    form = TagForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.tag_save(team=team, **form.cleaned_data)
        except InvalidInput as error:
            _form_errors(form, error)
        else:
            messages.success(request, f"Added the tag {form.cleaned_data['name']}.")
            return redirect("accounts:tags")
    return render(
        request, "accounts/tags.html", {"form": form, "tags": Tag.objects.filter(team=team)}
    )


@lead_required
def tag_edit(request: TeamRequest, tag_id: int) -> HttpResponse:
    team = request.membership.team
    tag = get_object_or_404(Tag, id=tag_id, team=team)
    form = TagForm(request.POST or None, initial={"name": tag.name, "colour": tag.colour})
    if request.method == "POST" and form.is_valid():
        try:
            services.tag_save(team=team, tag=tag, **form.cleaned_data)
        except InvalidInput as error:
            _form_errors(form, error)
        else:
            messages.success(request, f"Saved the tag {tag.name}.")
            return redirect("accounts:tags")
    return render(request, "accounts/tag_edit.html", {"form": form, "tag": tag})


@require_POST
@lead_required
def tag_delete(request: TeamRequest, tag_id: int) -> HttpResponse:
    team = request.membership.team
    tag = get_object_or_404(Tag, id=tag_id, team=team)
    opened = evaluations_restricted_by(tag)
    if opened and request.POST.get("confirm") != "yes":
        # Deleting it would open these evaluations to graders who lack the tag: say so
        # and let the lead confirm, rather than widen who grades them silently.
        return render(request, "accounts/tag_delete_confirm.html", {"tag": tag, "opened": opened})
    tag.delete()
    messages.success(request, f"Deleted the tag {tag.name}.")
    return redirect("accounts:tags")


def accept_invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Join a team from the emailed link.

    Someone new chooses a password. Someone who has an account proves it is theirs: they
    are logged in as the invited address, or they type their password.
    """
    invitation = services.invitation_find(token=token)
    if invitation is None:
        return render(request, "accounts/invitation_invalid.html", status=404)
    existing = User.objects.filter(email=invitation.email).first()
    signed_in_as_invited = existing is not None and request.user == existing
    asks = "none" if signed_in_as_invited else ("current" if existing else "new")
    form = AcceptInvitationForm(
        request.POST or None, needs_password=asks != "none", validate_strength=asks == "new"
    )
    if request.method == "POST" and form.is_valid():
        password = form.cleaned_data["password"]
        if (
            asks == "current"
            and authenticate(request, username=invitation.email, password=password) is None
        ):
            form.add_error("password", "That is not the password of this account.")
        else:
            try:
                membership = services.invitation_accept(
                    token=token, password=password if asks == "new" else None
                )
            except InvalidInput as error:
                _form_errors(form, error)
            else:
                # Named: the first of AUTHENTICATION_BACKENDS is the lock-out guard,
                # which checks log-ins but cannot read a session's person back.
                login(request, membership.user, backend="apps.accounts.sessions.UserBackend")
                request.session[SESSION_TEAM_KEY] = membership.team_id
                messages.success(request, f"Welcome to {membership.team.name}.")
                return redirect("insights:dashboard")
    return render(
        request,
        "accounts/accept_invitation.html",
        {"form": form, "invitation": invitation, "asks": asks},
    )


@lead_required
def api_tokens(request: TeamRequest) -> HttpResponse:
    """The team's API tokens. A new token is shown once, on the page that created it."""
    team = request.membership.team
    form = ApiTokenForm(request.POST or None)
    created_text = None
    if request.method == "POST" and form.is_valid():
        try:
            _token, created_text = api_token_create(
                team=team,
                name=form.cleaned_data["name"],
                created_by=request.user,
            )
        except InvalidInput as error:
            _form_errors(form, error)
        else:
            form = ApiTokenForm()
    tokens = ApiToken.objects.filter(team=team).select_related("created_by")
    return render(
        request,
        "accounts/api_tokens.html",
        {"form": form, "tokens": tokens, "created_text": created_text},
    )


@require_POST
@lead_required
def api_token_revoke_view(request: TeamRequest, token_id: int) -> HttpResponse:
    team = request.membership.team
    token = get_object_or_404(ApiToken, id=token_id, team=team)
    api_token_revoke(token=token)
    messages.success(request, f"Revoked the token {token.name}: it no longer works.")
    return redirect("accounts:api_tokens")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's, with a limit on the mails (apps/accounts/limits.py)."""

    form_class = PasswordResetForm
    # Django's views name the next page without a namespace; ours are in "accounts".
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: Form) -> HttpResponse:
        email = form.cleaned_data["email"]
        if limits.password_reset_allowed(email=email, address=client_address(self.request)):
            return super().form_valid(form)
        # Over the limit: no mail, and the very page a sent mail leads to.
        return HttpResponseRedirect(self.get_success_url())


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's; a new password chosen from the emailed link also lifts a log-in
    lock-out of the account: whoever holds the mailbox is its owner."""

    success_url = reverse_lazy("accounts:password_reset_complete")

    def form_valid(self, form: "SetPasswordForm[User]") -> HttpResponse:
        response = super().form_valid(form)
        lockout.unlock(form.user.email)
        return response


# Where the identity provider signs the person out too, saved at a single sign-on.
SIGN_OUT_URL_KEY = "sign_out_url"


class LogoutView(auth_views.LogoutView):
    """Django's; after a single sign-on, on to the provider's sign-out as well. That is a
    page that goes there, not a redirect: the log-out form's page allows form
    submissions to Relevo only (its Content-Security-Policy), redirects included."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        at_provider = request.session.get(SIGN_OUT_URL_KEY)
        response = super().post(request, *args, **kwargs)
        if isinstance(at_provider, str) and at_provider.startswith(("https://", "http://")):
            return render(request, "registration/signing_out.html", {"at_provider": at_provider})
        return response
