"""The tables of judging. The grader's queue and the grade writer work on
evaluations.FeedbackSlot and evaluations.SnapshotSkip; a lead's decision on a snapshot
graders disagree on is judging's own."""

from django.conf import settings
from django.db import models

from apps.evaluations.models import Evaluation, Snapshot


class SnapshotDecision(models.Model):
    """A team lead's final grade for one snapshot, on the evaluation's native scale.

    It overrides stage 1 for the snapshot in the metrics pipeline (its value is this
    grade, transformed like a grade for metrics on other scales) until a lead changes or
    clears it. The graders' own grades are kept as they are.
    """

    snapshot = models.OneToOneField(Snapshot, on_delete=models.CASCADE, related_name="decision")
    # A copy of the snapshot's evaluation, so an evaluation's decisions are found without
    # joining through keywords.
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        # Made by the insights app before decisions joined the grade writer;
        # the table kept its name when the model moved.
        db_table = "insights_snapshotdecision"

    def __str__(self) -> str:
        return f"{self.snapshot_id} decided {self.grade}"


class DecisiveOrder(models.Model):
    """A lead's choice to order an evaluation's queue by what decides its comparison with
    a rival evaluation of the team on one additive metric (apps/judging/decisive.py):
    the unjudged results that can still change the verdict come first, for people and
    AI judges alike. Its absence is keyword order."""

    evaluation = models.OneToOneField(
        Evaluation, on_delete=models.CASCADE, primary_key=True, related_name="decisive_order"
    )
    # Deleting the rival deletes the option; the queue keeps the order last written.
    rival = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=16)
    k = models.PositiveSmallIntegerField()
    # A mean difference within this of 0 is "no difference that matters".
    min_change = models.FloatField(default=0.0)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.evaluation_id} ordered by its comparison with {self.rival_id}"
