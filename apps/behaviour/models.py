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
    # What the log covers, as its timestamps say (texts as written: ISO 8601).
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


class ClickJudgementSet(models.Model):
    """Judgements a click model made from a behaviour log, kept in the team's library as
    a judgement list whose source is the clicks ("clicks: PBM, 2026-10-01 to
    2026-10-31"), with what made them: the log, the model, the minimum of impressions
    and the thresholds that turned estimates into grades (set by the lead, or fitted
    against people's grades)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    judgement_list = models.OneToOneField(
        "library.JudgementList", on_delete=models.CASCADE, related_name="click_origin"
    )
    # The log may be removed later; its name and dates stay with the judgements.
    log = models.ForeignKey(
        ClickLog, null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    log_name = models.CharField(max_length=200)
    model = models.CharField(max_length=8)
    min_impressions = models.PositiveIntegerField()
    # Ascending, one per grade above the lowest; null: a grade no estimate reaches.
    thresholds = models.JSONField()
    fitted_on = models.PositiveIntegerField(default=0)  # people's pairs; 0: the lead's
    fitted_agreement = models.FloatField(null=True, blank=True)
    estimated = models.PositiveIntegerField(default=0)  # pairs with any estimate
    too_thin = models.PositiveIntegerField(default=0)  # of those, below the minimum
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return str(self.judgement_list_id)


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ClickJudgementJob(models.Model):
    """A lead's request to make judgements from a log, run on a worker because a big
    log's fit and store outlast a request (click_job_running.py): the checked settings,
    where it stands, and the judgements it made or why it made none."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    log = models.ForeignKey(ClickLog, on_delete=models.CASCADE, related_name="jobs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # As checked when asked: model, scale, min_impressions, thresholds (null: fitted), name.
    settings = models.JSONField()
    status = models.CharField(max_length=8, choices=JobStatus.choices, default=JobStatus.QUEUED)
    problems = models.JSONField(default=list, blank=True)  # why it failed, field first
    result = models.ForeignKey(
        ClickJudgementSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When its task was last queued: the sweep queues again a job nobody started.
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    # A running job's worker writes this every few seconds; when it stops, the worker died.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # How many workers took it: each knows its number, and only the last may finish it.
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status"], name="click_job_status")]

    def __str__(self) -> str:
        return f"{self.log_id}: {self.status}"
