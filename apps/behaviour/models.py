"""A team's behaviour logs, kept as the counts the click models read: impressions and
clicks per query, document and rank, and whole sessions (documents shown from rank 1,
which were clicked) with how many times each was seen. The events themselves are not
kept: ten million of them fold into far fewer rows."""

from django.conf import settings
from django.db import models

from apps.accounts.models import Team


class LogFormat(models.TextChoices):
    UBI = "ubi", "User Behavior Insights (JSON Lines)"
    CSV = "csv", "CSV click log"


class ClickLog(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="click_logs")
    name = models.CharField(max_length=200)
    file_format = models.CharField(max_length=8, choices=LogFormat.choices)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)
    # What the log covers, as its timestamps say (texts as written: ISO 8601 in UBI).
    first_event_at = models.CharField(max_length=64, blank=True)
    last_event_at = models.CharField(max_length=64, blank=True)
    lines_read = models.PositiveBigIntegerField(default=0)
    events_read = models.PositiveBigIntegerField(default=0)
    clicks = models.PositiveBigIntegerField(default=0)
    query_count = models.PositiveIntegerField(default=0)
    # What could not be read: all counted, the first hundred kept ("line 12: not JSON").
    problem_count = models.PositiveBigIntegerField(default=0)
    problems = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-imported_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="click_log_name_once"),
        ]

    def __str__(self) -> str:
        return self.name


class ClickCount(models.Model):
    log = models.ForeignKey(ClickLog, on_delete=models.CASCADE, related_name="counts")
    query = models.CharField(max_length=500)
    doc_id = models.CharField(max_length=500)
    rank = models.PositiveIntegerField()
    impressions = models.PositiveBigIntegerField()
    clicks = models.PositiveBigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["log", "query"], name="click_count_log_query")]

    def __str__(self) -> str:
        return f"{self.query} / {self.doc_id} @ {self.rank}"


class SessionPattern(models.Model):
    log = models.ForeignKey(ClickLog, on_delete=models.CASCADE, related_name="sessions")
    query = models.CharField(max_length=500)
    docs = models.JSONField()  # shown from rank 1
    clicks = models.JSONField()  # 0 or 1 per document shown
    count = models.PositiveBigIntegerField()

    def __str__(self) -> str:
        return f"{self.query}: {self.count}"
