"""What a team is told, and where: its webhooks, each delivery's log, and each person's
e-mail switches. The events themselves are events.py's."""

from django.conf import settings
from django.db import models

from apps.accounts.models import Membership, Team


class Event(models.TextChoices):
    """What Relevo announces. The value is the name a receiver reads in the payload."""

    EVALUATION_FINISHED = "evaluation.finished", "An evaluation finished"
    RUN_COMPARED = "schedule.run_compared", "A scheduled run was compared"
    REGRESSION_FOUND = "regression.found", "A regression was found"
    JUDGE_RUN_FAILED = "judge_run.failed", "An AI judge run stopped on a failure"
    DISAGREEMENTS_ABOVE_LEVEL = (
        "disagreements.above_level",
        "An evaluation's disagreement queue went above the team's level",
    )
    TEST = "test", "A test sent from the webhook's page"


# The events a webhook or a person may subscribe to (a test is sent by hand, to one hook).
SUBSCRIBABLE = [event for event in Event if event is not Event.TEST]


class PayloadFormat(models.TextChoices):
    RELEVO = "relevo", "Relevo JSON (event, summary, data)"
    SLACK = "slack", "Slack-compatible (text), for an incoming webhook of Slack, Mattermost…"


class Webhook(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="webhooks")
    name = models.CharField(max_length=100)
    # The URL is encrypted too (apps.core.secrets): a Slack or Teams webhook URL is
    # itself the credential. Pages show `url_shown`, its scheme and host.
    url_encrypted = models.TextField()
    url_shown = models.CharField(max_length=300)
    events = models.JSONField(default=list)  # Event values
    payload_format = models.CharField(
        max_length=10, choices=PayloadFormat.choices, default=PayloadFormat.RELEVO
    )
    # The signing secret, encrypted (apps.core.secrets); shown once, when it is made.
    secret_encrypted = models.TextField()
    secret_hint = models.CharField(max_length=16)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="webhook_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Gave up"


class Delivery(models.Model):
    """One event sent to one webhook: the exact body (a retry sends the same bytes, so
    the same signature), every attempt counted, the last answer kept for the log."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=Event.choices)
    body = models.TextField()
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
            models.Index(fields=["webhook", "-created_at"], name="delivery_log"),
        ]

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id} ({self.status})"


class EmailNotice(models.Model):
    """A person's switch: e-mail me when this event happens in this team."""

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="+")
    event = models.CharField(max_length=40, choices=Event.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["membership", "event"], name="email_notice_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.event} by e-mail for membership {self.membership_id}"


# A team that never set its level is told once more than this many results of one
# evaluation await a lead's decision.
DEFAULT_DISAGREEMENT_LEVEL = 20


class TeamNotifications(models.Model):
    """A team's notification settings: how long a disagreement queue may grow before the
    team is told."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="+")
    disagreement_level = models.PositiveIntegerField(default=DEFAULT_DISAGREEMENT_LEVEL)

    def __str__(self) -> str:
        return f"notifications of team {self.team_id}"


class Standing(models.Model):
    """A condition the team was told about and that still holds (an evaluation's
    disagreement queue above the level): while it stands, it is not told again."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=100)
    since = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="standing_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.key} in team {self.team_id}"
