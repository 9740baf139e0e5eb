"""Scheduled runs: an evaluation's setup run again on a cron schedule, each run a new
evaluation compared, once finished, with the run before it and the team's baseline."""

from typing import Any

from django.conf import settings
from django.db import models

from apps.accounts.models import Team
from apps.evaluations.models import Evaluation
from apps.judges.models import Judge
from apps.tries.models import Try

from . import cron


class Schedule(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="schedules")
    name = models.CharField(max_length=100)
    # The setup each run copies: search model, keywords, scale, strategy, metrics, reuse.
    # Removed with its evaluation? The schedule stays, stopped, and says so.
    source = models.ForeignKey(Evaluation, null=True, on_delete=models.SET_NULL, related_name="+")
    # Wall-clock times in the team's time zone (Team.time_zone).
    cron = models.CharField(max_length=100)
    # An AI judge that grades each run beside people (optional).
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The smallest change that matters when a run is compared (the regression gate's).
    min_change = models.FloatField(default=0.0)
    active = models.BooleanField(default=True)
    # When beat next starts a run (UTC); None while stopped.
    next_run_at = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="schedule_unique_name"),
        ]
        indexes = [models.Index(fields=["active", "next_run_at"], name="schedule_due")]

    def __str__(self) -> str:
        return self.name

    @property
    def when_in_words(self) -> str:
        """ "Every Monday at 09:00 (Europe/Paris)"; the expression itself if it no longer
        reads (the service refuses such an expression, so only an older row can hold one)."""
        try:
            return cron.in_words(self.cron, self.team.time_zone)
        except cron.CronError:
            return self.cron


class RunState(models.TextChoices):
    TRYING = "trying", "Running the model"  # a gate's candidate: its try runs first
    STARTED = "started", "Running"  # its evaluation fetches, then is graded
    COMPARED = "compared", "Compared"
    FAILED = "failed", "Could not start"


class ScheduledRun(models.Model):
    """A run: an evaluation made to be compared once graded. A schedule's, or (schedule
    None) a candidate the regression gate started: a model run now against a baseline."""

    schedule = models.ForeignKey(
        Schedule, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    # The time the run stands for: once per schedule, so a beat sending twice, or two
    # beats, start it once.
    due_at = models.DateTimeField()
    by_hand = models.BooleanField(default=False)  # "Run now"
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A gate's candidate runs the model as a try; its evaluation is made when it is done.
    attempt = models.ForeignKey(
        Try, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    previous = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.STARTED)
    # What it is graded and compared with, copied from its schedule when it starts.
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    min_change = models.FloatField(default=0.0)
    judge_started = models.BooleanField(default=False)
    note = models.CharField(max_length=500, blank=True)
    # The gate's verdicts, against the previous run and the baseline.
    outcome = models.JSONField(default=dict, blank=True)
    regression = models.BooleanField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    compared_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-due_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["schedule", "due_at"], name="scheduled_run_once"),
        ]
        indexes = [models.Index(fields=["state"], name="scheduled_run_state")]

    def __str__(self) -> str:
        return f"run {self.id} at {self.due_at:%Y-%m-%d %H:%M}"

    @property
    def against_previous(self) -> dict[str, Any] | None:
        return self._verdict("previous run")

    @property
    def against_baseline(self) -> dict[str, Any] | None:
        return self._verdict("baseline")

    def _verdict(self, against: str) -> dict[str, Any] | None:
        comparisons = (self.outcome or {}).get("comparisons", [])
        return next((c for c in comparisons if c.get("against") == against), None)
