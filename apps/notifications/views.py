"""The notifications page (each person's e-mail switches; the lead's webhooks and the
team's level) and a webhook's page (edit, new secret, send a test, the delivery log).
Everything is looked up inside the current team: another team's answers 404."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.decorators import lead_required, team_member_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.core.forms import saved_through

from . import services
from .forms import DisagreementLevelForm, EmailNoticeForm, WebhookForm
from .models import Delivery, Webhook

LOG_SHOWN = 50


def _posted(request: TeamRequest) -> QueryDict | None:
    """The form's data on any POST, even an empty one (every box of a form unticked)."""
    return request.POST if request.method == "POST" else None


def _webhook(request: TeamRequest, webhook_id: int) -> Webhook:
    return get_object_or_404(Webhook, id=webhook_id, team_id=request.membership.team_id)


@team_member_required
def overview(request: TeamRequest) -> HttpResponse:
    membership = request.membership
    email_form = EmailNoticeForm(
        _posted(request), initial={"events": services.email_events_of(membership)}
    )
    if request.method == "POST" and email_form.is_valid():
        services.email_events_set(
            membership=membership, events_on=email_form.cleaned_data["events"]
        )
        messages.success(request, "Saved your e-mail notifications.")
        return redirect("notifications:overview")
    context: dict[str, object] = {"email_form": email_form}
    if membership.can_manage:
        context["webhooks"] = Webhook.objects.filter(team_id=membership.team_id)
        context["level_form"] = DisagreementLevelForm(
            initial={"disagreement_level": services.disagreement_level_of(membership.team_id)}
        )
    return render(request, "notifications/overview.html", context)


@require_POST
@lead_required
def level_save(request: TeamRequest) -> HttpResponse:
    try:
        level = services.disagreement_level_set(
            team=request.membership.team, level=request.POST.get("disagreement_level", "")
        )
    except InvalidInput as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"The team is told past {level} disagreements.")
    return redirect("notifications:overview")


@lead_required
def webhook_create(request: TeamRequest) -> HttpResponse:
    form = WebhookForm(_posted(request))
    created = saved_through(
        form,
        lambda data: services.webhook_create(
            team=request.membership.team, created_by=request.user, **data
        ),
    )
    if created is not None:
        webhook, secret = created
        # Rendered, not redirected to: the secret is shown this once and kept nowhere.
        messages.success(request, f"Added the webhook {webhook.name}.")
        return _detail(request, webhook, new_secret=secret)
    return render(request, "notifications/webhook_form.html", {"form": form})


@lead_required
def webhook_detail(request: TeamRequest, webhook_id: int) -> HttpResponse:
    webhook = _webhook(request, webhook_id)
    form = WebhookForm(
        request.POST if request.method == "POST" else None, initial=_initial(webhook)
    )
    if saved_through(form, lambda data: services.webhook_update(webhook=webhook, **data)):
        messages.success(request, f"Saved the webhook {webhook.name}.")
        return redirect("notifications:webhook_detail", webhook.id)
    webhook.refresh_from_db()  # the page shows what is stored, not what was refused
    return _detail(request, webhook, form=form)


@require_POST
@lead_required
def webhook_test(request: TeamRequest, webhook_id: int) -> HttpResponse:
    webhook = _webhook(request, webhook_id)
    delivery = services.test_send(webhook=webhook, sent_by=request.user)
    delivery.refresh_from_db()
    messages.info(request, f"Sent a test: {_outcome(delivery)}.")
    return redirect("notifications:webhook_detail", webhook.id)


@require_POST
@lead_required
def secret_renew(request: TeamRequest, webhook_id: int) -> HttpResponse:
    webhook = _webhook(request, webhook_id)
    secret = services.secret_renew(webhook=webhook)
    messages.success(request, "Made a new signing secret; the old one signs nothing now.")
    return _detail(request, webhook, new_secret=secret)


@require_POST
@lead_required
def webhook_delete(request: TeamRequest, webhook_id: int) -> HttpResponse:
    webhook = _webhook(request, webhook_id)
    services.webhook_delete(webhook=webhook)
    messages.success(request, f"Removed the webhook {webhook.name}.")
    return redirect("notifications:overview")


def _detail(
    request: TeamRequest, webhook: Webhook, *, form: WebhookForm | None = None, new_secret: str = ""
) -> HttpResponse:
    context = {
        "webhook": webhook,
        "form": form or WebhookForm(initial=_initial(webhook)),
        "new_secret": new_secret,
        "deliveries": Delivery.objects.filter(webhook=webhook).defer("body")[:LOG_SHOWN],
    }
    return render(request, "notifications/webhook_detail.html", context)


def _initial(webhook: Webhook) -> dict[str, object]:
    return {
        "name": webhook.name,
        "events": webhook.events,
        "payload_format": webhook.payload_format,
        "active": webhook.active,
    }


def _outcome(delivery: Delivery) -> str:
    if delivery.status == "delivered":
        return f"delivered (HTTP {delivery.last_status_code})"
    if delivery.attempts == 0:
        return "queued; the log shows the answer once it is sent"
    return f"not delivered ({delivery.last_error}); tried again later"
